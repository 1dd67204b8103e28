#include "cli/serve_progress.hpp"

#include <cmath>
#include <utility>

namespace gpuscope::cli {
namespace {

constexpr const char* kPrefix = "gpuscope bench serve: ";
// Failures printed as they happen: at most one line per this.
constexpr std::chrono::seconds kFailureLineGap{1};

}  // namespace

ServeProgress::ServeProgress(std::ostream& out, std::chrono::nanoseconds interval, int total, std::string what)
    : m_out(out),
      m_interval(interval),
      m_total(total),
      m_what(std::move(what)),
      m_start(std::chrono::steady_clock::now()) {
  if (m_interval.count() > 0) m_thread = std::thread([this] { loop(); });
}

ServeProgress::~ServeProgress() {
  {
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

void ServeProgress::started() {
  const std::lock_guard<std::mutex> lock(m_mutex);
  ++m_in_flight;
}

void ServeProgress::finished(const std::string& label, const std::string& error) {
  const std::lock_guard<std::mutex> lock(m_mutex);
  if (m_in_flight > 0) --m_in_flight;
  ++m_done;
  if (error.empty()) return;
  ++m_failed;
  const auto now = std::chrono::steady_clock::now();
  if (m_printed_failure && now - m_last_failure_line < kFailureLineGap) {
    ++m_held_back;
    return;
  }
  m_last_failure_line = now;
  m_printed_failure = true;
  print_failure_locked(label, error);
}

void ServeProgress::print_failure_locked(const std::string& label, const std::string& error) {
  m_out << kPrefix << label << " failed: " << error;
  if (m_held_back > 0) m_out << " (" << m_held_back << " more failed since the last one printed)";
  m_out << "\n" << std::flush;
  m_held_back = 0;
}

void ServeProgress::loop() {
  std::unique_lock<std::mutex> lock(m_mutex);
  auto next = m_start + m_interval;
  while (!m_stop) {
    if (m_wake.wait_until(lock, next, [this] { return m_stop; })) break;
    next += m_interval;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    m_out << kPrefix << m_done << "/" << m_total << " " << m_what << " done, " << m_failed << " failed, " << m_in_flight
          << " in flight (" << std::llround(elapsed) << " s)";
    if (m_held_back > 0) m_out << "; " << m_held_back << " failure(s) not printed yet";
    m_out << "\n" << std::flush;
  }
}

}  // namespace gpuscope::cli
