#include "collect/kernel_profiler.hpp"

#include <cstdio>
#include <regex>
#include <span>
#include <string_view>
#include <utility>

#include "collect/collector.hpp"
#include "collect/cupti_check.hpp"
#include "collect/kernel_launch_params.hpp"
#include "collect/kernel_profiler_sessions.hpp"
#include "collect/metric_catalog.hpp"

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

}  // namespace

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
  enable(CUPTI_CB_DOMAIN_RUNTIME_API, runtime_launch_cbids());
  enable(CUPTI_CB_DOMAIN_DRIVER_API, driver_launch_cbids());
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

  if (!s->session_open) start_session(*s);
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
  if (own_calls_running()) return;        // gpuscope's flush kernel, checkpoint or replayed launch
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
