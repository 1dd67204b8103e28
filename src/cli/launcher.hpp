// Runs the target command as a child process and reports how it ended.
// POSIX only (fork/execvp/waitpid); no CUDA. Used by `gpuscope trace`.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::cli {

/// Where `name` resolves on $PATH (or itself if it contains '/').
/// Returns nullopt if no such file; sets *not_executable when found but not executable.
[[nodiscard]] std::optional<std::string> find_executable(const std::string& name, bool* not_executable);

struct LaunchSpec {
  std::vector<std::string> argv;                         // argv[0] = command
  std::vector<std::pair<std::string, std::string>> env;  // added to the inherited environment
  /// If set: after this long, send `kill_signal` to the target (nsys --duration/--kill).
  std::optional<std::chrono::nanoseconds> kill_after;
  int kill_signal = 15;  // SIGTERM
  /// If set: called with the target's pid once exec has succeeded, before the wait (the
  /// launcher records it on disk there, so logs outlive a killed gpuscope). Must not throw.
  std::function<void(int pid)> on_started;
};

struct LaunchResult {
  bool started = false;  // false: exec failed (see exec_errno)
  int exec_errno = 0;
  int pid = -1;
  std::optional<int> exit_status;  // normal exit
  std::optional<int> term_signal;  // killed by a signal
  bool core_dumped = false;
  bool killed_by_us = false;  // the --duration timer ended it
  /// The exit code a shell would report: status, or 128 + signal; 127/126 if exec failed.
  [[nodiscard]] int shell_exit_code() const;
  /// One line for the user: "exited with code 3", "killed by signal 9 (Killed)".
  [[nodiscard]] std::string describe() const;
};

/// Makes gpuscope ignore SIGXFSZ, so that writing past `ulimit -f` fails with EFBIG (a
/// clear error, the old file kept: store/atomic_file.hpp) instead of killing it. The
/// targets of launch_and_wait get the disposition gpuscope inherited. For main().
void ignore_file_size_signal();

/// Forks, execs spec.argv with the extra environment, forwards SIGTERM/SIGHUP sent to
/// gpuscope to the target while it runs (SIGINT/SIGQUIT from a terminal reach it
/// directly and are ignored by gpuscope), and waits. Never throws for a failing target.
[[nodiscard]] LaunchResult launch_and_wait(const LaunchSpec& spec);

}  // namespace gpuscope::cli
