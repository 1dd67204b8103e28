#include "collect/collector.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "collect/activity_convert.hpp"
#include "collect/api_filter.hpp"
#include "collect/api_ring.hpp"
#include "collect/cupti_check.hpp"
#include "collect/launcher_ranks.hpp"
#include "collect/log_path.hpp"
#include "collect/metric_catalog.hpp"
#include "core/version.hpp"
#include "store/data_loss_kinds.hpp"

namespace gpuscope::collect::detail {
namespace {

using collect::CaptureRange;

constexpr std::size_t kMaxFreeBuffers = 8;
constexpr std::size_t kPrefillBuffers = 4;
constexpr std::size_t kBacklogWarnBuffers = 64;
constexpr std::size_t kMaxHostEvents = std::size_t{1} << 20;  // ~100 MB worst case
constexpr unsigned kMaxLogNameAttempts = 1000;

// Kinds switched off outside capture windows. CONCURRENT_KERNEL stays on from
// the start (enabling it late slows module loads); the importer clips kernels.
struct GatedKind {
  CUpti_ActivityKind kind;
  std::uint32_t record_bit;  // collect::CudaRecord
};
constexpr GatedKind kGatedKinds[] = {
    {CUPTI_ACTIVITY_KIND_RUNTIME, collect::kRecordRuntime}, {CUPTI_ACTIVITY_KIND_DRIVER, collect::kRecordDriver},
    {CUPTI_ACTIVITY_KIND_MEMCPY, collect::kRecordMemcpy},   {CUPTI_ACTIVITY_KIND_MEMCPY2, collect::kRecordMemcpyPeer},
    {CUPTI_ACTIVITY_KIND_MEMSET, collect::kRecordMemset},   {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, collect::kRecordSync},
};

// The callback ids of `domain` whose calls are GPU work (api_filter.hpp), by name.
std::vector<CUpti_CallbackId> gpu_work_cbids(CUpti_CallbackDomain domain, CUpti_CallbackId size) {
  std::vector<CUpti_CallbackId> out;
  for (CUpti_CallbackId cbid = 1; cbid < size; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    if (collect::is_gpu_work_api(name)) out.push_back(cbid);
  }
  return out;
}

std::once_flag g_init_once;

std::uint32_t current_tid() noexcept { return static_cast<std::uint32_t>(::syscall(SYS_gettid)); }

std::uint64_t realtime_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void check_sink(const char* text) noexcept {
  if (Collector* c = Collector::active()) c->post_message(log::Severity::kWarning, text);
}

}  // namespace

// ---------------------------------------------------------------- init

Collector::Collector(collect::CollectorConfig config)
    : m_config(std::move(config)),
      m_pid(static_cast<std::uint32_t>(::getpid())),
      m_pool(m_config.buffer_bytes, kMaxFreeBuffers, m_config.zero_buffers),
      m_capture(m_config.capture_range, m_config.capture_end, true) {}

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

void Collector::write_process_record() {
  log::ProcessRecord p{};
  p.pid = m_pid;
  p.ppid = static_cast<std::uint32_t>(::getppid());
  p.start_ns = m_start_ns;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  p.host_string = m_writer.intern(host);
  std::string cmdline = read_file("/proc/self/cmdline");
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();  // keep inner '\0'
  p.cmdline_string = m_writer.intern(cmdline);
  char exe[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) p.exe_string = m_writer.intern(std::string_view(exe, static_cast<std::size_t>(n)));
  p.version_string = m_writer.intern(kVersion);
  // Older readers see the rank in the ProcessRecord; the RankRecord after it adds the
  // world size and the launcher.
  const collect::LauncherRanks ranks = collect::launcher_ranks(&std::getenv);
  p.rank = ranks.rank;
  p.local_rank = ranks.local_rank;
  std::uint32_t cupti_version = 0;
  if (GPUSCOPE_CUPTI_LOG_CALL(cuptiGetVersion(&cupti_version)) == CUPTI_SUCCESS) {
    p.cupti_api_version = cupti_version;
  }
  int driver = 0;
  if (GPUSCOPE_CU_LOG_CALL(cuDriverGetVersion(&driver)) == CUDA_SUCCESS) {
    p.cuda_driver_version = static_cast<std::uint32_t>(driver);
  }
  m_writer.add(log::RecordKind::kProcess, p);
  if (ranks.launcher != log::RankLauncher::kNone) {
    log::RankRecord r{};
    r.rank = ranks.rank;
    r.local_rank = ranks.local_rank;
    r.world_size = ranks.world_size;
    r.launcher = static_cast<std::uint8_t>(ranks.launcher);
    m_writer.add(log::RecordKind::kRank, r);
  }
}

// ---------------------------------------------------------------- CUPTI setup

void Collector::setup_cupti() noexcept {
  static std::once_flag once;
  try {
    std::call_once(once, [this] {
      const bool profiler_capture = m_config.capture_range == CaptureRange::kCudaProfilerApi;
      // In a session nothing per launch runs outside the windows (launch callbacks and kernel
      // records come on with `gpuscope start`), so a program waiting for it runs as untraced.
      const bool session = m_config.capture_range == CaptureRange::kSession;
      if (!m_config.trace_cuda && !profiler_capture && !m_config.kernels_mode()) return;

      // Claim the process's single CUPTI subscriber slot first, so a later
      // client (torch.profiler/Kineto) fails cleanly instead of hijacking our
      // activity buffers (both would lose everything).
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
        return;
      }
      if (sub != CUPTI_SUCCESS) {
        post_message(log::Severity::kError, "cuptiSubscribe_v2 failed: no GPU activity recorded");
        return;
      }

      if (m_config.kernels_mode()) {
        // Kernels mode: counters per launch (kernel_profiler.hpp). Activity tracing, if
        // asked for, is limited to kernels, devices and contexts (launch facts, the
        // devices table); API, memcpy and sync records are not collected.
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
        if (m_config.verbose)
          std::fprintf(stderr, "gpuscope: kernels mode, %zu metrics\n", m_config.kernel_metrics.size());
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
      if (!m_config.trace_cuda) return;

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
        // A session (gpuscope launch) turns them on with each window: none outside.
        if (!session) set_launch_callbacks(true);
        m_api_callbacks.store(true, std::memory_order_release);
      }
      if (m_config.zero_buffers) {
        // Buffers come zeroed from the pool (zeroed on the writer thread), so CUPTI need
        // not clear each new buffer on the application thread that asked for it.
        std::uint8_t zeroed = 1;
        std::size_t size = sizeof zeroed;
        GPUSCOPE_CUPTI_LOG_CALL(
            cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &size, &zeroed));
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
    });
  } catch (...) {
  }
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

void Collector::set_gated_kinds(bool on) noexcept {
  const bool api_kinds = m_config.api_calls == collect::ApiCalls::kAll;
  for (const GatedKind& g : kGatedKinds) {
    if ((m_config.cuda_records & g.record_bit) == 0) continue;
    // With --cuda-api=gpu our own callbacks record the API calls (on_api_callback).
    if (!api_kinds && (g.kind == CUPTI_ACTIVITY_KIND_RUNTIME || g.kind == CUPTI_ACTIVITY_KIND_DRIVER)) continue;
    if (on) {
      GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityEnable(g.kind));
    } else {
      GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityDisable(g.kind));
    }
  }
  if (on && !m_config.polling_calls) {
    if (api_kinds) {
      // Must follow cuptiActivityEnable(RUNTIME/DRIVER), which resets per-cbid settings.
      for (CUpti_CallbackId cbid : collect::noisy_runtime_cbids()) {
        GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityEnableRuntimeApi(cbid, 0));
      }
      for (CUpti_CallbackId cbid : collect::noisy_driver_cbids()) {
        GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityEnableDriverApi(cbid, 0));
      }
    }
    // Only event/stream queries that found the work done.
    GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityEnableAllSyncRecords(0));
  }
}

void Collector::set_launch_callbacks(bool on) noexcept {
  if (m_subscriber == nullptr) return;
  if (on) m_api_epoch.fetch_add(1, std::memory_order_relaxed);
  const std::pair<CUpti_CallbackDomain, std::uint32_t> domains[] = {
      {CUPTI_CB_DOMAIN_RUNTIME_API, collect::kRecordRuntime}, {CUPTI_CB_DOMAIN_DRIVER_API, collect::kRecordDriver}};
  for (const auto& entry : domains) {  // no structured binding: the checking macro's lambda names it
    const CUpti_CallbackDomain domain = entry.first;
    if ((m_config.cuda_records & entry.second) == 0) continue;
    for (CUpti_CallbackId cbid : m_api_cbids[domain == CUPTI_CB_DOMAIN_DRIVER_API ? 1 : 0]) {
      GPUSCOPE_CUPTI_LOG_CALL(cuptiEnableCallback(on ? 1 : 0, m_subscriber, domain, cbid));
    }
  }
}

void Collector::set_kernel_kinds(bool on) noexcept {
  for (const auto& entry : {std::pair{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, collect::kRecordKernel},
                            std::pair{CUPTI_ACTIVITY_KIND_OVERHEAD, collect::kRecordOverhead}}) {
    const CUpti_ActivityKind kind = entry.first;
    if ((m_config.cuda_records & entry.second) == 0) continue;
    if (on) {
      GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityEnable(kind));
    } else {
      GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityDisable(kind));
    }
  }
}

// Makes CUPTI follow m_recording. Edges may race (profiler callback on one
// thread, timer on another), so re-check after applying until it is stable.
// No lock is held while calling CUPTI, to avoid lock-order inversions with
// CUPTI's own locks in API callbacks.
void Collector::apply_recording() noexcept {
  if (!m_cupti_ready.load(std::memory_order_acquire) || m_kernels) return;
  const bool session = m_config.capture_range == CaptureRange::kSession;
  for (int i = 0; i < 4; ++i) {
    const bool want = m_recording.load();
    set_gated_kinds(want);
    if (session) {
      if (m_api_callbacks.load()) set_launch_callbacks(want);
      // Kernel records go off only after the stop's grace period (finish_session_stop), so
      // kernels launched inside the window are still delivered.
      if (want) set_kernel_kinds(true);
    }
    if (m_recording.load() == want) return;
  }
}

// ---------------------------------------------------------------- session (gpuscope start/stop)

void Collector::poll_session() noexcept {
  if (m_config.capture_range != CaptureRange::kSession) return;
  try {
    // Only a regular file of this process's own user in a private folder is obeyed: anything
    // else is logged once and ignored (collect/session_control.hpp).
    store::PrivateStatus status;
    const auto command = collect::read_session_file(std::filesystem::path(m_config.session_dir) / "control", &status);
    if (!status.ok() && status.problem != store::PrivateProblem::kMissing && status.message != m_session_refused) {
      m_session_refused = status.message;
      std::fprintf(stderr, "gpuscope: pid %u: session control ignored: %s\n", m_pid, status.message.c_str());
    }
    if (!command || command->generation <= m_session_generation) return;
    m_session_generation = command->generation;
    bool changed = false;
    {
      std::lock_guard lock(m_capture_mutex);
      auto edge = command->start ? m_capture.range_start("session") : m_capture.range_stop("session");
      if (edge) {
        handle_edge_locked(*edge, now_ns());
        changed = true;
      }
    }
    if (changed) apply_recording();
    if (command->start) {
      m_session_stop_pending.reset();  // a start within a stop's grace: kernel records stay on
      write_session_ack(*command);
    } else {
      m_session_stop_pending = *command;
      m_session_stop_ns = now_ns();
    }
  } catch (...) {
  }
}

// After a stop, once the grace period has passed (or at exit: force): kernel records off,
// everything recorded so far in the log, then the ack that `gpuscope stop` waits for.
void Collector::finish_session_stop(bool force) noexcept {
  if (!m_session_stop_pending) return;
  const std::uint64_t grace = std::max<std::uint64_t>(500'000'000ull, 2ull * m_config.flush_period_ms * 1'000'000ull);
  if (!force && now_ns() - m_session_stop_ns < grace) return;
  try {
    if (!m_recording.load() && m_cupti_ready.load()) {
      set_kernel_kinds(false);
      GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    }
    drain();
    (void)m_writer.flush();
    write_session_ack(*m_session_stop_pending);
  } catch (...) {
  }
  m_session_stop_pending.reset();
}

void Collector::write_session_ack(const collect::SessionCommand& command) noexcept {
  try {
    const auto path = std::filesystem::path(m_config.session_dir) / ("ack." + std::to_string(m_pid));
    if (const store::PrivateStatus st = collect::write_session_file(path, collect::format_session_command(command));
        !st.ok() && m_config.verbose) {
      std::fprintf(stderr, "gpuscope: pid %u: %s\n", m_pid, st.message.c_str());
    }
  } catch (...) {
  }
}

// ---------------------------------------------------------------- capture

void Collector::handle_edge_locked(const collect::CaptureEdge& edge, std::uint64_t ts) {
  HostEvent e;
  e.kind = HostEvent::Kind::kCapture;
  e.type = static_cast<std::uint8_t>(edge.state);
  e.ts_ns = ts;
  e.text = edge.reason;
  post(std::move(e));
  m_recording.store(edge.state == log::CaptureState::kStart);
  if (m_config.verbose) {
    std::fprintf(stderr, "gpuscope: capture %s (%s)\n", edge.state == log::CaptureState::kStart ? "start" : "stop",
                 edge.reason.c_str());
  }
}

bool Collector::range_start(std::string_view reason, std::uint64_t ts_ns) noexcept {
  try {
    bool changed = false, opened = false;
    {
      std::lock_guard lock(m_capture_mutex);
      const bool was_open = m_capture.range_open();
      if (auto edge = m_capture.range_start(reason)) {
        handle_edge_locked(*edge, ts_ns != 0 ? ts_ns : now_ns());
        changed = true;
      }
      opened = !was_open && m_capture.range_open();
    }
    if (changed) apply_recording();
    return opened;
  } catch (...) {
    return false;
  }
}

void Collector::range_stop(std::string_view reason) noexcept {
  try {
    bool changed = false;
    {
      std::lock_guard lock(m_capture_mutex);
      if (auto edge = m_capture.range_stop(reason)) {
        handle_edge_locked(*edge, now_ns());
        changed = true;
      }
    }
    if (changed) apply_recording();
  } catch (...) {
  }
}

void Collector::check_time_gate() noexcept {
  try {
    bool changed = false;
    const std::uint64_t now = now_ns();
    {
      std::lock_guard lock(m_capture_mutex);
      if (!m_capture.time_gate_opened() && now >= m_gate.open_at_ns) {
        if (auto edge = m_capture.open_time_gate()) {
          handle_edge_locked(*edge, now);
          changed = true;
        }
      }
      if (m_gate.close_at_ns != 0 && !m_capture.time_gate_closed() && now >= m_gate.close_at_ns) {
        if (auto edge = m_capture.close_time_gate()) {
          handle_edge_locked(*edge, now);
          changed = true;
        }
      }
    }
    if (changed) apply_recording();
  } catch (...) {
  }
}

// After the final window (capture range end=stop, or the duration elapsed)
// nothing more is recorded: detach CUPTI so the target runs at full speed
// again (leaving it attached cost PyTorch training 10-20 %, pytorch PR 146604).
// Wait a grace period first so kernels launched inside the window complete and
// are delivered. The CUPTI "cupti_finalize" sample does this from a thread too.
void Collector::maybe_detach_cupti() noexcept {
  if (!m_cupti_ready.load()) return;
  {
    std::lock_guard lock(m_capture_mutex);
    if (!m_capture.finished()) return;
  }
  const std::uint64_t now = now_ns();
  if (m_finished_seen_ns == 0) m_finished_seen_ns = now;
  const std::uint64_t grace = std::max<std::uint64_t>(1'000'000'000ull, 2ull * m_config.flush_period_ms * 1'000'000ull);
  if (now - m_finished_seen_ns < grace) return;

  m_cupti_ready.store(false);
  for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_OVERHEAD,
                                  CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT}) {
    GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityDisable(kind));
  }
  if (m_memory_kinds) GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY2));
  if (m_memory_pool_kind) GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY_POOL));
  // Gated kinds were already disabled by the stop edge.
  GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  if (m_subscriber != nullptr) {
    GPUSCOPE_CUPTI_LOG_CALL(cuptiUnsubscribe(m_subscriber));
    m_subscriber = nullptr;
  }
  GPUSCOPE_CUPTI_LOG_CALL(cuptiFinalize());
  post_message(log::Severity::kInfo, "capture finished: CUPTI detached from the process");
  if (m_config.verbose) std::fprintf(stderr, "gpuscope: capture finished; CUPTI detached\n");
}

void CUPTIAPI Collector::on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                     const void* cbdata) {
  try {
    auto* c = static_cast<Collector*>(userdata);
    if (c == nullptr || active() != c || cbdata == nullptr) return;
    if (c->m_kernels) {
      if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
        c->m_kernels->on_context_destroy(static_cast<const CUpti_ResourceData*>(cbdata)->context);
      } else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        c->m_kernels->on_api(domain, cbid, static_cast<const CUpti_CallbackData*>(cbdata));
      }
      return;
    }
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
    const auto* data = static_cast<const CUpti_CallbackData*>(cbdata);
    if (c->m_api_callbacks.load(std::memory_order_relaxed)) c->on_api_callback(domain, cbid, *data);
    const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    const bool is_start = runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
                                  : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
    const bool is_stop = runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000
                                 : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
    // Edges at API entry: cudaProfilerStart enters before its nested
    // cuProfilerStart, so the reason names the call the program made; the
    // nested call's edge is ignored by the controller.
    if (is_start && data->callbackSite == CUPTI_API_ENTER) {
      c->range_start(runtime ? "cudaProfilerStart" : "cuProfilerStart");
    } else if (is_stop && data->callbackSite == CUPTI_API_ENTER) {
      c->range_stop(runtime ? "cudaProfilerStop" : "cuProfilerStop");
    }
  } catch (...) {
  }
}

// ---------------------------------------------------------------- API callbacks

namespace {

// Per application thread: the call being timed (outermost enabled call only: a runtime
// call's nested driver calls are part of it) and the thread's ring.
struct ApiThreadState {
  std::uint32_t depth = 0;
  std::uint32_t epoch = 0;  // Collector::m_api_epoch when depth was last valid
  std::uint64_t start_ns = 0;
  std::uint32_t tid = 0;
  collect::ApiRing* ring = nullptr;
  ~ApiThreadState() {
    // A CUDA call later in this thread's teardown (after its thread_locals are destroyed)
    // must not write into a ring the writer may already have freed.
    if (ring != nullptr) ring->orphan();
    ring = nullptr;
  }
};
thread_local ApiThreadState t_api;

}  // namespace

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

void Collector::on_api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const CUpti_CallbackData& data) noexcept {
  ApiThreadState& t = t_api;
  // Callbacks switched off between a call's entry and exit (a session's stop) leave its depth
  // behind: a new epoch (they came on again) starts from depth 0.
  const std::uint32_t epoch = m_api_epoch.load(std::memory_order_relaxed);
  if (t.epoch != epoch) {
    t.epoch = epoch;
    t.depth = 0;
  }
  if (data.callbackSite == CUPTI_API_ENTER) {
    if (t.depth++ == 0) t.start_ns = m_fast_clock ? realtime_ns() : now_ns();
    return;
  }
  if (t.depth == 0 || --t.depth != 0) return;  // exit without entry (enabled mid-call), or nested
  const std::uint64_t end = m_fast_clock ? realtime_ns() : now_ns();
  if (!recording()) return;
  if (t.ring == nullptr) {
    t.tid = current_tid();
    if (t.tid == m_writer_tid.load(std::memory_order_relaxed)) return;  // our own calls
    t.ring = m_api_rings.add_ring();
    if (t.ring == nullptr) return;
  }
  collect::ApiCallRecord r;
  r.start_ns = t.start_ns;
  r.end_ns = end;
  r.thread_id = t.tid;
  r.correlation_id = data.correlationId;
  r.cbid = cbid;
  r.driver = domain == CUPTI_CB_DOMAIN_DRIVER_API ? 1 : 0;
  if (data.functionReturnValue != nullptr) {
    r.return_value = r.driver ? static_cast<std::int32_t>(*static_cast<const CUresult*>(data.functionReturnValue))
                              : static_cast<std::int32_t>(*static_cast<const int*>(data.functionReturnValue));
  }
  bool wake = false;
  t.ring->push(r, &wake);
  if (wake) {
    m_wake.store(true, std::memory_order_release);
    m_wake_cv.notify_one();
  }
}

void Collector::drain_api_rings() {
  std::uint64_t dropped = 0;
  m_api_rings.drain_all(
      [&](const collect::ApiCallRecord& a) {
        const auto domain = a.driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
        m_writer.add(log::RecordKind::kApi, collect::to_api_record(a, api_name_id(domain, a.cbid)));
      },
      &dropped);
  if (dropped > 0) {
    log::DataLossRecord d{};
    d.ts_ns = now_ns();
    d.count = dropped;
    d.what_string = m_writer.intern(store::data_loss_name(store::DataLossKind::kApiRecordsDropped));
    m_writer.add(log::RecordKind::kDataLoss, d);
  }
}

// ---------------------------------------------------------------- buffers

void CUPTIAPI Collector::buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_num_records) {
  *buffer = nullptr;
  *size = 0;
  *max_num_records = 0;  // as many as fit
  Collector* c = s_instance;
  if (c == nullptr) return;
  if (std::uint8_t* b = c->m_pool.acquire()) {
    *buffer = b;
    *size = c->m_pool.buffer_bytes();
  }
}

void CUPTIAPI Collector::buffer_completed(CUcontext ctx, std::uint32_t stream_id, std::uint8_t* buffer,
                                          std::size_t /*size*/, std::size_t valid_size) {
  Collector* c = s_instance;
  if (c == nullptr || buffer == nullptr) return;
  try {
    // A fork child or a buffer arriving after the final drain: nothing can
    // write it any more; give the memory back.
    if (static_cast<std::uint32_t>(::getpid()) != c->m_pid || (c->m_writer_tid.load() == 0 && c->m_stop.load())) {
      c->m_pool.release(buffer);
      return;
    }
    collect::CompletedBuffer b;
    b.data = buffer;
    b.valid_size = valid_size;
    std::size_t dropped = 0;
    if (GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped)) == CUPTI_SUCCESS) {
      b.dropped = dropped;
    }
    if (dropped > 0 && ctx != nullptr) {
      GPUSCOPE_CUPTI_LOG_CALL(cuptiGetContextId(ctx, &b.context_id));
    }
    b.stream_id = stream_id;
    if (valid_size == 0 && dropped == 0) {
      c->m_pool.release(buffer);
      return;
    }
    bool rejected = false;
    const std::size_t depth = c->m_completed.push(b, &rejected);
    if (rejected) {
      c->m_pool.release(buffer);
      return;
    }
    // Keep the buffers (never block CUPTI) but tell the user the writer lags.
    if (depth > kBacklogWarnBuffers && !c->m_backlog_warned.exchange(true)) {
      c->post_message(log::Severity::kWarning,
                      "writer thread is behind: more than 64 CUPTI buffers queued; memory grows");
    }
    c->m_wake.store(true, std::memory_order_release);
    c->m_wake_cv.notify_one();
  } catch (...) {
  }
}

// ---------------------------------------------------------------- app-thread events

std::uint64_t Collector::now_ns() noexcept {
  std::uint64_t ts = 0;
  GPUSCOPE_CUPTI_LOG_CALL(cuptiGetTimestamp(&ts));
  return ts;
}

void Collector::post(HostEvent&& e) noexcept {
  try {
    std::lock_guard lock(m_events_mutex);
    if (m_events.size() >= kMaxHostEvents) {
      m_events_dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    m_events.push_back(std::move(e));
  } catch (...) {
    m_events_dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

void Collector::post_message(log::Severity severity, std::string text) noexcept {
  HostEvent e;
  e.kind = HostEvent::Kind::kMessage;
  e.type = static_cast<std::uint8_t>(severity);
  e.ts_ns = now_ns();
  e.text = std::move(text);
  post(std::move(e));
}

// ---------------------------------------------------------------- writer thread

void Collector::writer_main() noexcept {
  m_writer_tid.store(current_tid());
  pthread_setname_np(pthread_self(), "gpuscope-writer");
  const auto period = std::chrono::milliseconds(m_config.flush_period_ms);
  auto last_flush = std::chrono::steady_clock::now();
  bool reported_write_error = false;
  for (;;) {
    auto wait = std::chrono::duration_cast<std::chrono::nanoseconds>(period);
    {
      std::lock_guard lock(m_capture_mutex);
      const std::uint64_t to_edge =
          collect::ns_to_next_gate_edge(m_gate, now_ns(), m_capture.time_gate_opened(), m_capture.time_gate_closed());
      if (to_edge < static_cast<std::uint64_t>(wait.count())) {
        wait = std::chrono::nanoseconds(to_edge);
      }
    }
    if (m_config.capture_range == CaptureRange::kSession) {  // gpuscope start/stop answered within 100 ms
      wait = std::min(wait, std::chrono::nanoseconds(100'000'000));
    }
    if (m_config.memory_duty_ms > 0 && m_memory_kinds) {  // wake at the next duty switch
      const std::uint64_t duty = m_config.memory_duty_ms * 1'000'000;
      const auto to_switch = std::chrono::nanoseconds(duty - now_ns() % duty + 100'000);
      if (to_switch < wait) wait = to_switch;
    }
    {
      std::unique_lock lock(m_wake_mutex);
      m_wake_cv.wait_for(lock, wait, [this] { return m_stop.load() || m_wake.load(); });
    }
    m_wake.store(false);
    const bool stop = m_stop.load();
    check_time_gate();
    poll_session();
    maybe_detach_cupti();
    if (m_config.memory_duty_ms > 0 && m_memory_kinds && m_cupti_ready.load()) {
      // Validation only (GPUSCOPE_MEMORY_DUTY_MS): memory records on in even periods, switched
      // when this thread wakes just after each switch time.
      const bool on = (now_ns() / (m_config.memory_duty_ms * 1'000'000)) % 2 == 0;
      if (on != m_memory_duty_on) {
        m_memory_duty_on = on;
        if (on) {
          cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2);
        } else {
          cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY2);
        }
      }
    }
    // cuptiActivityFlushPeriod alone did not hand over partly filled buffers (a
    // SIGKILLed target lost every kernel on the GPU machine): ask for the completed
    // records ourselves each period, so a crash loses at most one period.
    // Only on the period's timer: a flush completes buffers, whose arrival wakes this
    // thread, and flushing on every wake-up fed itself (hundreds of flushes and
    // buffer requests per second, measured as CUPTI overhead records).
    const auto now = std::chrono::steady_clock::now();
    if (!stop && m_cupti_ready.load() && now - last_flush >= period) {
      last_flush = now;
      GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityFlushAll(0));
    }
    try {
      drain();
    } catch (...) {
    }
    if (!m_writer.flush() && !reported_write_error) {
      // Once, whatever the verbosity: a full disk or a file size limit stopped the log;
      // the program itself goes on.
      reported_write_error = true;
      std::fprintf(stderr, "gpuscope: pid %u: %s: %s; the program continues untraced\n", m_pid, m_log_path.c_str(),
                   m_writer.last_error().c_str());
    }
    finish_session_stop(stop);
    if (stop) break;
  }
  try {
    drain();
    for (auto& [d, name] : m_pending_devices) write_device(d, name, true);
    m_pending_devices.clear();
    write_process_end();
  } catch (...) {
  }
  m_writer.close();
  m_writer_tid.store(0);
}

void Collector::drain() {
  std::vector<collect::CompletedBuffer> buffers;
  m_completed.take_all(buffers);
  for (const auto& b : buffers) {
    try {
      process_buffer(b);
    } catch (...) {
    }
    m_pool.release(b.data);
  }
  // Devices first seen while cuInit was running: retry now that work arrives.
  if (!buffers.empty() && !m_pending_devices.empty()) {
    auto pending = std::move(m_pending_devices);
    m_pending_devices.clear();
    for (auto& [d, name] : pending) {
      if (!write_device(d, name, false)) m_pending_devices.emplace_back(d, name);
    }
  }

  if (m_kernels) write_profiled_launches();
  drain_api_rings();

  std::vector<HostEvent> events;
  {
    std::lock_guard lock(m_events_mutex);
    events.swap(m_events);
  }
  for (const auto& e : events) write_host_event(e);

  const std::uint64_t dropped = m_events_dropped.load(std::memory_order_relaxed);
  if (dropped > m_events_dropped_written) {
    log::DataLossRecord d{};
    d.ts_ns = now_ns();
    d.count = dropped - m_events_dropped_written;
    d.what_string = m_writer.intern(store::data_loss_name(store::DataLossKind::kHostEventsDropped));
    m_writer.add(log::RecordKind::kDataLoss, d);
    m_events_dropped_written = dropped;
  }
}

void Collector::process_buffer(const collect::CompletedBuffer& b) {
  ++m_buffers;
  CUpti_Activity* rec = nullptr;
  if (b.valid_size > 0) {
    while (GPUSCOPE_CUPTI_LOG_CALL_EXPECT(cuptiActivityGetNextRecord(b.data, b.valid_size, &rec),
                                          CUPTI_ERROR_MAX_LIMIT_REACHED) == CUPTI_SUCCESS) {
      convert_record(rec);
    }
  }
  if (b.dropped > 0) {
    m_cupti_dropped += b.dropped;
    log::DataLossRecord d{};
    d.ts_ns = now_ns();
    d.count = b.dropped;
    d.what_string = m_writer.intern(store::data_loss_name(store::DataLossKind::kCuptiDroppedRecords));
    d.context_id = b.context_id;
    d.stream_id = b.stream_id;
    m_writer.add(log::RecordKind::kDataLoss, d);
  }
}

void Collector::convert_record(const CUpti_Activity* rec) {
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& k = *reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      if (collect::is_range_profiler_kernel(k.name, m_config.kernels_mode())) break;
      m_writer.add(log::RecordKind::kKernel, collect::to_kernel_record(k, kernel_name_id(k.name)));
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      m_writer.add(log::RecordKind::kMemcpy,
                   collect::to_memcpy_record(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec)));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      m_writer.add(log::RecordKind::kMemcpy,
                   collect::to_memcpy_record(*reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(rec)));
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      m_writer.add(log::RecordKind::kMemset,
                   collect::to_memset_record(*reinterpret_cast<const CUpti_ActivityMemset4*>(rec)));
      break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto& a = *reinterpret_cast<const CUpti_ActivityAPI*>(rec);
      if (a.threadId == m_writer_tid.load(std::memory_order_relaxed)) break;  // our own calls
      const bool runtime = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      const auto domain = runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
      m_writer.add(log::RecordKind::kApi,
                   collect::to_api_record(a, runtime ? log::ApiDomain::kRuntime : log::ApiDomain::kDriver,
                                          api_name_id(domain, a.cbid)));
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      m_writer.add(log::RecordKind::kSync,
                   collect::to_sync_record(*reinterpret_cast<const CUpti_ActivitySynchronization2*>(rec)));
      break;
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto& d = *reinterpret_cast<const CUpti_ActivityDevice5*>(rec);
      if (std::find(m_devices_seen.begin(), m_devices_seen.end(), d.id) != m_devices_seen.end()) break;
      m_devices_seen.push_back(d.id);
      const std::uint64_t name = m_writer.intern(d.name != nullptr ? d.name : "");
      if (!write_device(d, name, false)) m_pending_devices.emplace_back(d, name);
      break;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      const auto& c = *reinterpret_cast<const CUpti_ActivityContext3*>(rec);
      if (std::find(m_contexts_seen.begin(), m_contexts_seen.end(), c.contextId) != m_contexts_seen.end()) {
        break;
      }
      m_contexts_seen.push_back(c.contextId);
      m_writer.add(log::RecordKind::kContext, collect::to_context_record(c));
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      m_writer.add(log::RecordKind::kOverhead,
                   collect::to_overhead_record(*reinterpret_cast<const CUpti_ActivityOverhead3*>(rec)));
      break;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      m_writer.add(log::RecordKind::kMemory,
                   collect::to_memory_record(*reinterpret_cast<const CUpti_ActivityMemory4*>(rec)));
      break;
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
      m_writer.add(log::RecordKind::kMemory,
                   collect::to_memory_record(*reinterpret_cast<const CUpti_ActivityMemoryPool3*>(rec)));
      break;
    default:
      break;  // kinds we do not enable
  }
}

bool Collector::write_device(const CUpti_ActivityDevice5& d, std::uint64_t name_string, bool force) {
  std::uint32_t mem_clock = 0, bus_width = 0;
  CUdevice dev = 0;
  // At exit the driver may already be shut down (DEINITIALIZED): write the record
  // without the two clock facts rather than complain.
  const bool driver_gone = m_stop.load();
  const CUresult got =
      driver_gone ? CUDA_ERROR_DEINITIALIZED
                  : GPUSCOPE_CU_LOG_CALL_EXPECT(cuDeviceGet(&dev, static_cast<int>(d.id)), CUDA_ERROR_NOT_INITIALIZED);
  if (got == CUDA_ERROR_NOT_INITIALIZED && !force) return false;
  if (got == CUDA_SUCCESS) {
    int v = 0;
    if (GPUSCOPE_CU_LOG_CALL(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev)) == CUDA_SUCCESS) {
      mem_clock = static_cast<std::uint32_t>(v);
    }
    if (GPUSCOPE_CU_LOG_CALL(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev)) ==
        CUDA_SUCCESS) {
      bus_width = static_cast<std::uint32_t>(v);
    }
  }
  m_writer.add(log::RecordKind::kDevice, collect::to_device_record(d, name_string, mem_clock, bus_width));
  return true;
}

void Collector::write_host_event(const HostEvent& e) {
  switch (e.kind) {
    case HostEvent::Kind::kNvtx: {
      log::NvtxRecord r{};
      r.ts_ns = e.ts_ns;
      r.domain_id = e.domain_id;
      r.range_id = e.range_id;
      r.message_string = m_writer.intern(e.text);
      r.thread_id = e.thread_id;
      r.color = e.color;
      r.category = e.category;
      r.type = e.type;
      r.has_color = e.has_color;
      m_writer.add(log::RecordKind::kNvtx, r);
      break;
    }
    case HostEvent::Kind::kNvtxDomain: {
      log::NvtxDomainRecord r{};
      r.domain_id = e.domain_id;
      r.name_string = m_writer.intern(e.text);
      m_writer.add(log::RecordKind::kNvtxDomain, r);
      break;
    }
    case HostEvent::Kind::kThreadName: {
      log::ThreadNameRecord r{};
      r.thread_id = e.thread_id;
      r.name_string = m_writer.intern(e.text);
      m_writer.add(log::RecordKind::kThreadName, r);
      break;
    }
    case HostEvent::Kind::kCapture: {
      log::CaptureRecord r{};
      r.ts_ns = e.ts_ns;
      r.reason_string = m_writer.intern(e.text);
      r.state = e.type;
      m_writer.add(log::RecordKind::kCapture, r);
      break;
    }
    case HostEvent::Kind::kMessage: {
      log::MessageRecord r{};
      r.ts_ns = e.ts_ns;
      r.text_string = m_writer.intern(e.text);
      r.severity = e.type;
      m_writer.add(log::RecordKind::kMessage, r);
      break;
    }
  }
}

std::uint64_t Collector::kernel_name_id(const char* name) {
  if (name == nullptr) return 0;
  // Kernel names are CUPTI-owned shared strings: look up by address, and
  // confirm the text (a freed string's address could be reused).
  auto it = m_kernel_names.find(name);
  if (it != m_kernel_names.end() && it->second.text == name) return it->second.id;
  NameCacheEntry entry{m_writer.intern(name), name};
  const std::uint64_t id = entry.id;
  m_kernel_names.insert_or_assign(name, std::move(entry));
  return id;
}

std::uint64_t Collector::api_name_id(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  auto& cache = m_api_names[domain == CUPTI_CB_DOMAIN_RUNTIME_API ? 0 : 1];
  if (cbid < cache.size() && cache[cbid] != 0) return cache[cbid];
  if (cbid >= 100000) return 0;  // nonsense id: do not grow the cache
  if (cbid >= cache.size()) cache.resize(cbid + 1, 0);
  const char* name = nullptr;
  std::uint64_t id = 0;
  if (GPUSCOPE_CUPTI_LOG_CALL(cuptiGetCallbackName(domain, cbid, &name)) == CUPTI_SUCCESS && name != nullptr &&
      *name != '\0') {
    id = m_writer.intern(name);
  } else {
    id = m_writer.intern((domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime_cbid_" : "driver_cbid_") +
                         std::to_string(cbid));
  }
  cache[cbid] = id;
  return id;
}

void Collector::write_profiled_launches() {
  std::vector<ProfiledLaunch> launches = m_kernels->take();
  if (launches.empty()) return;
  const std::vector<std::string>& metrics = m_kernels->metrics();
  if (m_metric_strings.empty()) {
    for (const std::string& m : metrics) m_metric_strings.push_back(m_writer.intern(m));
  }
  const std::uint64_t set = m_writer.intern(m_config.kernel_set);
  for (const ProfiledLaunch& l : launches) {
    log::KernelProfileRecord r{};
    r.launch_ns = l.launch_ns;
    r.profile_id = m_next_profile_id++;
    r.launch_index = l.launch_index;
    r.name_string = m_writer.intern(l.name);
    r.metric_set_string = set;
    r.device_id = l.device_id;
    r.context_id = l.context_id;
    r.stream_id = l.stream_id;
    r.correlation_id = l.correlation_id;
    for (int i = 0; i < 3; ++i) {
      r.grid[i] = l.grid[i];
      r.block[i] = l.block[i];
    }
    r.registers_per_thread = l.registers_per_thread;
    r.static_shared_memory = l.static_shared_memory;
    r.dynamic_shared_memory = l.dynamic_shared_memory;
    r.local_memory_per_thread = l.local_memory_per_thread;
    r.passes = l.passes;
    m_writer.add(log::RecordKind::kKernelProfile, r);
    for (std::size_t i = 0; i < l.values.size() && i < m_metric_strings.size(); ++i) {
      log::KernelMetricRecord m{};
      m.profile_id = r.profile_id;
      m.metric_string = m_metric_strings[i];
      m.value = l.values[i];
      m_writer.add(log::RecordKind::kKernelMetric, m);
    }
  }
}

void Collector::write_process_end() {
  log::ProcessEndRecord r{};
  r.ts_ns = now_ns();
  r.records_written = m_writer.records_written() + 1;
  r.activity_buffers = m_buffers;
  r.bytes_written =
      m_writer.bytes_written() + m_writer.pending_bytes() + sizeof(log::RecordHeader) + sizeof(log::ProcessEndRecord);
  m_writer.add(log::RecordKind::kProcessEnd, r);
  if (m_config.verbose) {
    std::fprintf(stderr,
                 "gpuscope: pid %u: %llu records, %llu bytes, %llu CUPTI buffers, %llu CUPTI "
                 "records dropped, %llu host events dropped -> %s\n",
                 m_pid, static_cast<unsigned long long>(r.records_written),
                 static_cast<unsigned long long>(r.bytes_written), static_cast<unsigned long long>(m_buffers),
                 static_cast<unsigned long long>(m_cupti_dropped),
                 static_cast<unsigned long long>(m_events_dropped_written), m_log_path.c_str());
  }
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
}

}  // namespace gpuscope::collect::detail
