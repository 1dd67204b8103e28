#include "collect/pm_sampler.hpp"

#include <cupti_profiler_target.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "collect/cupti_params.hpp"
#include "collect/metric_catalog.hpp"
#include "collect/pm_sampler_impl.hpp"
#include "core/gpu_metrics.hpp"

namespace gpuscope::collect {
namespace {

using detail::pm::CuptiFailure;
using detail::pm::Device;
using detail::pm::host_deinit;
using detail::pm::now_ns;

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

}  // namespace

void PmSampler::Impl::message(log::Severity severity, const std::string& text) {
  log::MessageRecord r{};
  r.ts_ns = now_ns();
  r.text_string = writer.intern(text);
  r.severity = static_cast<std::uint8_t>(severity);
  writer.add(log::RecordKind::kMessage, r);
}

void PmSampler::Impl::write_session(const Device& d) {
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
