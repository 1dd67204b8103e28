#include "collect/kernel_profiler.hpp"

#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <regex>
#include <span>
#include <string_view>
#include <utility>

#include "collect/collector.hpp"
#include "collect/cupti_check.hpp"
#include "collect/cupti_params.hpp"
#include "collect/metric_catalog.hpp"
#include "collect/pass_replay.hpp"

namespace gpuscope::collect::detail {
namespace {

// The launching thread's profiled launch, between its API enter and exit callbacks.
struct ThreadLaunch {
  int depth = 0;               // nested launch calls (a runtime launch may call the driver's)
  bool active = false;         // this thread started a range at depth 1
  void* state = nullptr;       // KernelProfiler::ContextState*
  const void* stub = nullptr;  // host stub of a runtime launch
  bool replayed = false;       // own replay: the later passes ran (at the innermost launch's exit)
  ProfiledLaunch launch;
};
thread_local ThreadLaunch t_launch;

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

// The launch calls profiled: the one list for enable_callbacks() and for telling the callbacks
// apart. Graph launches, memsets and memcpys are found by name (enable_callbacks).
constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
};
constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
};
bool is_kernel_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const auto& ids = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? std::span<const CUpti_CallbackId>(kRuntimeLaunches)
                                                          : std::span<const CUpti_CallbackId>(kDriverLaunches);
  return std::find(ids.begin(), ids.end(), cbid) != ids.end();
}

// The API call of an exit callback returned success (0 in both the runtime's and the driver's
// codes); a launch that failed ran no kernel.
bool call_succeeded(const CUpti_CallbackData* data) {
  return data->functionReturnValue == nullptr || *static_cast<const int*>(data->functionReturnValue) == 0;
}

std::int32_t i32(unsigned long long v) { return static_cast<std::int32_t>(v > 0x7fffffffULL ? 0x7fffffff : v); }

void set_dims(ProfiledLaunch& l, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
              unsigned long long smem) {
  l.grid[0] = i32(gx), l.grid[1] = i32(gy), l.grid[2] = i32(gz);
  l.block[0] = i32(bx), l.block[1] = i32(by), l.block[2] = i32(bz);
  l.dynamic_shared_memory = i32(smem);
}

// A runtime launch names its kernel by the host stub; the target's own CUDA runtime knows its
// registers and shared memory (cudaFuncGetAttributes), asked at the launch's exit, once the
// module is loaded. Found only when the runtime is a shared library (PyTorch, CuPy); with a
// static cudart the facts stay unknown. The lookup must not change the program's view of
// errors: a failed call sets the runtime's last error, which the program would read after its
// launch (PyTorch does, and reports "invalid device function"). So it runs only when no error
// is pending (cudaPeekAtLastError) and clears its own (cudaGetLastError).
void read_runtime_attributes(const void* stub, ProfiledLaunch& l, bool verbose) {
  using Get = int (*)(cudaFuncAttributes*, const void*);
  using LastError = int (*)();
  static const Get get = reinterpret_cast<Get>(::dlsym(RTLD_DEFAULT, "cudaFuncGetAttributes"));
  static const LastError peek = reinterpret_cast<LastError>(::dlsym(RTLD_DEFAULT, "cudaPeekAtLastError"));
  static const LastError clear = reinterpret_cast<LastError>(::dlsym(RTLD_DEFAULT, "cudaGetLastError"));
  static std::atomic<bool> told{false};
  if (get == nullptr || peek == nullptr || clear == nullptr || stub == nullptr || peek() != 0) return;
  cudaFuncAttributes a{};
  if (const int rc = get(&a, stub); rc != 0) {
    clear();
    if (verbose && !told.exchange(true)) {
      std::fprintf(stderr,
                   "gpuscope: cudaFuncGetAttributes of a launched kernel failed (error %d): registers unknown\n", rc);
    }
    return;
  }
  l.registers_per_thread = a.numRegs;
  l.static_shared_memory = static_cast<std::int32_t>(std::min<std::size_t>(a.sharedSizeBytes, 0x7fffffff));
  l.local_memory_per_thread = static_cast<std::int32_t>(std::min<std::size_t>(a.localSizeBytes, 0x7fffffff));
}

// Grid, block and dynamic shared memory from the launch call's parameters; returns the
// CUfunction of a driver launch, and sets *stub to the host stub of a runtime launch.
CUfunction read_params(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params, ProfiledLaunch& l,
                       const void** stub) {
  if (params == nullptr) return nullptr;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000: {
        // The four share one layout (func, gridDim, blockDim, args, sharedMem, stream).
        const auto* p = static_cast<const cudaLaunchKernel_v7000_params*>(params);
        set_dims(l, p->gridDim.x, p->gridDim.y, p->gridDim.z, p->blockDim.x, p->blockDim.y, p->blockDim.z,
                 p->sharedMem);
        *stub = p->func;
        return nullptr;
      }
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
        const auto* p = static_cast<const cudaLaunchKernelExC_v11060_params*>(params);
        if (p->config != nullptr) {
          const cudaLaunchConfig_t& c = *p->config;
          set_dims(l, c.gridDim.x, c.gridDim.y, c.gridDim.z, c.blockDim.x, c.blockDim.y, c.blockDim.z,
                   c.dynamicSmemBytes);
        }
        *stub = p->func;
        return nullptr;
      }
      default:
        return nullptr;
    }
  }
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
      const auto* p = static_cast<const cuLaunchKernel_params*>(params);
      set_dims(l, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ, p->sharedMemBytes);
      return p->f;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const auto* p = static_cast<const cuLaunchKernelEx_params*>(params);
      if (p->config != nullptr) {
        const CUlaunchConfig& c = *p->config;
        set_dims(l, c.gridDimX, c.gridDimY, c.gridDimZ, c.blockDimX, c.blockDimY, c.blockDimZ, c.sharedMemBytes);
      }
      return p->f;
    }
    default:
      return nullptr;
  }
}

void read_function(CUfunction f, ProfiledLaunch& l) {
  if (f == nullptr) return;
  int v = 0;
  if (cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f) == CUDA_SUCCESS) l.registers_per_thread = v;
  if (cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) == CUDA_SUCCESS) l.static_shared_memory = v;
  if (cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f) == CUDA_SUCCESS) l.local_memory_per_thread = v;
}

// Thrown inside KernelProfiler and caught at its callback boundary.
struct ProfilerFailure {
  CUptiResult status;
  std::string call;
};

// A configuration the collector cannot profile with (caught at the callback boundary).
struct ConfigRefused {
  std::string what, todo;
};

void must(CUptiResult r, const char* call) {
  if (r != CUPTI_SUCCESS) throw ProfilerFailure{r, call};
}

}  // namespace

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

KernelProfiler::KernelProfiler(Collector& sink, const collect::CollectorConfig& config)
    : m_sink(sink),
      m_config(config),
      m_own_replay(config.kernel_replay && config.cache_control_all),
      m_metrics(config.kernel_metrics),
      m_batch(config.kernel_replay ? 1 : static_cast<std::size_t>(std::max<std::uint64_t>(1, config.kernel_batch))) {
  for (const std::string& m : m_metrics) m_metric_ptrs.push_back(m.c_str());
  try {
    m_selector.emplace(config.kernel_regex, config.launch_skip, config.launch_count);
  } catch (const std::regex_error& e) {
    m_off = true;
    m_sink.post_message(log::Severity::kError,
                        "invalid --kernel-name regex '" + config.kernel_regex + "': " + e.what());
  }
}

KernelProfiler::~KernelProfiler() = default;

void KernelProfiler::enable_callbacks(CUpti_SubscriberHandle subscriber) noexcept {
  auto enable = [&](CUpti_CallbackDomain domain, std::span<const CUpti_CallbackId> ids) {
    for (CUpti_CallbackId cbid : ids) GPUSCOPE_CUPTI_LOG_CALL(cuptiEnableCallback(1, subscriber, domain, cbid));
  };
  enable(CUPTI_CB_DOMAIN_RUNTIME_API, kRuntimeLaunches);
  enable(CUPTI_CB_DOMAIN_DRIVER_API, kDriverLaunches);
  // Graph launches (said once: their kernels are not profiled) and, with replay none, the
  // calls that end an open session: every memset and memcpy, by name (cuptiGetCallbackName),
  // so new variants (batch, 3D, peer, async) are included. Kernel replay closes its session
  // inside each launch call, so it needs no callback on the program's copies.
  const std::pair<CUpti_CallbackDomain, CUpti_CallbackId> domains[] = {
      {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE},
      {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE}};
  for (const auto& [domain, size] : domains) {
    std::vector<CallKind>& kinds = m_call_kinds[domain == CUPTI_CB_DOMAIN_DRIVER_API ? 1 : 0];
    kinds.assign(size, CallKind::kOther);
    for (CUpti_CallbackId cbid = 1; cbid < size; ++cbid) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
      const std::string_view n(name);
      if (n.find("GraphLaunch") != n.npos) {
        kinds[cbid] = CallKind::kGraphLaunch;
      } else if (!m_config.kernel_replay && (n.find("Memset") != n.npos || n.find("Memcpy") != n.npos)) {
        kinds[cbid] = CallKind::kEndsSession;
      } else {
        continue;
      }
      GPUSCOPE_CUPTI_LOG_CALL(cuptiEnableCallback(1, subscriber, domain, cbid));
    }
  }
  GPUSCOPE_CUPTI_LOG_CALL(
      cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
}

void KernelProfiler::fail(const std::string& what, const std::string& todo) {
  if (m_off) return;
  m_off = true;
  std::fprintf(stderr, "gpuscope kernels: %s; no more kernels are profiled in this process%s%s\n", what.c_str(),
               todo.empty() ? "" : ". What to do: ", todo.c_str());
  m_sink.post_message(log::Severity::kError, what + (todo.empty() ? "" : ". What to do: " + todo));
}

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

void KernelProfiler::begin(const CUpti_CallbackData* data, CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  ThreadLaunch& t = t_launch;
  t.active = false;
  const char* name = data->symbolName != nullptr ? data->symbolName : "";
  const bool eligible = m_config.nvtx_include_message.empty() || inside_nvtx_include();
  const collect::LaunchSelector::Decision d = m_selector->next(name, eligible);
  if (!d.profile) {
    end_sessions();  // this kernel must not take a range
    return;
  }
  ContextState* s = state_for(data->context);
  if (!s->session_open) end_sessions();  // another context's session
  ProfiledLaunch& l = t.launch;
  l = ProfiledLaunch{};
  l.launch_ns = Collector::now_ns();
  l.launch_index = d.launch_index;
  l.name = name;
  l.device_id = s->device_id;
  l.context_id = s->context_id;
  l.correlation_id = data->correlationId;
  l.passes = static_cast<std::uint32_t>(s->passes);
  t.stub = nullptr;
  t.replayed = false;
  read_function(read_params(domain, cbid, data->functionParams, l, &t.stub), l);

  if (!s->session_open) {
    const std::uint64_t t0 = Collector::now_ns();
    if (m_own_replay) {
      // Pass 0 is the program's own launch: memory saved as it is before it (only if there
      // are later passes to restore it for), then L2 flushed.
      const OwnCalls own(m_config.trace_cuda);
      if (s->passes > 1) s->replay->save();
      s->replay->flush_l2();
    }
    auto cfg = GPUSCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
    cfg.pRangeProfilerObject = s->profiler;
    cfg.configSize = s->config.size();
    cfg.pConfig = s->config.data();
    cfg.counterDataImageSize = s->counter_data.size();
    cfg.pCounterDataImage = s->counter_data.data();
    // Replay none: the single pass of a user-replay session (GPUSCOPE_RANGE_REPLAY, validation
    // only: an application-replay one, or one with a pushed range per launch, to compare); each
    // kernel runs once. Own replay: user replay too, gpuscope runs the later passes
    // (replay_passes).
    cfg.range = user_ranges() ? CUPTI_UserRange : CUPTI_AutoRange;
    const bool application = !m_config.kernel_replay && m_config.range_replay == RangeReplay::kApplication;
    cfg.replayMode = m_config.kernel_replay && !m_own_replay ? CUPTI_KernelReplay
                     : application                           ? CUPTI_ApplicationReplay
                                                             : CUPTI_UserReplay;
    cfg.maxRangesPerPass = s->capacity;
    cfg.numNestingLevels = 1;
    cfg.minNestingLevel = 1;
    cfg.passIndex = 0;
    cfg.targetNestingLevel = 1;
    auto start = GPUSCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
    start.pRangeProfilerObject = s->profiler;
    must(cuptiRangeProfilerSetConfig(&cfg), "cuptiRangeProfilerSetConfig");
    must(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
    s->session_open = true;
    s->stopped = false;
    s->all_passes = false;
    s->session.clear();
    m_open_sessions.fetch_add(1, std::memory_order_relaxed);
    m_timing.start_ns += Collector::now_ns() - t0;
    ++m_timing.sessions;
  }
  if (user_ranges()) {
    auto push = GPUSCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_PushRange_Params);
    push.pRangeProfilerObject = s->profiler;
    push.pRangeName = l.name.c_str();
    must(cuptiRangeProfilerPushRange(&push), "cuptiRangeProfilerPushRange");
  }
  t.state = s;
  t.active = true;
}

void KernelProfiler::end(const CUpti_CallbackData* data) {
  ThreadLaunch& t = t_launch;
  if (!t.active) return;
  t.active = false;
  auto* s = static_cast<ContextState*>(t.state);
  if (user_ranges()) {
    auto pop = GPUSCOPE_CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params);
    pop.pRangeProfilerObject = s->profiler;
    must(cuptiRangeProfilerPopRange(&pop), "cuptiRangeProfilerPopRange");
  }
  // A launch that failed ran no kernel and took no range (a pushed user range it did take: its
  // session's range count then differs from its launches' and its values are dropped).
  const bool launched = call_succeeded(data);
  if (launched && t.stub != nullptr && t.launch.registers_per_thread < 0) {
    read_runtime_attributes(t.stub, t.launch, m_config.verbose);
  }
  if (launched) s->session.push_back(std::move(t.launch));
  // Kernel replay: every session is one launch call (a failed launch leaves it empty).
  if (m_config.kernel_replay || s->session.size() >= m_batch) end_session(*s);
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

void KernelProfiler::on_failure(const char* during) noexcept {
  try {
    throw;
  } catch (const ProfilerFailure& f) {
    if (f.status == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
      fail(f.call + ": " + cupti_status_text(f.status) + ": this user may not read GPU performance counters",
           "allow them (as root: modprobe nvidia NVreg_RestrictProfilingToAdminUsers=0, or the "
           "options file in /etc/modprobe.d, then reload the driver) or run as an administrator; see "
           "https://developer.nvidia.com/ERR_NVGPUCTRPERM");
    } else if (f.status == CUPTI_ERROR_HARDWARE_BUSY) {
      fail(f.call + ": " + cupti_status_text(f.status) + ": another profiler (ncu, nsys, DCGM) holds the counters",
           "stop the other profiler (for DCGM: dcgmi profile --pause) and run again");
    } else if (f.status == CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED) {
      fail(f.call + ": " + cupti_status_text(f.status) + ": counters are not available on a MIG instance",
           "run on a whole GPU");
    } else {
      fail(f.call + " failed: " + cupti_status_text(f.status), "");
    }
  } catch (const ConfigRefused& e) {
    fail(e.what, e.todo);
  } catch (const PassReplayError& e) {
    fail(std::string("gpuscope's own replay (--cache-control all): ") + e.what(),
         "run with --cache-control none (CUPTI's kernel replay, no cache flush)");
  } catch (const collect::MetricCatalogError& e) {
    fail(e.what(), "check the names with gpuscope kernels --list-metrics FILTER");
  } catch (...) {
    fail(std::string(during) + " failed", "");
  }
}

void KernelProfiler::on_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                            const CUpti_CallbackData* data) noexcept {
  if (data == nullptr) return;
  if (t_own_calls) return;                // gpuscope's flush kernel, checkpoint or replayed launch
  if (!is_kernel_launch(domain, cbid)) {  // memset, memcpy, graph launch: no range for them
    if (data->callbackSite != CUPTI_API_ENTER) return;
    const std::vector<CallKind>& kinds = m_call_kinds[domain == CUPTI_CB_DOMAIN_DRIVER_API ? 1 : 0];
    const CallKind kind = cbid < kinds.size() ? kinds[cbid] : CallKind::kOther;
    if (kind == CallKind::kOther) return;
    if (kind == CallKind::kGraphLaunch) on_graph_launch();
    if (m_open_sessions.load(std::memory_order_relaxed) == 0) return;
    std::lock_guard lock(m_mutex);
    end_sessions();
    return;
  }
  ThreadLaunch& t = t_launch;
  if (data->callbackSite == CUPTI_API_ENTER) {
    if (++t.depth > 1) {
      // A driver launch inside the runtime's: its CUfunction gives registers and shared memory.
      if (t.active && domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        ProfiledLaunch scratch;
        const void* stub = nullptr;
        read_function(read_params(domain, cbid, data->functionParams, scratch, &stub), t.launch);
      }
      return;
    }
    m_mutex.lock();  // released at this launch's exit: one profiled launch at a time
    try {
      if (!m_off) begin(data, domain, cbid);
    } catch (...) {
      t.active = false;
      on_failure("range profiler setup");
    }
  } else {
    if (t.depth == 0) return;  // enter was seen before kernels mode began
    const bool outer = --t.depth == 0;
    try {
      // Own replay: the later passes run at the exit of the innermost launch call (the driver's
      // inside a runtime launch), while the launch's parameters are still the caller's.
      if (t.active && m_own_replay && !t.replayed) {
        t.replayed = true;
        if (call_succeeded(data)) {
          replay_passes(*static_cast<ContextState*>(t.state),
                        domain == CUPTI_CB_DOMAIN_DRIVER_API
                            ? DriverLaunch::from_driver_callback(cbid, data->functionParams)
                            : DriverLaunch{});
        }
      }
      if (outer) end(data);
    } catch (...) {
      on_failure(outer ? "range profiler decode" : "range profiler replay");
    }
    if (outer) m_mutex.unlock();
  }
}

void KernelProfiler::on_graph_launch() noexcept {
  if (m_graph_warned) return;
  m_graph_warned = true;
  m_sink.post_message(log::Severity::kWarning,
                      "the program launches CUDA graphs: kernels inside graphs are not profiled (kernel replay "
                      "profiles stream launches only)");
}

void KernelProfiler::on_context_destroy(CUcontext ctx) noexcept {
  std::lock_guard lock(m_mutex);
  auto it = m_contexts.find(ctx);
  if (it == m_contexts.end()) return;
  try {
    end_session(*it->second);  // the context still exists while its destruction starts
  } catch (...) {
    on_failure("range profiler decode");
  }
  m_contexts.erase(it);
}

void KernelProfiler::finish() noexcept {
  try {
    std::lock_guard lock(m_mutex);
    end_sessions();
    m_contexts.clear();
    if (m_config.verbose) {
      const auto ms = [](std::uint64_t ns) { return static_cast<double>(ns) / 1e6; };
      std::fprintf(stderr,
                   "gpuscope: range profiler: %llu launches recorded in %llu sessions (%s replay); setup %.1f ms, "
                   "SetConfig+Start %.1f ms, Stop+decode+evaluate %.1f ms, own replay %.1f ms (%llu passes)\n",
                   static_cast<unsigned long long>(m_timing.launches),
                   static_cast<unsigned long long>(m_timing.sessions),
                   m_own_replay ? "gpuscope's" : (m_config.kernel_replay ? "kernel" : "no"), ms(m_timing.setup_ns),
                   ms(m_timing.start_ns), ms(m_timing.end_ns), ms(m_timing.replay_ns),
                   static_cast<unsigned long long>(m_timing.replayed_passes));
    }
    if (m_selector && m_selector->profiled() == 0 && !m_off) {
      std::string seen;
      for (const std::string& n : m_selector->names_seen()) seen += (seen.empty() ? "" : ", ") + n;
      m_sink.post_message(log::Severity::kWarning,
                          "no kernel launch was profiled: " + std::to_string(m_selector->launches()) +
                              " launch(es) seen, " + std::to_string(m_selector->matched()) + " matched the filters" +
                              (seen.empty() ? "" : "; kernels seen: " + seen));
    }
  } catch (...) {
  }
}

std::vector<ProfiledLaunch> KernelProfiler::take() noexcept {
  std::vector<ProfiledLaunch> out;
  try {
    std::lock_guard lock(m_done_mutex);
    out.swap(m_done);
  } catch (...) {
  }
  return out;
}

}  // namespace gpuscope::collect::detail
