// serve_progress: what `gpuscope bench serve` says on stderr while it runs, so a server that
// accepts and never answers is visible in seconds, not at the end of a phase.
//
//  - Every `interval` (bench serve --progress, default 5 s; 0 = never) one line:
//    "gpuscope bench serve: 12/100 requests done, 1 failed, 8 in flight (15 s)".
//    Nothing is printed before the first interval ends, so a run shorter than it prints what
//    it printed before.
//  - Each failed request as it happens: "gpuscope bench serve: request 3 failed: ERROR",
//    at most one such line a second; the failures held back meanwhile are counted in the
//    next line ("... (2 more failures since the last one printed)"). The end-of-run warnings
//    list every failure as before.
//
// Thread-safe: request threads call started()/finished(); one background thread prints.
// Times are steady_clock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

namespace gpuscope::cli {

class ServeProgress {
 public:
  /// Prints to `out` (std::cerr) every `interval` (0 = no periodic line) while alive.
  /// `total`: requests of the phase; `what`: "requests" or "warm-up requests".
  ServeProgress(std::ostream& out, std::chrono::nanoseconds interval, int total, std::string what);
  ~ServeProgress();
  ServeProgress(const ServeProgress&) = delete;
  ServeProgress& operator=(const ServeProgress&) = delete;

  void started();
  /// A request ended; `error` "" when it succeeded. `label`: "request 3", "warm-up request 0".
  void finished(const std::string& label, const std::string& error);

 private:
  void loop();
  void print_failure_locked(const std::string& label, const std::string& error);

  std::ostream& m_out;
  std::chrono::nanoseconds m_interval;
  int m_total;
  std::string m_what;
  std::chrono::steady_clock::time_point m_start;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stop = false;
  int m_done = 0, m_failed = 0, m_in_flight = 0;
  std::chrono::steady_clock::time_point m_last_failure_line{};
  bool m_printed_failure = false;
  std::int64_t m_held_back = 0;  // failures not printed since the last printed one
  std::thread m_thread;
};

}  // namespace gpuscope::cli
