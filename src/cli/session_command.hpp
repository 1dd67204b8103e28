// `gpuscope launch --session NAME -- CMD`, `gpuscope start NAME`, `gpuscope stop NAME`,
// `gpuscope sessions`: capture windows opened and closed from another shell while a program
// (a server under load, a long training run) keeps running, as nsys launch / start / stop.
//
// launch is `gpuscope trace` with the capture range "session" (cli/trace_command.hpp): the
// collector is loaded but records nothing, and costs nothing per launch, until `start`; each
// start/stop pair is one capture window (capture_windows, reason 'session') of the trace that
// launch writes when the program ends (also when it crashes or is killed). `stop` also writes
// the trace so far, NAME.wK.sqlite (windows 1..K), without stopping the program.
// The session folder and its files: collect/session_control.hpp, cli/session_info.hpp; they
// are private to the user (store/private_dir.hpp).
//
// Errors (exit 1, "what to do" line): no such session (or its launcher is gone), start while
// recording, stop while not recording, no traced process answering within --timeout; a
// sessions folder, session folder or session file that is not the user's own or not private
// ("permission denied: PATH ...", "directory PATH has unsafe permissions (owner N, mode
// 0777)", "PATH belongs to another user"), refused before it is used.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "cli/session_info.hpp"

namespace gpuscope::cli {

struct SessionOptions {
  std::string name;
  std::int64_t duration_ns = 0;              // start --duration: stop after this long (0 = leave recording)
  std::int64_t timeout_ns = 10'000'000'000;  // how long start/stop wait for the traced processes to answer
  bool no_trace = false;                     // stop --no-trace: do not write NAME.wK.sqlite
};

/// Declares start, stop and sessions (launch is declared by add_trace_command).
CLI::App* add_start_command(CLI::App& app, SessionOptions& options);
CLI::App* add_stop_command(CLI::App& app, SessionOptions& options);
CLI::App* add_sessions_command(CLI::App& app);

[[nodiscard]] int run_start(const SessionOptions& options);
[[nodiscard]] int run_stop(const SessionOptions& options);
[[nodiscard]] int run_sessions();

/// For launch: takes the folder of session `name` (refuses when a live launcher holds it;
/// clears one left by a launcher that is gone). Returns the folder, or "" after printing the
/// error (tool = "launch").
[[nodiscard]] std::filesystem::path claim_session_dir(const std::string& name);

}  // namespace gpuscope::cli
