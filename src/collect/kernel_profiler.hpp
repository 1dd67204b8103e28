// kernel_profiler (internal): the collector's kernels mode, for `gpuscope kernels`.
// Hardware counters per kernel launch with the CUPTI Range Profiler (cupti_range_profiler.h
// + cupti_profiler_host.h, CUDA 13): auto range (one range = one kernel), kernel replay
// (CUPTI saves and restores device memory and replays the kernel once per pass, inside
// the launch call).
//
// Sequence per CUDA context, created at its first profiled launch:
//   cuptiProfilerInitialize (once) -> cuptiDeviceGetChipName -> cuptiProfilerGetCounterAvailability
//   -> cuptiProfilerHostInitialize + ConfigAddMetrics + GetConfigImage + GetNumOfPasses
//   -> cuptiRangeProfilerEnable -> GetCounterDataSize + CounterDataImageInitialize.
// Per profiled launch (driver/runtime launch callbacks of the launching thread):
//   API enter: SetConfig(auto range, kernel replay, 1 range) + Start;
//   API exit:  Stop -> DecodeData -> GetCounterDataInfo -> cuptiProfilerHostEvaluateToGpuValues,
//              then the counter data image is re-initialised for the next launch.
// Launch choice: collect/launch_selector.hpp (regex, skip, count, as ncu).
//
// Errors never reach the target: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES,
// CUPTI_ERROR_HARDWARE_BUSY and any other failure turn profiling off for the process with a
// message on stderr and in the log (MessageRecord) saying what to do; the target runs on.
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collect/collector_config.hpp"
#include "collect/launch_selector.hpp"

namespace gpuscope::detail {

/// One profiled launch, handed to the writer thread.
struct ProfiledLaunch {
  std::uint64_t launch_ns = 0;
  std::uint64_t launch_index = 0;
  std::string name;  // mangled
  std::uint32_t device_id = 0, context_id = 0, stream_id = 0xffffffffu, correlation_id = 0;
  std::int32_t grid[3] = {-1, -1, -1};
  std::int32_t block[3] = {-1, -1, -1};
  std::int32_t registers_per_thread = -1, static_shared_memory = -1, dynamic_shared_memory = -1,
               local_memory_per_thread = -1;
  std::uint32_t passes = 0;
  std::vector<double> values;  // in the order of KernelProfiler::metrics()
};

class Collector;

/// True while a range matching GPUSCOPE_NVTX_INCLUDE is open (push/pop on the calling
/// thread, or start/end on any thread): nvtx_injection.cpp.
[[nodiscard]] bool inside_nvtx_include() noexcept;

class KernelProfiler {
 public:
  KernelProfiler(Collector& sink, const collect::CollectorConfig& config);
  ~KernelProfiler();

  /// Turns on the launch callbacks (runtime and driver) on `subscriber`.
  void enable_callbacks(CUpti_SubscriberHandle subscriber) noexcept;
  /// Launch callback (any thread). Never throws.
  void on_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data) noexcept;
  /// A graph launch: kernels inside graphs are not profiled (said once).
  void on_graph_launch() noexcept;
  /// Context about to be destroyed: disable its range profiler.
  void on_context_destroy(CUcontext ctx) noexcept;
  /// At exit: disable every range profiler, report what matched.
  void finish() noexcept;

  [[nodiscard]] const std::vector<std::string>& metrics() const { return m_metrics; }
  /// Moves out the launches profiled since the last call (writer thread).
  std::vector<ProfiledLaunch> take() noexcept;

 private:
  struct ContextState;
  ContextState* state_for(CUcontext ctx);  // m_mutex held
  void begin(const CUpti_CallbackData* data, CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
  void end();
  void fail(const std::string& what, const std::string& todo);  // profiling off, tell the user

  Collector& m_sink;
  const collect::CollectorConfig& m_config;
  std::vector<std::string> m_metrics;
  std::vector<const char*> m_metric_ptrs;
  std::optional<collect::LaunchSelector> m_selector;
  bool m_off = false;  // m_mutex
  bool m_profiler_initialized = false;  // cuptiProfilerInitialize done (m_mutex)
  bool m_graph_warned = false;
  std::recursive_mutex m_mutex;  // one profiled launch at a time in the process
  std::unordered_map<CUcontext, std::unique_ptr<ContextState>> m_contexts;
  std::mutex m_done_mutex;
  std::vector<ProfiledLaunch> m_done;
};

}  // namespace gpuscope::detail
