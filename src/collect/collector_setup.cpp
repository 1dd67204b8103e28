// The collector's life: initialisation once per process (config, log file, ProcessRecord,
// the start of capture, the writer thread, exit and fork handlers), CUPTI setup once from
// InitializeInjection (subscriber, activity buffers and kinds, callbacks), and the exit
// handler that hands everything over to the writer and waits for it.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "collect/api_filter.hpp"
#include "collect/collector.hpp"
#include "collect/python_callsites.hpp"
#include "collect/cupti_check.hpp"
#include "collect/kernel_profiler.hpp"
#include "collect/log_path.hpp"
#include "collect/metric_catalog.hpp"
#include "collect/os_reads.hpp"
#include "core/version.hpp"

namespace gpuscope::collect::detail {
namespace {

using collect::CaptureRange;

constexpr std::size_t kMaxFreeBuffers = 8;
constexpr std::size_t kPrefillBuffers = 4;
constexpr unsigned kMaxLogNameAttempts = 1000;

// The callback ids of `domain` whose names `keep` (api_filter.hpp) accepts.
std::vector<CUpti_CallbackId> cbids_named(CUpti_CallbackDomain domain, CUpti_CallbackId size,
                                          collect::ApiNameFilter keep) {
  std::vector<CUpti_CallbackId> out;
  for (CUpti_CallbackId cbid = 1; cbid < size; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    if (keep(name)) out.push_back(cbid);
  }
  return out;
}

// The callback ids of `domain` whose calls are GPU work (api_filter.hpp), by name.
std::vector<CUpti_CallbackId> gpu_work_cbids(CUpti_CallbackDomain domain, CUpti_CallbackId size) {
  return cbids_named(domain, size, &collect::is_gpu_work_api);
}

std::once_flag g_init_once;

void check_sink(const char* text) noexcept {
  if (Collector* c = Collector::active()) c->post_message(log::Severity::kWarning, text);
}

}  // namespace

// ---------------------------------------------------------------- init

Collector::Collector(collect::CollectorConfig config)
    : m_config(std::move(config)),
      m_pid(static_cast<std::uint32_t>(::getpid())),
      m_pool(m_config.buffer_bytes, kMaxFreeBuffers, m_config.zero_buffers),
      m_capture(m_config.capture_range, m_config.capture_end, true),
      m_session_windows(collect::session_stop_grace_ns(m_config.flush_period_ms)) {}

Collector* Collector::get_or_init() noexcept {
  try {
    std::call_once(g_init_once, &Collector::init_process);
  } catch (...) {
  }
  return active();
}

void Collector::init_process() noexcept {
  try {
    std::vector<std::string> warnings;
    collect::CollectorConfig config =
        collect::parse_collector_config([](const char* name) -> const char* { return std::getenv(name); }, &warnings);
    for (const auto& w : warnings) std::fprintf(stderr, "gpuscope: %s\n", w.c_str());
    if (!config.enabled()) {
      if (config.verbose) std::fprintf(stderr, "gpuscope: GPUSCOPE_LOG_DIR unset: collector off\n");
      return;
    }
    set_check_verbose(config.verbose);

    auto* c = new Collector(std::move(config));  // leaked on purpose (see header)
    c->m_config_warnings = std::move(warnings);

    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "unknown");
    std::string error;
    bool opened = false;
    for (unsigned attempt = 0; attempt < kMaxLogNameAttempts && !opened; ++attempt) {
      c->m_log_path = collect::log_file_path(c->m_config.log_dir, host, c->m_pid, attempt);
      struct stat st {};
      if (::stat(c->m_log_path.c_str(), &st) == 0) continue;  // pid reuse: next suffix
      opened = c->m_writer.open(c->m_log_path, c->m_pid, &error);
      if (!opened && ::stat(c->m_log_path.c_str(), &st) != 0) break;  // not a name clash
    }
    if (!opened) {
      std::fprintf(stderr, "gpuscope: %s; nothing will be recorded in process %u\n",
                   error.empty() ? "cannot create the event log" : error.c_str(), c->m_pid);
      return;
    }

    // One clock: CUPTI's. Offset to convert the launcher's CLOCK_REALTIME origin.
    const std::uint64_t rt0 = realtime_ns();
    c->m_start_ns = now_ns();
    const std::uint64_t rt1 = realtime_ns();
    c->m_realtime_to_cupti_ns = static_cast<std::int64_t>(c->m_start_ns) - static_cast<std::int64_t>(rt0 / 2 + rt1 / 2);
    c->m_torch_tsc = c->m_config.tsc && collect::tsc_usable();
    if (c->m_torch_tsc) c->m_torch_anchor = collect::take_tsc_anchor([] { return now_ns(); });

    c->write_process_record();
    for (const auto& w : c->m_config_warnings) {
      log::MessageRecord m{};
      m.ts_ns = c->m_start_ns;
      m.text_string = c->m_writer.intern(w);
      m.severity = static_cast<std::uint8_t>(log::Severity::kWarning);
      c->m_writer.add(log::RecordKind::kMessage, m);
    }

    // Capture state at start.
    const auto& cfg = c->m_config;
    c->m_gate = collect::compute_time_gate(cfg.launch_realtime_ns, cfg.delay_ns, cfg.duration_ns,
                                           c->m_realtime_to_cupti_ns, c->m_start_ns);
    c->m_capture =
        collect::CaptureController(cfg.capture_range, cfg.capture_end, c->m_start_ns >= c->m_gate.open_at_ns);
    if (c->m_gate.close_at_ns != 0 && c->m_start_ns >= c->m_gate.close_at_ns) {
      (void)c->m_capture.close_time_gate();  // started after the window: record nothing
    }
    if (auto edge = c->m_capture.begin()) c->handle_edge_locked(*edge, c->m_start_ns);
    // handle_edge_locked posted the edge; write it now with the header.
    c->drain();
    c->m_writer.flush();

    if (cfg.verbose) {
      std::fprintf(stderr,
                   "gpuscope: collector %s in pid %u: log %s, trace%s%s, capture range %d, "
                   "flush %u ms, buffers %llu bytes\n",
                   kVersion, c->m_pid, c->m_log_path.c_str(), cfg.trace_cuda ? " cuda" : "",
                   cfg.trace_nvtx ? " nvtx" : "", static_cast<int>(cfg.capture_range), cfg.flush_period_ms,
                   static_cast<unsigned long long>(cfg.buffer_bytes));
    }

    // Writer thread with all signals blocked: the target's handlers must never
    // run on our thread.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    try {
      c->m_thread = std::thread([c] { c->writer_main(); });
    } catch (...) {
      pthread_sigmask(SIG_SETMASK, &old, nullptr);
      std::fprintf(stderr, "gpuscope: cannot start the writer thread; nothing will be recorded\n");
      c->m_writer.close();
      return;
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);

    s_instance = c;
    set_check_sink(&check_sink);
    std::atexit(&Collector::on_exit);
    pthread_atfork(nullptr, nullptr, &Collector::on_fork_child);
    s_active.store(c, std::memory_order_release);
  } catch (...) {
    std::fprintf(stderr, "gpuscope: collector initialisation failed; nothing will be recorded\n");
  }
}

// ---------------------------------------------------------------- CUPTI setup

void Collector::setup_cupti() noexcept {
  static std::once_flag once;
  try {
    std::call_once(once, [this] {
      const bool profiler_capture = m_config.capture_range == CaptureRange::kCudaProfilerApi;
      if (!m_config.trace_cuda && !profiler_capture && !m_config.kernels_mode()) return;
      if (!subscribe()) return;
      if (m_config.kernels_mode()) {
        setup_kernels_mode();
        return;
      }
      if (profiler_capture) {
        GPUSCOPE_CUPTI_LOG_CALL(cuptiEnableCallback(1, m_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                                    CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000));
        GPUSCOPE_CUPTI_LOG_CALL(cuptiEnableCallback(1, m_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                                    CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000));
        GPUSCOPE_CUPTI_LOG_CALL(
            cuptiEnableCallback(1, m_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart));
        GPUSCOPE_CUPTI_LOG_CALL(
            cuptiEnableCallback(1, m_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop));
      }
      if (m_config.trace_cuda) setup_activity_tracing();
    });
  } catch (...) {
  }
}

// Claims the process's single CUPTI subscriber slot first, so a later client
// (torch.profiler/Kineto) fails cleanly instead of hijacking our activity buffers (both
// would lose everything). False (and said) when another client holds it, or on failure.
bool Collector::subscribe() {
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN * 2] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "gpuscope";
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = sizeof holder;
  const CUptiResult sub =
      GPUSCOPE_CUPTI_LOG_CALL_EXPECT(cuptiSubscribe_v2(&m_subscriber, &Collector::on_callback, this, &params),
                                     CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  if (sub == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    holder[sizeof holder - 1] = '\0';
    const std::string who = holder[0] != '\0' ? holder : "unknown";
    std::fprintf(stderr,
                 "gpuscope: another CUPTI client (%s) already profiles this process (ncu, "
                 "nsys or torch.profiler); gpuscope cannot record GPU activity here\n",
                 who.c_str());
    post_message(log::Severity::kError, "another CUPTI client (" + who +
                                            ") already profiles this process (ncu, nsys or torch.profiler); "
                                            "gpuscope cannot record GPU activity here");
    // Registering our activity buffers now would steal the other tool's
    // records: only NVTX and process information are recorded.
    return false;
  }
  if (sub != CUPTI_SUCCESS) {
    post_message(log::Severity::kError, "cuptiSubscribe_v2 failed: no GPU activity recorded");
    return false;
  }
  return true;
}

// Kernels mode: counters per launch (kernel_profiler.hpp). Activity tracing, if asked
// for, is limited to kernels, devices and contexts (launch facts, the devices table); API,
// memcpy and sync records are not collected.
void Collector::setup_kernels_mode() {
  m_kernels = std::make_unique<KernelProfiler>(*this, m_config);
  m_kernels->enable_callbacks(m_subscriber);
  if (m_config.trace_cuda && GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityRegisterCallbacks(
                                 &Collector::buffer_requested, &Collector::buffer_completed)) == CUPTI_SUCCESS) {
    GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityFlushPeriod(m_config.flush_period_ms));
    GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_DEVICE));
    GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_CONTEXT));
    m_cupti_ready.store(true, std::memory_order_release);
  }
  if (m_config.verbose) std::fprintf(stderr, "gpuscope: kernels mode, %zu metrics\n", m_config.kernel_metrics.size());
}

// Trace mode (GPUSCOPE_TRACE with cuda): our API callbacks, the activity buffers, the
// activity kinds that are not switched with the capture windows, and then those that are
// if a window is open already.
void Collector::setup_activity_tracing() {
  // In a session nothing per launch runs before the first window (launch callbacks and kernel
  // records come on with the first `gpuscope start`), so a program waiting for it runs as
  // untraced.
  const bool session = m_config.capture_range == CaptureRange::kSession;
  // API records carry the OS thread id (gettid), like our NVTX records.
  if (m_config.system_thread_ids) {
    GPUSCOPE_CUPTI_LOG_CALL(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
  }
  if (m_config.api_calls == collect::ApiCalls::kGpu) {
    // Our own callbacks time the GPU-work calls (on_api_callback); they stay enabled
    // and check the capture window themselves. Measured on H100 against CUPTI's
    // RUNTIME/DRIVER activity kinds (which also intercept every driver call a runtime
    // call makes) and against activity records enabled per callback id: this costs
    // least per launch (docs/performance.md).
    m_api_cbids[0] = gpu_work_cbids(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
    m_api_cbids[1] = gpu_work_cbids(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
    if (m_config.polling_calls) {  // asked for: timed the same way
      const auto rt = collect::noisy_runtime_cbids();
      const auto drv = collect::noisy_driver_cbids();
      m_api_cbids[0].insert(m_api_cbids[0].end(), rt.begin(), rt.end());
      m_api_cbids[1].insert(m_api_cbids[1].end(), drv.begin(), drv.end());
    }
    m_fast_clock = clock_matches_cupti();
    setup_python_callsites();
    // A session (gpuscope launch) turns them on with each window: none outside.
    if (!session) set_launch_callbacks(true);
    m_api_callbacks.store(true, std::memory_order_release);
  }
  if (m_config.zero_buffers) {
    // Buffers come zeroed from the pool (zeroed on the writer thread), so CUPTI need
    // not clear each new buffer on the application thread that asked for it.
    std::uint8_t zeroed = 1;
    std::size_t size = sizeof zeroed;
    GPUSCOPE_CUPTI_LOG_CALL(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &size, &zeroed));
  }
  if (GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityRegisterCallbacks(&Collector::buffer_requested,
                                                             &Collector::buffer_completed)) != CUPTI_SUCCESS) {
    post_message(log::Severity::kError, "cuptiActivityRegisterCallbacks failed: no GPU activity");
    return;
  }
  GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityFlushPeriod(m_config.flush_period_ms));
  // A buffer allocated mid-run stalls the launch that asked for it (Kineto found
  // the same, kineto#1020): have a few ready before the program's first launch.
  m_pool.prefill(kPrefillBuffers);

  if (!session) set_kernel_kinds(true);
  if (m_config.cuda_records & collect::kRecordMemory) enable_memory_records();
  // AndDump: also emits devices/contexts that exist already (late attach).
  GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_DEVICE));
  GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_CONTEXT));

  m_cupti_ready.store(true, std::memory_order_release);
  // Gated kinds start disabled; enable them if a window is already open
  // (an edge racing with this is applied by its own apply_recording()).
  if (m_recording.load()) apply_recording();
  if (m_config.verbose) std::fprintf(stderr, "gpuscope: CUPTI activity tracing on\n");
}

// --cuda-memory-usage. Not gated by the capture windows (unlike memcpy): memory in use at
// any moment depends on every allocation before it, so all are recorded and the importer
// keeps the rows inside the windows. A kind CUPTI refuses leaves the trace without it.
void Collector::enable_memory_records() noexcept {
  // Called raw (not through GPUSCOPE_CUPTI_LOG_CALL): a refusal gets one message, this one.
  const auto enabled = [&](CUpti_ActivityKind kind, const char* what, const char* consequence) {
    const CUptiResult status = cuptiActivityEnable(kind);
    if (status == CUPTI_SUCCESS) return true;
    try {
      const std::string text = std::string("--cuda-memory-usage: CUPTI refused to record ") + what +
                               " in this process (" + collect::cupti_status_text(status) + "); " + consequence;
      std::fprintf(stderr, "gpuscope: %s\n", text.c_str());
      post_message(log::Severity::kWarning, text);
    } catch (...) {  // out of memory for the message: the trace goes on regardless
    }
    return false;
  };
  m_memory_kinds = enabled(CUPTI_ACTIVITY_KIND_MEMORY2, "memory allocations (MEMORY2 activity)",
                           "the trace goes on without them (no memory_events, no cuda_memory report)");
  if (!m_memory_kinds) return;
  m_memory_pool_kind = enabled(CUPTI_ACTIVITY_KIND_MEMORY_POOL, "memory pool operations (MEMORY_POOL activity)",
                               "allocations and frees are recorded, pool creation and trimming are not");
  if (m_memory_pool_kind && m_config.verbose) std::fprintf(stderr, "gpuscope: memory allocation records on\n");
}

// CUPTI's default clock on Linux is CLOCK_REALTIME (cupti_activity.h,
// cuptiActivityRegisterTimestampCallback): read it directly (vDSO, no call into CUPTI)
// when a side-by-side reading agrees within 50 us, else use cuptiGetTimestamp.
bool Collector::clock_matches_cupti() noexcept {
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t a = realtime_ns();
    const std::uint64_t c = now_ns();
    const std::uint64_t b = realtime_ns();
    const std::uint64_t mid = a / 2 + b / 2;
    const std::uint64_t diff = c > mid ? c - mid : mid - c;
    if (b - a < 50'000 && diff < 50'000) return true;
  }
  return false;
}

// Python call sites: only in a process with a CPython the walker knows (no-op elsewhere),
// at the GPU-work calls our callbacks time (GPUSCOPE_API_CALLS=gpu).
void Collector::setup_python_callsites() {
  std::string note;
  m_python = PythonCallSites::create(m_config.python_callsites, &note, m_config.python_sampling_hz, &Collector::now_ns);
  // A Python the walker cannot read: a warning where stacks were asked for, else a note in the trace.
  const bool asked = !m_config.python_callsites_by_default || m_config.python_sampling_hz > 0;
  if (!note.empty()) post_message(asked ? log::Severity::kWarning : log::Severity::kInfo, note);
  if (!m_python) return;
  // Samples alone (--python-sampling, --python-callsites=none): no call takes a stack.
  const collect::ApiNameFilter keep = collect::python_callsite_filter(m_config.python_callsites);
  if (keep == nullptr) return;
  m_python->select(CUPTI_CB_DOMAIN_RUNTIME_API,
                   cbids_named(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, keep));
  m_python->select(CUPTI_CB_DOMAIN_DRIVER_API,
                   cbids_named(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, keep));
  if (m_config.verbose) std::fprintf(stderr, "gpuscope: Python call sites on\n");
}

// ---------------------------------------------------------------- exit / fork

void Collector::shutdown() noexcept {
  if (static_cast<std::uint32_t>(::getpid()) != m_pid) return;  // forked child
  if (m_shutdown.exchange(true)) return;
  try {
    // Stop app-thread recording first, then collect everything CUPTI holds.
    s_active.store(nullptr, std::memory_order_release);
    if (m_kernels) m_kernels->finish();
    if (m_cupti_ready.load()) {
      GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    }
    {
      std::lock_guard lock(m_wake_mutex);
      m_stop.store(true);
    }
    m_wake_cv.notify_one();
    if (m_thread.joinable() && m_thread.get_id() != std::this_thread::get_id()) m_thread.join();
  } catch (...) {
  }
}

void Collector::on_exit() noexcept {
  if (s_instance != nullptr) s_instance->shutdown();
}

void Collector::on_fork_child() noexcept {
  // The child has no writer thread and must not write into the parent's log;
  // a forked child cannot use CUDA anyway if the parent initialised it. A
  // child that execs gets a fresh injection through the environment.
  s_active.store(nullptr, std::memory_order_release);
  // The PyTorch observer's threads check this flag, not s_active, before each edge.
  if (s_instance != nullptr) s_instance->m_recording.store(false, std::memory_order_relaxed);
}

}  // namespace gpuscope::collect::detail
