// collect_run: what `gpuscope trace` and `gpuscope kernels` share: run a command with
// the collector injected (CUDA_INJECTION64_PATH, optionally NVTX_INJECTION64_PATH),
// collect every CUDA-using process's event log in NAME.logs/, import them into
// NAME.sqlite (atomically: store/importer.hpp, store/atomic_file.hpp) and remove the logs.
// The whole run holds NAME.sqlite.lock (store/output_lock.hpp), so a second gpuscope
// with the same name refuses at start; unfinished temporary files of NAME.sqlite left by a
// killed gpuscope are removed under the lock.
//
// Errors (before anything runs): another gpuscope writes NAME.sqlite (its pid is named),
// NAME.sqlite exists without --force-overwrite, command
// not found (127) or not executable (126), collector library missing, no NVIDIA driver
// (skipped when GPUSCOPE_SKIP_DRIVER_CHECK is set). Each prints "gpuscope TOOL: error:
// ..." and a "what to do" line on stderr. A crashed or killed target still gets its
// database built from what was flushed; an import failure keeps the logs and says how
// to retry with `gpuscope import`.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/launcher.hpp"
#include "store/importer.hpp"

namespace gpuscope::cli {

struct CollectRunSpec {
  std::string tool;    // "trace" or "kernels": prefixes every message
  std::string output;  // NAME or NAME.sqlite; "" = gpuscope-<date>-<time>
  bool force_overwrite = false;
  bool keep_logs = false;
  bool nvtx = false;                 // also set NVTX_INJECTION64_PATH
  bool pytorch_hooks = false;        // put gpuscope's sitecustomize.py (python/ beside the collector) first
                                     // on PYTHONPATH (GPUSCOPE_PYTORCH in env says what it records)
  bool pytorch_hooks_asked = false;  // asked for (--pytorch=..., --cuda-memory-usage): a missing
                                     // sitecustomize.py stops the run; the default hooks only warn
  std::vector<std::string> command;
  std::vector<std::pair<std::string, std::string>> env;  // GPUSCOPE_* for the collector (the log
                                                         // dir and launch time are added here)
  std::optional<std::chrono::nanoseconds> kill_after;    // nsys --duration/--kill
  int kill_signal = 15;
  store::ImportOptions import;  // command, launched pid, status, start time, version filled here
  /// Called once the command, the collector library and the driver have been checked,
  /// right before the logs directory is made and the command runs (trace: the tracer-cost
  /// calibration, which adds meta rows).
  std::function<void(CollectRunSpec&)> after_checks;
  /// Called once the logs folder exists, right before the command starts (trace: starts the
  /// GPU-metrics sampler, whose log goes in that folder).
  std::function<void(const std::filesystem::path& log_dir)> before_launch;
  /// Called when the command has ended (or failed to start), before the import (trace: stops
  /// the sampler, so its log is whole).
  std::function<void()> after_exit;
};

struct CollectRunResult {
  int exit_code = 0;     // the target's (shell convention) or gpuscope's own error
  bool have_db = false;  // NAME.sqlite was written
  std::filesystem::path db_path;
  LaunchResult run;
};

/// Runs it (see the file comment). Prints progress and errors on stderr.
[[nodiscard]] CollectRunResult collect_run(CollectRunSpec spec);

/// libgpuscope_inject.so: $GPUSCOPE_INJECT_LIBRARY, else ../lib next to the executable.
[[nodiscard]] std::optional<std::filesystem::path> find_inject_library();

/// The "what to do" when another gpuscope holds NAME.sqlite.lock.
inline constexpr const char* kBusyTodo =
    "wait for it to end, or give another -o name (the lock of a gpuscope that was killed needs no "
    "cleaning: the next run takes it over)";

/// Prints "gpuscope TOOL: error: WHAT" and "  what to do: TODO" on stderr; returns 1.
int cli_fail(const std::string& tool, const std::string& what, const std::string& todo);

/// The exit code of a bad option or argument, in every command (CLI11's parse errors are
/// mapped to it in cli/main.cpp; a command that checks an option itself returns it too).
inline constexpr int kExitBadOption = 2;

}  // namespace gpuscope::cli
