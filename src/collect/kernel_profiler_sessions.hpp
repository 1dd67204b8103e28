// kernel_profiler_sessions (internal): the range profiler of one CUDA context, as
// KernelProfiler (kernel_profiler.hpp) drives it: set up at the context's first profiled
// launch (KernelProfiler::state_for), sessions started (start_session), stopped, replayed
// by gpuscope itself with --cache-control all (replay_passes) and decoded into
// ProfiledLaunches (end_session). Failures throw ProfilerFailure or ConfigRefused, caught at
// KernelProfiler's callback boundary (on_failure).
#pragma once

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collect/cupti_params.hpp"
#include "collect/kernel_profiler.hpp"
#include "collect/pass_replay.hpp"

namespace gpuscope::collect::detail {

// Thrown inside KernelProfiler and caught at its callback boundary.
struct ProfilerFailure {
  CUptiResult status;
  std::string call;
};

// A configuration the collector cannot profile with (caught at the callback boundary).
struct ConfigRefused {
  std::string what, todo;
};

inline void must(CUptiResult r, const char* call) {
  if (r != CUPTI_SUCCESS) throw ProfilerFailure{r, call};
}

/// True while gpuscope itself calls the driver on this thread (flush kernel, checkpoint, a
/// replayed launch): any callback it raises is gpuscope's, not the program's.
[[nodiscard]] bool own_calls_running() noexcept;

struct KernelProfiler::ContextState {
  CUcontext ctx = nullptr;
  std::uint32_t context_id = 0;
  std::uint32_t device_id = 0;
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* profiler = nullptr;
  std::vector<std::uint8_t> availability, config, counter_data;
  std::size_t passes = 0;
  std::size_t capacity = 1;             // ranges the counter data image holds
  bool session_open = false;            // SetConfig + Start done, session not decoded yet
  bool stopped = false;                 // own replay: every pass ran and was stopped
  bool all_passes = false;              // own replay: Stop said every pass was submitted
  std::unique_ptr<PassReplay> replay;   // own replay (--cache-control all): flush, checkpoint
  std::vector<ProfiledLaunch> session;  // launches of the open session, in range order

  ~ContextState() {
    replay.reset();
    if (profiler != nullptr) {
      auto d = GPUSCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
      d.pRangeProfilerObject = profiler;
      cuptiRangeProfilerDisable(&d);
    }
    if (host != nullptr) {
      auto d = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
      d.pHostObject = host;
      cuptiProfilerHostDeinitialize(&d);
    }
  }

  void reset_counter_data() {
    auto p = GPUSCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
    p.pRangeProfilerObject = profiler;
    p.counterDataSize = counter_data.size();
    p.pCounterData = counter_data.data();
    must(cuptiRangeProfilerCounterDataImageInitialize(&p), "cuptiRangeProfilerCounterDataImageInitialize");
  }
};

}  // namespace gpuscope::collect::detail
