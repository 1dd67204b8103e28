// kernel_profiler (internal): the collector's kernels mode, for `gpuscope kernels`.
// Hardware counters per kernel launch with the CUPTI Range Profiler (cupti_range_profiler.h
// + cupti_profiler_host.h, CUDA 13): auto range (one range = one kernel), kernel replay
// (CUPTI saves and restores device memory and replays the kernel once per pass, inside
// the launch call).
//
// Sequence per CUDA context, created at its first profiled launch:
//   cuptiProfilerInitialize (once) -> cuptiDeviceGetChipName -> cuptiProfilerGetCounterAvailability
//   -> cuptiProfilerHostInitialize + ConfigAddMetrics + GetConfigImage + GetNumOfPasses
//   -> cuptiRangeProfilerEnable -> GetCounterDataSize + CounterDataImageInitialize
//      (room for GPUSCOPE_KERNEL_BATCH ranges).
// Sessions (SetConfig(auto range) + Start ... Stop -> DecodeData -> GetCounterDataInfo ->
// cuptiProfilerHostEvaluateToGpuValues per range), by GPUSCOPE_KERNEL_REPLAY:
//   kernel (default): kernel replay, one session per profiled launch, Start at the launch API's
//     entry, Stop + decode at its exit (CUPTI finishes every pass inside the launch call,
//     about 25 ms per launch on H100, docs/performance.md).
//   none (one pass): user replay of a single pass; a session stays open across the following
//     profiled launches of the same context, one range each. It ends before anything else could
//     take a range: the entry of a launch that is not profiled, of a memset, memcpy or graph
//     launch (runtime or driver API), a launch on another context, the context's destruction,
//     exit; and when it holds GPUSCOPE_KERNEL_BATCH launches. Range i is launch i of the
//     session, trusted only when the decoded range count equals the number of launches that
//     returned success; otherwise the session's values are dropped with a warning and the rest
//     of the run uses one session per launch.
//   kernel with GPUSCOPE_CACHE_CONTROL=all (gpuscope kernels --cache-control all): gpuscope's own
//     replay (pass_replay.hpp), one user-replay session per profiled launch: at the launch API's
//     entry the context is synchronized, its memory saved (cupti_checkpoint.h, only when there
//     are several passes) and L2 flushed; the program's launch is pass 0; at the exit of the
//     innermost launch call (the driver's, inside a runtime launch) each later pass restores the
//     memory, flushes L2 and launches the kernel again with the caller's parameters, until Stop
//     says every pass was submitted. Kernel activity is turned off around gpuscope's own
//     calls (flush, checkpoint, replayed launches), so the kernel trace holds the program's
//     launches only. User replay's auto range arms the
//     counters with triggers inside the kernel (about 8 instructions per warp, one global store
//     per kernel), and SASS-patched metrics read 0 in it (H100, 2026-11-27): the command line
//     refuses smsp__sass_* metrics with --cache-control all.
// Launch choice: collect/launch_selector.hpp (regex, skip, count, as ncu).
// Files: kernel_profiler_callbacks.cpp (the launch callbacks: which launch is profiled, one at a time,
// failures), kernel_profiler_sessions.cpp (one context's range profiler: setup, sessions,
// own replay, decode), kernel_launch_params.cpp (grid, block, registers of a launch call).
//
// Errors never reach the target: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES,
// CUPTI_ERROR_HARDWARE_BUSY and any other failure turn profiling off for the process with a
// message on stderr and in the log (MessageRecord) saying what to do; the target runs on.
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <atomic>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collect/collector_config.hpp"
#include "collect/launch_selector.hpp"
#include "collect/profiled_launch.hpp"

namespace gpuscope::collect::detail {

class Collector;
struct DriverLaunch;

/// True while a range matching GPUSCOPE_NVTX_INCLUDE is open (push/pop on the calling
/// thread, or start/end on any thread): nvtx_injection.cpp.
[[nodiscard]] bool inside_nvtx_include() noexcept;

class KernelProfiler {
 public:
  KernelProfiler(Collector& sink, const collect::CollectorConfig& config);
  ~KernelProfiler();

  /// Turns on the launch callbacks (runtime and driver) on `subscriber`.
  void enable_callbacks(CUpti_SubscriberHandle subscriber) noexcept;
  /// Runtime/driver API callback (any thread): kernel launches, and the calls that end an
  /// open session (memset, memcpy, graph launch). Never throws.
  void on_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data) noexcept;
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
  void end(const CUpti_CallbackData* data);
  void start_session(ContextState& s);  // m_mutex held; SetConfig + Start (none open)
  void end_session(ContextState& s);    // m_mutex held; no-op without an open session
  bool stop_pass(ContextState& s);      // Stop; true when every pass was submitted
  // Own replay: stops pass 0 and runs the later passes (restore, flush, launch again).
  void replay_passes(ContextState& s, const DriverLaunch& launch);
  void end_sessions() noexcept;  // m_mutex held: every open session
  // Replay none with GPUSCOPE_RANGE_REPLAY=userrange: a pushed CUPTI_UserRange per launch.
  [[nodiscard]] bool user_ranges() const {
    return !m_config.kernel_replay && m_config.range_replay == RangeReplay::kUserRange;
  }
  void on_graph_launch() noexcept;
  void on_failure(const char* during) noexcept;                 // in a catch block: profiling off, tell the user
  void fail(const std::string& what, const std::string& todo);  // profiling off, tell the user

  Collector& m_sink;
  const collect::CollectorConfig& m_config;
  // --cache-control all with kernel replay: gpuscope replays each launch itself (pass_replay.hpp).
  bool m_own_replay = false;
  bool m_unreplayable_warned = false;
  std::vector<std::string> m_metrics;
  std::vector<const char*> m_metric_ptrs;
  std::optional<collect::LaunchSelector> m_selector;
  bool m_off = false;                   // m_mutex
  bool m_profiler_initialized = false;  // cuptiProfilerInitialize done (m_mutex)
  bool m_graph_warned = false;
  std::size_t m_batch = 1;  // launches per session (m_mutex): 1 after a misaligned decode
  std::atomic<int> m_open_sessions{0};
  struct Timing {  // GPUSCOPE_VERBOSE: where the profiler's own time goes (m_mutex)
    std::uint64_t setup_ns = 0, start_ns = 0, end_ns = 0, sessions = 0, launches = 0, replay_ns = 0,
                  replayed_passes = 0;
  } m_timing;
  // What a runtime [0] or driver [1] API call that is not a kernel launch means, by callback id.
  enum class CallKind : std::uint8_t { kOther, kEndsSession, kGraphLaunch };
  std::vector<CallKind> m_call_kinds[2];
  std::recursive_mutex m_mutex;  // one profiled launch at a time in the process
  std::unordered_map<CUcontext, std::unique_ptr<ContextState>> m_contexts;
  std::mutex m_done_mutex;
  std::vector<ProfiledLaunch> m_done;
};

}  // namespace gpuscope::collect::detail
