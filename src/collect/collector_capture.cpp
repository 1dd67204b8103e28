// Capture control: when the collector records, and making CUPTI follow it.
// Edges come from the program (cudaProfilerStart/Stop through collector_hot_path.cpp, the
// NVTX capture range through nvtx_injection.cpp), from the writer thread's timer (delay,
// duration) and from the session's control file (gpuscope start/stop, polled by the writer
// thread). Each edge is decided by collect::CaptureController under m_capture_mutex, posted
// as a CaptureRecord, and applied to CUPTI without the lock (apply_recording). After the
// final window CUPTI is detached (maybe_detach_cupti).
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "collect/api_filter.hpp"
#include "collect/collector.hpp"
#include "collect/cupti_check.hpp"

namespace gpuscope::collect::detail {
namespace {

using collect::CaptureRange;

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

}  // namespace

// ---------------------------------------------------------------- CUPTI follows the window

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
    // Kernel records come on with the first window and stay on (finish_session_stop says why),
    // before anything that records launch calls (collect::recording_switches says why).
    for (const collect::RecordingSwitch s :
         collect::recording_switches(session, want, m_session_kernel_records.load(), m_api_callbacks.load())) {
      switch (s) {
        case collect::RecordingSwitch::kKernelKinds:
          if (!m_session_kernel_records.exchange(true)) set_kernel_kinds(true);
          break;
        case collect::RecordingSwitch::kGatedKinds:
          set_gated_kinds(want);
          break;
        case collect::RecordingSwitch::kLaunchCallbacks:
          set_launch_callbacks(want);
          break;
      }
    }
    if (m_recording.load() == want) return;
  }
}

// ---------------------------------------------------------------- edges

void Collector::handle_edge_locked(const collect::CaptureEdge& edge, std::uint64_t ts) {
  HostEvent e;
  e.kind = HostEvent::Kind::kCapture;
  e.type = static_cast<std::uint8_t>(edge.state);
  e.ts_ns = ts;
  e.text = edge.reason;
  post(std::move(e));
  if (m_config.capture_range == CaptureRange::kSession) {
    if (edge.state == log::CaptureState::kStart) {
      m_session_windows.open(ts);
    } else {
      m_session_windows.close(ts);
    }
  }
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

// After a stop, once the grace period has passed (or at exit: force): everything recorded so
// far in the log, then the ack that `gpuscope stop` waits for.
// Kernel records are not turned off here. They used to be (CONCURRENT_KERNEL and OVERHEAD
// disabled after the grace period, enabled again by the next start), and then the windows
// after the first got no kernel record: gpu_session on a 2 x H100 machine (window 2: 112,226
// API calls recorded, no kernel, in the snapshot and in the trace at exit; no CUPTI error, no
// data loss) and on an H200 (w1 81,702 kernels; w2 and the trace at exit the same 81,702), CUDA
// 13.0, driver 580. On our side every step of window 2 ran as in window 1 (the same calls, on
// the writer thread, the next start acknowledged); the one difference is that CUPTI's kernel
// records had been disabled and force-flushed before being enabled again. So they stay on from
// the first window to the end, as with the other capture ranges (on from the start): between
// windows the program pays for CUPTI's kernel records, not for our API callbacks (off), and the
// writer drops every kernel record no window can claim (convert_record, collect::WindowSpans),
// so the log does not grow between windows. Before the first window nothing per launch runs.
void Collector::finish_session_stop(bool force) noexcept {
  if (!m_session_stop_pending) return;
  const std::uint64_t grace = collect::session_stop_grace_ns(m_config.flush_period_ms);
  if (!force && now_ns() - m_session_stop_ns < grace) return;
  try {
    if (!m_recording.load() && m_cupti_ready.load()) {
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

}  // namespace gpuscope::collect::detail
