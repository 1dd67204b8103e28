// pm_sampler_impl (internal): what the files of PmSampler (pm_sampler.hpp) share.
//   pm_sampler.cpp           start/stop (driver, devices, threads), the session record, messages
//   pm_sampler_device.cpp    one device: chip, counter availability, the one-pass metric set,
//                            arm (Enable, SetConfig, images, Start), restart, stop
//   pm_sampler_decode.cpp    the decoder thread: DecodeData into spare images, overflow, duty
//   pm_sampler_evaluate.cpp  the evaluator thread: samples of filled images -> log records
// Locking: Impl::mutex guards the writer, the devices' spare images and the filled queue
// between the two threads and stop(); CUPTI calls that take long run without it.
#pragma once

#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collect/pm_sampler.hpp"
#include "core/event_log_format.hpp"
#include "store/event_log_writer.hpp"

namespace gpuscope::collect::detail::pm {

struct CuptiFailure {
  std::string call;
  CUptiResult status;
};

inline void must(CUptiResult status, const char* call) {
  if (status != CUPTI_SUCCESS) throw CuptiFailure{call, status};
}

inline std::uint64_t now_ns() {
  std::uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

// One sampled device.
struct Device {
  int index = 0;
  std::string chip;
  std::string name;
  std::uint8_t uuid[16] = {};
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_PmSampling_Object* sampler = nullptr;
  std::vector<std::uint8_t> availability;
  std::vector<std::uint8_t> config;              // alive while sampling: CUPTI keeps the pointer
  std::size_t image_bytes = 0;                   // size of every counter-data image (0: none made yet)
  std::vector<std::vector<std::uint8_t>> spare;  // initialized images for the decoder (Impl::mutex)
  bool fresh = true;                             // next image decoded is the first after a (re)start
  bool drop_next = false;                        // evaluator: drop the next sample (the first after a start)
  std::vector<std::string> metrics;
  std::vector<const char*> metric_ptrs;
  std::uint64_t samples = 0;
  std::uint64_t overflows = 0;
  std::uint64_t decodes = 0, incomplete = 0, unreadable = 0, out_of_order = 0, image_full = 0;  // GPUSCOPE_VERBOSE
  std::uint64_t evaluator_behind = 0, outliers = 0;                                             // GPUSCOPE_VERBOSE
  std::uint64_t decode_ns = 0, evaluate_ns = 0, reset_ns = 0;                                   // GPUSCOPE_VERBOSE
  std::uint64_t first_sample_start = 0;  // raw CUPTI sample timestamp of the first sample kept
  std::uint64_t last_end = 0;            // raw end of the last sample kept (drops repeats)
  std::uint64_t start_cpu_ns = 0;        // CUPTI clock just before Start
  bool started = false;
  bool paused = false;  // duty_ms: stopped for the off half of the period
  bool failed = false;  // sampling ended for good
};

void host_deinit(CUpti_Profiler_Host_Object*& host);

}  // namespace gpuscope::collect::detail::pm

namespace gpuscope::collect {

struct PmSampler::Impl {
  using Device = detail::pm::Device;
  static constexpr int kImages = 4;  // counter data images per device
  PmSamplerOptions options;
  std::vector<std::unique_ptr<Device>> devices;
  store::EventLogWriter writer;     // decode thread (start/stop aside)
  std::mutex mutex;                 // writer and devices between the thread and stop()
  std::condition_variable cv;       // wakes the decoder (stopping)
  std::condition_variable eval_cv;  // wakes the evaluator (an image filled, or the decoder done)
  bool stopping = false;
  bool decoder_done = false;
  bool stopped = false;   // stop() has run
  std::thread thread;     // decoder: cuptiPmSamplingDecodeData into spare images
  std::thread evaluator;  // samples of filled images -> log records, images back to spare
  // An image the decoder filled, for the evaluator.
  struct Filled {
    Device* device;
    CUpti_PmSampling_Object* sampler;
    std::vector<std::uint8_t> image;
    bool drop_first;  // its first sample spans a (re)start: an outlier (CUPTI docs)
  };
  std::deque<Filled> filled;
  std::atomic<std::uint64_t> samples{0};
  std::int64_t clock_offset_ns = 0;
  std::vector<double> values;

  // pm_sampler.cpp
  void message(log::Severity severity, const std::string& text);
  void write_session(const Device& d);
  // pm_sampler_device.cpp
  void start_device(Device& d, std::vector<std::string>* messages);  // throws CuptiFailure
  void arm(Device& d);                                               // throws CuptiFailure
  bool restart(Device& d);  // Stop + Start after an overflow; false when the device cannot go on
  void stop_device(Device& d);
  static void reset_image(CUpti_PmSampling_Object* sampler, std::vector<std::uint8_t>& image);
  // pm_sampler_decode.cpp: the decoder thread.
  void run();
  bool decode(Device& d, std::unique_lock<std::mutex>& lock);
  void apply_duty(std::unique_lock<std::mutex>& lock);
  // pm_sampler_evaluate.cpp: the evaluator thread.
  void evaluate_loop();
  void encode_samples(Device& d, Filled& f, std::size_t completed, std::vector<char>& batch);
};

}  // namespace gpuscope::collect
