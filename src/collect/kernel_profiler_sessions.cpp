#include "collect/kernel_profiler_sessions.hpp"

#include <cuda.h>
#include <cupti_target.h>

#include <cstdio>

#include "collect/collector.hpp"
#include "collect/cupti_check.hpp"
#include "collect/metric_catalog.hpp"

namespace gpuscope::collect::detail {
namespace {

// Set while gpuscope itself calls the driver (flush kernel, checkpoint, a replayed launch):
// any callback it raises is gpuscope's, not the program's. With the kernel trace on, kernel
// activity is off meanwhile, so that the trace holds the program's kernels only (a filter by
// the correlation ids seen here did not match their kernel records on the H100, 2026-11-27).
// The "WaitNs" kernel CUPTI's range profiler launches once per user-replay session is not
// kept out by this (it still arrived with the profiler's calls wrapped, H100, 2026-11-27): the
// collector drops it by name (collect::is_range_profiler_kernel).
thread_local bool t_own_calls = false;
class OwnCalls {
 public:
  explicit OwnCalls(bool kernel_trace) : m_trace(kernel_trace) {
    t_own_calls = true;
    if (m_trace) GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  }
  ~OwnCalls() {
    if (m_trace) GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    t_own_calls = false;
  }
  OwnCalls(const OwnCalls&) = delete;
  OwnCalls& operator=(const OwnCalls&) = delete;

 private:
  bool m_trace;
};

}  // namespace

bool own_calls_running() noexcept { return t_own_calls; }

KernelProfiler::ContextState* KernelProfiler::state_for(CUcontext ctx) {
  auto it = m_contexts.find(ctx);
  if (it != m_contexts.end()) return it->second.get();
  const std::uint64_t t0 = Collector::now_ns();
  if (!m_profiler_initialized) {
    auto init = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
    must(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize");
    m_profiler_initialized = true;
  }
  auto s = std::make_unique<ContextState>();
  s->ctx = ctx;
  cuptiGetContextId(ctx, &s->context_id);
  CUdevice dev = 0;
  if (cuCtxGetDevice(&dev) == CUDA_SUCCESS) s->device_id = static_cast<std::uint32_t>(dev);

  auto chip = GPUSCOPE_CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  chip.deviceIndex = s->device_id;
  must(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName");

  auto avail = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  avail.ctx = ctx;
  must(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");
  s->availability.resize(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = s->availability.data();
  must(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");

  auto host = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = chip.pChipName;
  host.pCounterAvailabilityImage = s->availability.data();
  must(cuptiProfilerHostInitialize(&host), "cuptiProfilerHostInitialize");
  s->host = host.pHostObject;

  collect::ConfigImage config = collect::build_config_image(s->host, m_metric_ptrs);
  s->config = std::move(config.image);
  s->passes = config.passes;
  if (!m_config.kernel_replay && s->passes > 1) {
    throw ConfigRefused{"the " + std::to_string(m_metrics.size()) + " metrics need " + std::to_string(s->passes) +
                            " passes and replay mode none collects one",
                        "use --replay-mode kernel, or fewer metrics (gpuscope kernels prints the pass count)"};
  }

  auto en = GPUSCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
  en.ctx = ctx;
  must(cuptiRangeProfilerEnable(&en), "cuptiRangeProfilerEnable");
  s->profiler = en.pRangeProfilerObject;

  if (m_own_replay) s->replay = std::make_unique<PassReplay>(ctx);

  auto cds = GPUSCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  cds.pRangeProfilerObject = s->profiler;
  cds.pMetricNames = m_metric_ptrs.data();
  cds.numMetrics = m_metric_ptrs.size();
  s->capacity = m_batch;
  cds.maxNumOfRanges = s->capacity;
  cds.maxNumRangeTreeNodes = s->capacity;
  must(cuptiRangeProfilerGetCounterDataSize(&cds), "cuptiRangeProfilerGetCounterDataSize");
  s->counter_data.resize(cds.counterDataSize);
  s->reset_counter_data();

  if (m_config.verbose) {
    std::fprintf(
        stderr,
        "gpuscope: range profiler on context %u (%s): %zu metrics, %zu passes, up to %zu launches per session%s\n",
        s->context_id, chip.pChipName, m_metrics.size(), s->passes, s->capacity,
        m_own_replay ? (", own replay with an L2 flush of " + std::to_string(s->replay->scratch_bytes() >> 20) +
                        " MiB before every pass")
                           .c_str()
                     : "");
  }
  ContextState* raw = s.get();
  m_contexts.emplace(ctx, std::move(s));
  m_timing.setup_ns += Collector::now_ns() - t0;
  return raw;
}

// SetConfig + Start of a session on `s` (none open).
void KernelProfiler::start_session(ContextState& s) {
  const std::uint64_t t0 = Collector::now_ns();
  if (m_own_replay) {
    // Pass 0 is the program's own launch: memory saved as it is before it (only if there
    // are later passes to restore it for), then L2 flushed.
    const OwnCalls own(m_config.trace_cuda);
    if (s.passes > 1) s.replay->save();
    s.replay->flush_l2();
  }
  auto cfg = GPUSCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  cfg.pRangeProfilerObject = s.profiler;
  cfg.configSize = s.config.size();
  cfg.pConfig = s.config.data();
  cfg.counterDataImageSize = s.counter_data.size();
  cfg.pCounterDataImage = s.counter_data.data();
  // Replay none: the single pass of a user-replay session (GPUSCOPE_RANGE_REPLAY, validation
  // only: an application-replay one, or one with a pushed range per launch, to compare); each
  // kernel runs once. Own replay: user replay too, gpuscope runs the later passes
  // (replay_passes).
  cfg.range = user_ranges() ? CUPTI_UserRange : CUPTI_AutoRange;
  const bool application = !m_config.kernel_replay && m_config.range_replay == RangeReplay::kApplication;
  cfg.replayMode = m_config.kernel_replay && !m_own_replay ? CUPTI_KernelReplay
                   : application                           ? CUPTI_ApplicationReplay
                                                           : CUPTI_UserReplay;
  cfg.maxRangesPerPass = s.capacity;
  cfg.numNestingLevels = 1;
  cfg.minNestingLevel = 1;
  cfg.passIndex = 0;
  cfg.targetNestingLevel = 1;
  auto start = GPUSCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
  start.pRangeProfilerObject = s.profiler;
  must(cuptiRangeProfilerSetConfig(&cfg), "cuptiRangeProfilerSetConfig");
  must(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
  s.session_open = true;
  s.stopped = false;
  s.all_passes = false;
  s.session.clear();
  m_open_sessions.fetch_add(1, std::memory_order_relaxed);
  m_timing.start_ns += Collector::now_ns() - t0;
  ++m_timing.sessions;
}

bool KernelProfiler::stop_pass(ContextState& s) {
  auto stop = GPUSCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
  stop.pRangeProfilerObject = s.profiler;
  must(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
  s.stopped = true;
  s.all_passes = stop.isAllPassSubmitted != 0;
  return s.all_passes;
}

void KernelProfiler::replay_passes(ContextState& s, const DriverLaunch& launch) {
  const std::uint64_t t0 = Collector::now_ns();
  std::size_t pass = 1;  // pass 0 was the program's launch
  while (!stop_pass(s)) {
    if (pass >= s.passes + 2) break;  // CUPTI asks for more passes than it counted: give up
    if (launch.kind == DriverLaunch::Kind::kNone) {
      if (!m_unreplayable_warned) {
        m_unreplayable_warned = true;
        m_sink.post_message(log::Severity::kWarning,
                            "a kernel launched through the runtime without a driver launch call cannot be replayed "
                            "by gpuscope: its counters are not recorded (gpuscope kernels --cache-control none "
                            "profiles it with CUPTI's kernel replay)");
      }
      break;
    }
    {
      const OwnCalls own(m_config.trace_cuda);
      s.replay->restore();
      s.replay->flush_l2();
    }
    auto start = GPUSCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
    start.pRangeProfilerObject = s.profiler;
    must(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
    {
      const OwnCalls own(m_config.trace_cuda);
      s.replay->run(launch);
    }
    ++pass;
  }
  m_timing.replay_ns += Collector::now_ns() - t0;
  m_timing.replayed_passes += pass - 1;
}

void KernelProfiler::end_session(ContextState& s) {
  if (!s.session_open) return;
  const std::uint64_t t0 = Collector::now_ns();
  s.session_open = false;
  m_open_sessions.fetch_sub(1, std::memory_order_relaxed);
  std::vector<ProfiledLaunch> launches = std::move(s.session);
  s.session.clear();
  if (!s.stopped) stop_pass(s);
  if (s.replay) s.replay->release();
  auto describe = [&] {
    if (launches.empty()) return std::string("no launch");
    return "launches " + std::to_string(launches.front().launch_index) + "-" +
           std::to_string(launches.back().launch_index) + " (first: " + launches.front().name + ")";
  };
  if (!s.all_passes) {
    m_sink.post_message(log::Severity::kWarning, "range profiler: not every pass was submitted for " + describe() +
                                                     (m_own_replay ? "; its counters are not recorded" : ""));
    if (m_own_replay) launches.clear();
  }
  auto decode = GPUSCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  decode.pRangeProfilerObject = s.profiler;
  must(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
  auto info = GPUSCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = s.counter_data.data();
  info.counterDataImageSize = s.counter_data.size();
  must(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  if (decode.numOfRangeDropped > 0 || info.numTotalRanges != launches.size()) {
    // Ranges that do not line up one to one with the launches cannot be attributed.
    m_sink.post_message(log::Severity::kWarning,
                        "range profiler: " + std::to_string(info.numTotalRanges) + " range(s) decoded and " +
                            std::to_string(decode.numOfRangeDropped) + " dropped for " +
                            std::to_string(launches.size()) + " launch(es), " + describe() +
                            "; their counters are not recorded" +
                            (m_batch > 1 ? " and the rest of the run uses one session per launch" : ""));
    if (m_config.verbose) {
      std::fprintf(stderr, "gpuscope: range profiler session misaligned: %zu ranges for %zu launches\n",
                   static_cast<std::size_t>(info.numTotalRanges), launches.size());
    }
    m_batch = 1;
  } else {
    for (std::size_t i = 0; i < launches.size(); ++i) {
      ProfiledLaunch& l = launches[i];
      l.values.assign(m_metric_ptrs.size(), 0.0);
      auto ev = GPUSCOPE_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
      ev.pHostObject = s.host;
      ev.pCounterDataImage = s.counter_data.data();
      ev.counterDataImageSize = s.counter_data.size();
      ev.rangeIndex = i;
      ev.ppMetricNames = m_metric_ptrs.data();
      ev.numMetrics = m_metric_ptrs.size();
      ev.pMetricValues = l.values.data();
      must(cuptiProfilerHostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
    }
    m_timing.launches += launches.size();
    std::lock_guard lock(m_done_mutex);
    for (ProfiledLaunch& l : launches) m_done.push_back(std::move(l));
  }
  s.reset_counter_data();
  m_timing.end_ns += Collector::now_ns() - t0;
}

void KernelProfiler::end_sessions() noexcept {
  if (m_open_sessions.load(std::memory_order_relaxed) == 0) return;
  for (auto& [ctx, s] : m_contexts) {
    try {
      end_session(*s);
    } catch (...) {
      on_failure("range profiler decode");
    }
  }
}

}  // namespace gpuscope::collect::detail
