// The writer thread (gpuscope-writer, all signals blocked): wakes on a full API ring, a
// completed buffer or its period; runs the capture timer and the session polling
// (collector_capture.cpp), asks CUPTI for completed buffers once per flush period, drains
// everything queued into log records (collector_convert.cpp, collector_records.cpp) and
// flushes the log. At stop it drains once more and writes the ProcessEndRecord.
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "collect/collector.hpp"
#include "collect/python_callsites.hpp"
#include "collect/cupti_check.hpp"
#include "collect/os_reads.hpp"
#include "store/data_loss_kinds.hpp"

namespace gpuscope::collect::detail {

using collect::CaptureRange;

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
    if (m_python) m_python->stop_sampling();  // its last samples go into the final write
    drain();
    if (m_python) m_python->write_new(m_writer, now_ns(), true);
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
  // Python stacks before the API records that name them.
  if (m_python) m_python->write_new(m_writer, now_ns(), false);
  drain_api_rings();
  drain_torch_op_rings();

  std::vector<HostEvent> events;
  {
    std::lock_guard lock(m_events_mutex);
    events.swap(m_events);
  }
  for (const auto& e : events) write_host_event(e);

  const std::uint64_t dropped = m_events_dropped.load(std::memory_order_relaxed);
  if (dropped > m_events_dropped_written) {
    write_data_loss(store::DataLossKind::kHostEventsDropped, dropped - m_events_dropped_written);
    m_events_dropped_written = dropped;
  }
}

}  // namespace gpuscope::collect::detail
