#include "collect/pm_sampler.hpp"

#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "collect/cupti_params.hpp"
#include "collect/metric_catalog.hpp"
#include "core/event_log_format.hpp"
#include "core/gpu_metrics.hpp"
#include "store/event_log_writer.hpp"

#include <unistd.h>

namespace gpuscope::collect {
namespace {

// The few driver entry points the launcher needs; gpuscope does not link libcuda.
struct Driver {
  using Init = int (*)(unsigned);
  using GetCount = int (*)(int*);
  using Get = int (*)(int*, int);
  using GetName = int (*)(char*, int, int);
  using GetUuid = int (*)(unsigned char*, int);
  Init init = nullptr;
  GetCount get_count = nullptr;
  Get get = nullptr;
  GetName get_name = nullptr;
  GetUuid get_uuid = nullptr;

  bool load(std::string* why) {
    void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) {
      *why = "no NVIDIA driver (libcuda.so.1 not found)";
      return false;
    }
    init = reinterpret_cast<Init>(::dlsym(lib, "cuInit"));
    get_count = reinterpret_cast<GetCount>(::dlsym(lib, "cuDeviceGetCount"));
    get = reinterpret_cast<Get>(::dlsym(lib, "cuDeviceGet"));
    get_name = reinterpret_cast<GetName>(::dlsym(lib, "cuDeviceGetName"));
    get_uuid = reinterpret_cast<GetUuid>(::dlsym(lib, "cuDeviceGetUuid_v2"));
    if (get_uuid == nullptr) get_uuid = reinterpret_cast<GetUuid>(::dlsym(lib, "cuDeviceGetUuid"));
    if (init == nullptr || get_count == nullptr || get == nullptr) {
      *why = "libcuda.so.1 lacks cuInit/cuDeviceGetCount";
      return false;
    }
    if (const int r = init(0); r != 0) {
      *why = "cuInit failed with CUresult " + std::to_string(r);
      return false;
    }
    return true;
  }
};

struct CuptiFailure {
  std::string call;
  CUptiResult status;
};

void must(CUptiResult status, const char* call) {
  if (status != CUPTI_SUCCESS) throw CuptiFailure{call, status};
}

std::uint64_t now_ns() {
  std::uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

std::string todo_for(CUptiResult status) {
  switch (status) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return "GPU performance counters are restricted to administrators on this machine: run as root, or "
             "load the driver with NVreg_RestrictProfilingToAdminUsers=0 "
             "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
    case CUPTI_ERROR_HARDWARE_BUSY:
      return "another tool holds the GPU's counters (ncu, nsys --gpu-metrics, DCGM profiling, another "
             "gpuscope --gpu-metrics): stop it, or trace without --gpu-metrics";
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      return "PM sampling is not available on a MIG instance: trace without --gpu-metrics";
    case CUPTI_ERROR_NOT_SUPPORTED:
      return "this GPU or driver does not support PM sampling (CUPTI needs compute capability 7.5+, and "
             "time-interval sampling needs GA10x or later): trace without --gpu-metrics";
    default:
      return "trace without --gpu-metrics, and report this line";
  }
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

void host_deinit(CUpti_Profiler_Host_Object*& host) {
  if (host == nullptr) return;
  auto p = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
  p.pHostObject = host;
  cuptiProfilerHostDeinitialize(&p);
  host = nullptr;
}

void host_init(Device& d) {
  host_deinit(d.host);
  auto p = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
  p.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  p.pChipName = d.chip.c_str();
  p.pCounterAvailabilityImage = d.availability.data();
  must(cuptiProfilerHostInitialize(&p), "cuptiProfilerHostInitialize");
  d.host = p.pHostObject;
}

// Config image for d.metrics; returns its passes (0 = a name was refused).
std::size_t try_config(Device& d) {
  host_init(d);
  d.metric_ptrs.clear();
  for (const std::string& m : d.metrics) d.metric_ptrs.push_back(m.c_str());
  try {
    ConfigImage img = build_config_image(d.host, d.metric_ptrs);
    d.config = std::move(img.image);
    return img.passes;
  } catch (const MetricCatalogError&) {
    return 0;
  }
}

// The metrics this device takes in one pass: names it refuses alone are dropped, then
// optional metrics from the end, then any from the end. Dropped names go in *dropped.
void choose_metrics(Device& d, std::vector<std::string>* dropped) {
  std::vector<std::string> valid;
  const std::vector<std::string> wanted = d.metrics;
  for (const std::string& m : wanted) {
    d.metrics = {m};
    if (try_config(d) == 1) {
      valid.push_back(m);
    } else {
      dropped->push_back(m);
    }
  }
  d.metrics = valid;
  if (d.metrics.empty())
    throw CuptiFailure{"cuptiProfilerHostConfigAddMetrics (no metric accepted)", CUPTI_ERROR_NOT_SUPPORTED};
  while (try_config(d) != 1) {
    // Drop the last optional metric, else the last one.
    std::size_t victim = d.metrics.size() - 1;
    for (std::size_t i = d.metrics.size(); i-- > 0;) {
      const auto def = core::gpu_metric_def(d.metrics[i]);
      if (def && def->optional) {
        victim = i;
        break;
      }
    }
    dropped->push_back(d.metrics[victim]);
    d.metrics.erase(d.metrics.begin() + static_cast<std::ptrdiff_t>(victim));
    if (d.metrics.empty())
      throw CuptiFailure{"cuptiProfilerHostGetNumOfPasses (no one-pass set)", CUPTI_ERROR_NOT_SUPPORTED};
  }
  d.metric_ptrs.clear();
  for (const std::string& m : d.metrics) d.metric_ptrs.push_back(m.c_str());
}

}  // namespace

struct PmSampler::Impl {
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

  void message(log::Severity severity, const std::string& text) {
    log::MessageRecord r{};
    r.ts_ns = now_ns();
    r.text_string = writer.intern(text);
    r.severity = static_cast<std::uint8_t>(severity);
    writer.add(log::RecordKind::kMessage, r);
  }

  void write_session(const Device& d) {
    std::vector<char> payload(sizeof(log::GpuMetricsSessionRecord) + d.metrics.size() * sizeof(std::uint64_t));
    log::GpuMetricsSessionRecord s{};
    s.start_ns = d.start_cpu_ns;
    s.interval_ns = options.interval_ns;
    s.chip_string = writer.intern(d.chip);
    s.device_name_string = writer.intern(d.name);
    std::memcpy(s.uuid, d.uuid, sizeof s.uuid);
    s.clock_offset_ns = clock_offset_ns;
    s.hardware_buffer_bytes = options.hardware_buffer_bytes;
    s.device_id = static_cast<std::uint32_t>(d.index);
    s.metric_count = static_cast<std::uint32_t>(d.metrics.size());
    std::memcpy(payload.data(), &s, sizeof s);
    for (std::size_t i = 0; i < d.metrics.size(); ++i) {
      const std::uint64_t id = writer.intern(d.metrics[i]);
      std::memcpy(payload.data() + sizeof s + i * sizeof id, &id, sizeof id);
    }
    writer.add_raw(log::RecordKind::kGpuMetricsSession, payload.data(), static_cast<std::uint32_t>(payload.size()));
  }

  // An image emptied for the next decode (cuptiPmSamplingCounterDataImageInitialize).
  static void reset_image(CUpti_PmSampling_Object* sampler, std::vector<std::uint8_t>& image) {
    auto ini = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_CounterDataImage_Initialize_Params);
    ini.pPmSamplingObject = sampler;
    ini.counterDataSize = image.size();
    ini.pCounterData = image.data();
    must(cuptiPmSamplingCounterDataImageInitialize(&ini), "cuptiPmSamplingCounterDataImageInitialize");
  }

  // Decodes what the hardware buffer holds into spare images and hands them to the evaluator
  // (decoder thread; `lock` holds mutex, released around DecodeData). Returns false on a CUPTI
  // error.
  bool decode(Device& d, std::unique_lock<std::mutex>& lock) {
    for (int round = 0; round < 64; ++round) {
      if (d.spare.empty()) {  // the evaluator is behind: the hardware buffer keeps the records
        ++d.evaluator_behind;
        break;
      }
      std::vector<std::uint8_t> image = std::move(d.spare.back());
      d.spare.pop_back();
      auto dec = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_DecodeData_Params);
      dec.pPmSamplingObject = d.sampler;
      dec.pCounterDataImage = image.data();
      dec.counterDataImageSize = image.size();
      lock.unlock();
      const std::uint64_t t0 = now_ns();
      const CUptiResult r = cuptiPmSamplingDecodeData(&dec);
      const std::uint64_t t1 = now_ns();
      lock.lock();
      d.decode_ns += t1 - t0;
      ++d.decodes;
      const bool overflow = r == CUPTI_ERROR_OUT_OF_MEMORY || dec.overflow != 0;
      if (r != CUPTI_SUCCESS && !overflow) {
        d.spare.push_back(std::move(image));
        message(log::Severity::kWarning, "GPU metrics: cuptiPmSamplingDecodeData on device " + std::to_string(d.index) +
                                             " failed: " + cupti_status_text(r) +
                                             "; sampling of this device ends here");
        return false;
      }
      filled.push_back(Filled{&d, d.sampler, std::move(image), d.fresh});
      d.fresh = false;
      eval_cv.notify_one();
      if (overflow) {
        ++d.overflows;
        log::DataLossRecord loss{};
        loss.ts_ns = now_ns();
        loss.count = 1;
        loss.what_string = writer.intern("gpu_metrics_overflow");
        loss.context_id = static_cast<std::uint32_t>(d.index);
        loss.stream_id = 0xffffffffu;
        writer.add(log::RecordKind::kDataLoss, loss);
        // The hardware buffer keeps its oldest records and takes no new ones once full:
        // sampling goes on only after a restart (the gap shows in the samples' times).
        return restart(d);
      }
      if (dec.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) break;
      ++d.image_full;  // more records wait: decode on into the next spare image
    }
    return true;
  }

  // Evaluator thread: each filled image's completed samples become GpuMetricSampleRecords.
  void evaluate_loop() {
    std::unique_lock lock(mutex);
    std::vector<char> batch;
    for (;;) {
      eval_cv.wait(lock, [&] { return !filled.empty() || decoder_done; });
      if (filled.empty()) break;
      Filled f = std::move(filled.front());
      filled.pop_front();
      Device& d = *f.device;
      lock.unlock();
      batch.clear();
      const std::uint64_t t0 = now_ns();
      auto info = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_GetCounterDataInfo_Params);
      info.pCounterDataImage = f.image.data();
      info.counterDataImageSize = f.image.size();
      if (cuptiPmSamplingGetCounterDataInfo(&info) == CUPTI_SUCCESS) {
        d.incomplete += info.numPopulatedSamples - info.numCompletedSamples;
        encode_samples(d, f, info.numCompletedSamples, batch);
      }
      const std::uint64_t t1 = now_ns();
      bool reset_ok = true;
      try {
        reset_image(f.sampler, f.image);
      } catch (const CuptiFailure&) {
        reset_ok = false;
      }
      d.evaluate_ns += t1 - t0;
      d.reset_ns += now_ns() - t1;
      lock.lock();
      for (std::size_t at = 0; at + sizeof(log::RecordHeader) <= batch.size();) {  // the encoded records
        log::RecordHeader h{};
        std::memcpy(&h, batch.data() + at, sizeof h);
        writer.add_raw(log::RecordKind::kGpuMetricSample, batch.data() + at + sizeof h, h.size);
        at += sizeof h + h.size;
      }
      if (reset_ok) d.spare.push_back(std::move(f.image));
      if (writer.pending_bytes() > (1u << 20)) writer.flush();
    }
    writer.flush();
  }

  // The completed samples of f.image as encoded records appended to `batch` (evaluator
  // thread, mutex not held).
  void encode_samples(Device& d, Filled& f, std::size_t completed, std::vector<char>& batch) {
    if (f.drop_first) d.drop_next = true;
    values.assign(d.metrics.size(), 0.0);
    for (std::size_t i = 0; i < completed; ++i) {
      auto si = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_CounterData_GetSampleInfo_Params);
      si.pPmSamplingObject = f.sampler;
      si.pCounterDataImage = f.image.data();
      si.counterDataImageSize = f.image.size();
      si.sampleIndex = i;
      if (cuptiPmSamplingCounterDataGetSampleInfo(&si) != CUPTI_SUCCESS) {
        ++d.unreadable;
        continue;
      }
      // The first sample after a (re)start spans the set-up: an outlier (CUPTI docs; seen on
      // H200: 735 ms long, starting before sampling did). The first image may have no sample
      // yet, so the drop waits for the first one. Any sample over 4 intervals is one too.
      if (d.drop_next || si.endTimestamp - si.startTimestamp > 4 * options.interval_ns) {
        d.drop_next = false;
        d.last_end = std::max(d.last_end, si.endTimestamp);
        ++d.outliers;
        continue;
      }
      if (si.endTimestamp <= si.startTimestamp || si.endTimestamp <= d.last_end) {
        ++d.out_of_order;
        continue;
      }
      auto ev = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
      ev.pHostObject = d.host;
      ev.pCounterDataImage = f.image.data();
      ev.counterDataImageSize = f.image.size();
      ev.rangeIndex = i;
      ev.ppMetricNames = d.metric_ptrs.data();
      ev.numMetrics = d.metric_ptrs.size();
      ev.pMetricValues = values.data();
      if (cuptiProfilerHostEvaluateToGpuValues(&ev) != CUPTI_SUCCESS) {
        std::fill(values.begin(), values.end(), std::nan(""));
      }
      if (d.samples == 0) d.first_sample_start = si.startTimestamp;
      d.last_end = si.endTimestamp;
      log::GpuMetricSampleRecord rec{};
      rec.start_ns = static_cast<std::uint64_t>(static_cast<std::int64_t>(si.startTimestamp) + clock_offset_ns);
      rec.end_ns = static_cast<std::uint64_t>(static_cast<std::int64_t>(si.endTimestamp) + clock_offset_ns);
      rec.device_id = static_cast<std::uint32_t>(d.index);
      rec.count = static_cast<std::uint32_t>(values.size());
      log::RecordHeader h{};
      h.kind = static_cast<std::uint16_t>(log::RecordKind::kGpuMetricSample);
      h.size = static_cast<std::uint32_t>(sizeof rec + values.size() * sizeof(double));
      const std::size_t at = batch.size();
      batch.resize(at + sizeof h + h.size);
      std::memcpy(batch.data() + at, &h, sizeof h);
      std::memcpy(batch.data() + at + sizeof h, &rec, sizeof rec);
      std::memcpy(batch.data() + at + sizeof h + sizeof rec, values.data(), values.size() * sizeof(double));
      ++d.samples;
      samples.fetch_add(1, std::memory_order_relaxed);
    }
  }

  void run() {
    std::unique_lock lock(mutex);
    while (true) {
      const bool last = stopping;
      for (auto& d : devices) {
        if (!d->started) continue;
        try {
          if (!decode(*d, lock)) {
            stop_device(*d);
            d->failed = true;
          }
        } catch (const CuptiFailure& f) {
          message(log::Severity::kWarning, "GPU metrics: " + f.call + " on device " + std::to_string(d->index) +
                                               " failed: " + cupti_status_text(f.status) +
                                               "; sampling of it ends here");
          stop_device(*d);
          d->failed = true;
        }
      }
      writer.flush();
      if (last) {
        decoder_done = true;
        eval_cv.notify_all();
        return;
      }
      if (options.duty_ms > 0) apply_duty(lock);
      cv.wait_for(lock, std::chrono::milliseconds(options.decode_period_ms), [&] { return stopping; });
    }
  }

  // Validation only (PmSamplerOptions::duty_ms): sampling on while floor(CUPTI clock / duty)
  // is even, off while it is odd, so one traced run holds steps with and without sampling.
  void apply_duty(std::unique_lock<std::mutex>& lock) {
    const std::uint64_t period = std::uint64_t{options.duty_ms} * 1'000'000;
    const bool on = (now_ns() / period) % 2 == 0;
    for (auto& d : devices) {
      if (d->failed || d->paused == !on) continue;
      if (!on && d->started) {
        decode(*d, lock);  // what was sampled before the pause
        stop_device(*d);
        d->paused = true;
      } else if (on && d->paused) {
        d->paused = false;
        if (!restart(*d)) d->failed = true;
      }
    }
  }

  // Stop + Start after an overflow; false when the device cannot go on.
  bool restart(Device& d) {
    stop_device(d);
    // First the same sampling object again; CUPTI may refuse a Start after an overflow,
    // then a new object (Disable, Enable, SetConfig, counter data, Start).
    auto st = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_Start_Params);
    st.pPmSamplingObject = d.sampler;
    CUptiResult r = cuptiPmSamplingStart(&st);
    if (r != CUPTI_SUCCESS) {
      auto off = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_Disable_Params);
      off.pPmSamplingObject = d.sampler;
      cuptiPmSamplingDisable(&off);
      d.sampler = nullptr;
      try {
        arm(d);
        r = CUPTI_SUCCESS;
      } catch (const CuptiFailure& f) {
        r = f.status;
      }
    } else {
      d.started = true;
    }
    d.fresh = true;  // the first sample after a restart spans the gap
    if (r != CUPTI_SUCCESS) {
      message(log::Severity::kWarning, "GPU metrics: restarting sampling on device " + std::to_string(d.index) +
                                           " failed: " + cupti_status_text(r) + "; sampling of this device ends here");
      return false;
    }
    return true;
  }

  void stop_device(Device& d) {
    if (!d.started) return;
    auto p = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_Stop_Params);
    p.pPmSamplingObject = d.sampler;
    cuptiPmSamplingStop(&p);
    d.started = false;
  }

  // Sets up and starts one device; throws CuptiFailure.
  void start_device(Device& d, std::vector<std::string>* messages) {
    auto chip = GPUSCOPE_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
    chip.deviceIndex = static_cast<std::size_t>(d.index);
    must(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName");
    d.chip = chip.pChipName;

    auto avail = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_GetCounterAvailability_Params);
    avail.deviceIndex = static_cast<std::size_t>(d.index);
    must(cuptiPmSamplingGetCounterAvailability(&avail), "cuptiPmSamplingGetCounterAvailability");
    d.availability.resize(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = d.availability.data();
    must(cuptiPmSamplingGetCounterAvailability(&avail), "cuptiPmSamplingGetCounterAvailability");

    std::vector<std::string> dropped;
    choose_metrics(d, &dropped);
    if (!dropped.empty()) {
      std::string list;
      for (const std::string& m : dropped) list += (list.empty() ? "" : ", ") + m;
      const std::string text = "GPU metrics on device " + std::to_string(d.index) + " (" + d.chip +
                               "): " + std::to_string(dropped.size()) +
                               " metric(s) left out (not available, or not in one pass with the others): " + list;
      messages->push_back(text);
      message(log::Severity::kInfo, text);
    }

    arm(d);
  }

  // Enable, SetConfig, counter data image, Start (d.config and d.metric_ptrs set); throws CuptiFailure.
  void arm(Device& d) {
    auto en = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_Enable_Params);
    en.deviceIndex = static_cast<std::size_t>(d.index);
    must(cuptiPmSamplingEnable(&en), "cuptiPmSamplingEnable");
    d.sampler = en.pPmSamplingObject;

    auto cfg = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_SetConfig_Params);
    cfg.pPmSamplingObject = d.sampler;
    cfg.configSize = d.config.size();
    cfg.pConfig = d.config.data();
    cfg.hardwareBufferSize = options.hardware_buffer_bytes;
    cfg.samplingInterval = options.interval_ns;
    cfg.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    cfg.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
    must(cuptiPmSamplingSetConfig(&cfg), "cuptiPmSamplingSetConfig");

    // Images of 0.1 s of samples, kImages of them: the decoder fills one per decode period
    // (20 ms) while the evaluator turns the previous ones into records. Measured at 10 kHz on
    // H100 with one thread doing both: DecodeData ~60 us, evaluation ~40 us and an image reset
    // ~20 us per sample, slower than the samples come; and a decode that stops on a full image
    // lost samples (gaps of 1-30 ms).
    const std::uint64_t per_tenth = 100'000'000 / std::max<std::uint64_t>(options.interval_ns, 1);
    auto size = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_GetCounterDataSize_Params);
    size.pPmSamplingObject = d.sampler;
    size.pMetricNames = d.metric_ptrs.data();
    size.numMetrics = d.metric_ptrs.size();
    size.maxSamples = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(per_tenth, 256, 1u << 16));
    must(cuptiPmSamplingGetCounterDataSize(&size), "cuptiPmSamplingGetCounterDataSize");
    if (d.image_bytes != size.counterDataSize) {  // first arm (a re-arm keeps its images)
      d.image_bytes = size.counterDataSize;
      d.spare.clear();
      for (int i = 0; i < kImages; ++i) {
        std::vector<std::uint8_t> image(size.counterDataSize);
        reset_image(d.sampler, image);
        d.spare.push_back(std::move(image));
      }
    }
    d.fresh = true;

    d.start_cpu_ns = now_ns();
    auto st = GPUSCOPE_CUPTI_PARAMS(CUpti_PmSampling_Start_Params);
    st.pPmSamplingObject = d.sampler;
    must(cuptiPmSamplingStart(&st), "cuptiPmSamplingStart");
    d.started = true;
  }
};

PmSampler::PmSampler() : m_impl(std::make_unique<Impl>()) {}
PmSampler::~PmSampler() { stop(); }

std::uint64_t PmSampler::samples() const { return m_impl->samples.load(std::memory_order_relaxed); }

std::size_t PmSampler::start(const std::string& log_path, const PmSamplerOptions& options,
                             std::vector<std::string>* messages) {
  Impl& m = *m_impl;
  m.options = options;
  if (m.options.metrics.empty()) {
    for (const core::GpuMetricDef& d : core::kGpuMetrics) m.options.metrics.emplace_back(d.name);
  }
  Driver drv;
  std::string why;
  if (!drv.load(&why)) {
    messages->push_back("GPU metrics are off: " + why);
    return 0;
  }
  int count = 0;
  drv.get_count(&count);
  if (count <= 0) {
    messages->push_back("GPU metrics are off: no CUDA device is visible");
    return 0;
  }
  std::string error;
  if (!m.writer.open(log_path, static_cast<std::uint32_t>(::getpid()), &error)) {
    messages->push_back("GPU metrics are off: cannot create " + log_path + ": " + error);
    return 0;
  }
  auto init = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
  if (const CUptiResult r = cuptiProfilerInitialize(&init); r != CUPTI_SUCCESS) {
    messages->push_back("GPU metrics are off: cuptiProfilerInitialize failed: " + cupti_status_text(r) +
                        ". What to do: " + todo_for(r));
    m.writer.close();
    return 0;
  }
  std::size_t started = 0;
  for (int i = 0; i < count; ++i) {
    auto d = std::make_unique<Device>();
    d->index = i;
    d->metrics = m.options.metrics;
    if (drv.get_name != nullptr) {
      int dev = 0;
      char name[256] = {};
      if (drv.get(&dev, i) == 0 && drv.get_name(name, sizeof name - 1, dev) == 0) d->name = name;
      if (drv.get_uuid != nullptr && drv.get(&dev, i) == 0) drv.get_uuid(d->uuid, dev);
    }
    try {
      m.start_device(*d, messages);
      m.write_session(*d);
      ++started;
      if (m.options.verbose) {
        std::fprintf(stderr, "gpuscope: GPU metrics on device %d (%s, %s): %zu metrics every %llu ns\n", i,
                     d->name.c_str(), d->chip.c_str(), d->metrics.size(),
                     static_cast<unsigned long long>(m.options.interval_ns));
      }
    } catch (const CuptiFailure& f) {
      const std::string text = "GPU metrics are off on device " + std::to_string(i) +
                               (d->name.empty() ? "" : " (" + d->name + ")") + ": " + f.call +
                               " failed: " + cupti_status_text(f.status) + ". What to do: " + todo_for(f.status);
      messages->push_back(text);
      m.message(log::Severity::kWarning, text);
      host_deinit(d->host);
      continue;  // a device whose Enable succeeded before the failure stays enabled: harmless
    }
    m.devices.push_back(std::move(d));
  }
  m.writer.flush();
  if (started > 0) {
    m.evaluator = std::thread([&m] { m.evaluate_loop(); });
    m.thread = std::thread([&m] { m.run(); });
  }
  return started;
}

void PmSampler::stop(std::vector<std::string>* messages) {
  Impl& m = *m_impl;
  if (m.stopped) return;
  if (m.thread.joinable()) {
    {
      std::lock_guard lock(m.mutex);
      m.stopping = true;  // the thread decodes once more, then returns
    }
    m.cv.notify_all();
    m.thread.join();
    m.evaluator.join();
  }
  for (auto& d : m.devices) {
    m.stop_device(*d);
    if (m.options.verbose) {
      std::fprintf(
          stderr,
          "gpuscope: GPU metrics device %d: %llu samples, %llu overflow(s), %llu decodes, %llu populated but "
          "incomplete at a decode, %llu unreadable, %llu out of order, %llu image full (image %zu bytes), %llu "
          "decoder waits for the evaluator, %llu outliers dropped; "
          "first sample start %llu, sampling "
          "started at CUPTI clock %llu (difference %lld ns)\n",
          d->index, static_cast<unsigned long long>(d->samples), static_cast<unsigned long long>(d->overflows),
          static_cast<unsigned long long>(d->decodes), static_cast<unsigned long long>(d->incomplete),
          static_cast<unsigned long long>(d->unreadable), static_cast<unsigned long long>(d->out_of_order),
          static_cast<unsigned long long>(d->image_full), d->image_bytes,
          static_cast<unsigned long long>(d->evaluator_behind), static_cast<unsigned long long>(d->outliers),
          static_cast<unsigned long long>(d->first_sample_start), static_cast<unsigned long long>(d->start_cpu_ns),
          static_cast<long long>(d->first_sample_start) - static_cast<long long>(d->start_cpu_ns));
    }
    if (m.options.verbose) {
      std::fprintf(
          stderr,
          "gpuscope: GPU metrics device %d: decode thread: DecodeData %.1f ms, samples %.1f ms, image reset %.1f ms\n",
          d->index, d->decode_ns / 1e6, d->evaluate_ns / 1e6, d->reset_ns / 1e6);
    }
    if (messages != nullptr && d->overflows > 0) {
      messages->push_back("GPU metrics on device " + std::to_string(d->index) + ": the hardware buffer overflowed " +
                          std::to_string(d->overflows) + " time(s); samples were lost: use a lower --gpu-metrics rate");
    }
    // cuptiPmSamplingDisable is not called: in some CUPTI versions it finalizes all of
    // CUPTI in the process; the launcher is about to import and exit anyway.
    host_deinit(d->host);
  }
  m.stopped = true;  // the devices (and their config images) stay: CUPTI may keep pointers to them
  if (m.writer.is_open()) {
    m.writer.flush();
    m.writer.close();
  }
}

bool parse_sampling_rate(const std::string& text, double* hz) {
  std::string t = text;
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t.ends_with("hz")) t.resize(t.size() - 2);
  double scale = 1;
  if (!t.empty() && t.back() == 'k') {
    scale = 1e3;
    t.pop_back();
  }
  if (t.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end == nullptr || *end != '\0' || !std::isfinite(v)) return false;
  const double r = v * scale;
  if (r < 10 || r > kMaxSamplingRateHz) return false;
  *hz = r;
  return true;
}

}  // namespace gpuscope::collect
