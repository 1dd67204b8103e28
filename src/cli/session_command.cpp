#include "cli/session_command.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "cli/collect_run.hpp"
#include "cli/option_checks.hpp"
#include "collect/session_control.hpp"
#include "core/report.hpp"
#include "render/report_render.hpp"
#include "store/importer.hpp"

namespace gpuscope::cli {
namespace {

namespace fs = std::filesystem;
using collect::SessionCommand;

// start --duration: as trace --duration (at most 10^6 s; a bare number is seconds).
const core::DurationLimits kSessionDuration{0, 1'000'000'000'000'000, 1'000'000'000, "10s or 250ms"};
// start/stop --timeout: 100 ms to 10 min.
const core::DurationLimits kSessionTimeout{100'000'000, 600'000'000'000, 1'000'000'000, "10s or 500ms"};

bool pid_alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

}  // namespace

namespace {

// The session `name` with a live launcher, or an error printed (nullopt).
std::optional<std::pair<fs::path, SessionInfo>> find_session(const std::string& tool, const std::string& name) {
  if (const std::string problem = collect::session_name_problem(name); !problem.empty()) {
    cli_fail(tool, problem + ": '" + name + "'", "give the name used with gpuscope launch --session");
    return std::nullopt;
  }
  const fs::path dir = collect::session_dir(name);
  store::PrivateStatus status = collect::check_sessions_root();
  std::optional<SessionInfo> info;
  if (status.ok()) info = read_session_info(dir, &status);
  if (!info && !status.ok() && status.problem != store::PrivateProblem::kMissing) {
    cli_fail(tool, "session '" + name + "': " + status.message, status.fix);
    return std::nullopt;
  }
  if (!info) {
    cli_fail(tool, "no session '" + name + "' (looked in " + collect::sessions_root().string() + ")",
             "start one with: gpuscope launch --session " + name + " -- CMD ; gpuscope sessions lists them");
    return std::nullopt;
  }
  if (!pid_alive(info->launcher_pid)) {
    cli_fail(tool,
             "session '" + name + "' has ended (its gpuscope launch, pid " + std::to_string(info->launcher_pid) +
                 ", is gone)",
             "its trace is " + info->output + "; gpuscope sessions lists the sessions still running");
    return std::nullopt;
  }
  return std::make_pair(dir, *info);
}

// Waits until every pid in `expect` (or, when empty, at least one process) has acknowledged
// `generation`, or is gone, or `timeout` passed. Returns the pids that acknowledged.
std::set<std::uint32_t> wait_for_acks(const fs::path& dir, std::uint64_t generation,
                                      const std::set<std::uint32_t>& expect, std::chrono::nanoseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::set<std::uint32_t> acked;
    for (const collect::SessionAck& a : collect::read_session_acks(dir))
      if (a.command.generation >= generation) acked.insert(a.pid);
    bool done = !acked.empty() || !expect.empty();
    for (std::uint32_t pid : expect)
      if (!acked.contains(pid) && pid_alive(pid)) done = false;
    if (done || std::chrono::steady_clock::now() >= deadline) return acked;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string plural(std::size_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "es"); }

// Starts take the odd generations and stops the even ones (a start is refused while recording,
// a stop while not), so generation G belongs to window (G + 1) / 2.
std::uint64_t window_of(std::uint64_t generation) { return (generation + 1) / 2; }

// Writes `command` into the session's control file; false after printing the error.
bool send_command(const std::string& tool, const fs::path& dir, const SessionCommand& command) {
  const store::PrivateStatus st =
      collect::write_session_file(dir / "control", collect::format_session_command(command));
  if (st.ok()) return true;
  cli_fail(tool, st.message, st.fix.empty() ? "check the folder's permissions" : st.fix);
  return false;
}

// The session's control line (nullopt: none yet), or an error printed when the file is there
// but unsafe (a link, another user's file): *ok = false.
std::optional<SessionCommand> read_control(const std::string& tool, const fs::path& dir, bool* ok) {
  store::PrivateStatus st;
  auto command = collect::read_session_file(dir / "control", &st);
  *ok = st.ok() || st.problem == store::PrivateProblem::kMissing;
  if (!*ok) cli_fail(tool, st.message, st.fix);
  return command;
}

// NAME.sqlite -> NAME.wK.sqlite
std::string window_trace_path(std::string output, std::uint64_t window) {
  if (output.size() > 7 && output.ends_with(".sqlite")) output.resize(output.size() - 7);
  return output + ".w" + std::to_string(window) + ".sqlite";
}

}  // namespace

fs::path claim_session_dir(const std::string& name) {
  if (const std::string problem = collect::session_name_problem(name); !problem.empty()) {
    cli_fail("launch", problem + ": '" + name + "'", "e.g. --session server1");
    return {};
  }
  const fs::path dir = collect::session_dir(name);
  // The root and the session folder are the user's own, mode 0700, not links; anything else
  // is refused, never repaired (someone else made it).
  if (const store::PrivateStatus st = collect::prepare_sessions_root(); !st.ok()) {
    cli_fail("launch", st.message, st.fix);
    return {};
  }
  store::PrivateStatus st = collect::check_session_folder(dir);
  if (st.problem != store::PrivateProblem::kMissing) {
    std::optional<SessionInfo> info;
    if (st.ok()) info = read_session_info(dir, &st);
    if (!st.ok() && st.problem != store::PrivateProblem::kMissing) {
      cli_fail("launch", "session '" + name + "': " + st.message, st.fix);
      return {};
    }
    if (info && pid_alive(info->launcher_pid)) {
      cli_fail("launch",
               "session '" + name + "' is in use by gpuscope launch (pid " + std::to_string(info->launcher_pid) + ")",
               "give another --session name, or end that program first");
      return {};
    }
    std::error_code ec;
    fs::remove_all(dir, ec);  // left by a launcher that is gone
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    cli_fail("launch", "cannot create the session folder " + dir.string() + ": " + std::strerror(errno),
             "set GPUSCOPE_SESSIONS_DIR to a folder you can write");
    return {};
  }
  if (st = collect::check_session_folder(dir); !st.ok()) {  // one that appeared meanwhile is checked too
    cli_fail("launch", "session '" + name + "': " + st.message, st.fix);
    return {};
  }
  return dir;
}

CLI::App* add_start_command(CLI::App& app, SessionOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "start",
      "Open a capture window in a program started by `gpuscope launch --session NAME` (from another shell).\n"
      "Its processes record from now until `gpuscope stop NAME` (or --duration); each window is a\n"
      "capture window of the trace (capture_windows, reason 'session').\n"
      "Example: gpuscope start server --duration 10s");
  sub->add_option("name", o.name, "The session name given to gpuscope launch --session")->required();
  duration_ns_option(sub->add_option("--duration", o.duration_ns,
                                     "Stop after this long (10s, 250ms; a bare number is seconds), then as gpuscope "
                                     "stop NAME; 0 = keep recording"),
                     kSessionDuration);
  duration_ns_option(
      sub->add_option("--timeout", o.timeout_ns, "How long to wait for the traced processes to answer (default 10s)"),
      kSessionTimeout);
  return sub;
}

CLI::App* add_stop_command(CLI::App& app, SessionOptions& o) {
  CLI::App* sub =
      app.add_subcommand("stop",
                         "Close the capture window opened by `gpuscope start NAME`. The program goes on; the trace of\n"
                         "the windows so far is written as OUTPUT.wK.sqlite (K = windows so far), and the whole trace\n"
                         "(OUTPUT.sqlite, every window) when the program ends.\n"
                         "Example: gpuscope stop server && gpuscope summary server.w1.sqlite");
  sub->add_option("name", o.name, "The session name given to gpuscope launch --session")->required();
  duration_ns_option(sub->add_option("--timeout", o.timeout_ns,
                                     "How long to wait for the traced processes to write the window (default 10s)"),
                     kSessionTimeout);
  sub->add_flag("--no-trace", o.no_trace, "Close the window only; write no OUTPUT.wK.sqlite now");
  return sub;
}

CLI::App* add_sessions_command(CLI::App& app) {
  return app.add_subcommand("sessions",
                            "List the sessions of gpuscope launch --session: name, state (recording or not), "
                            "windows so far, pids, trace, command");
}

int run_start(const SessionOptions& o) {
  const auto found = find_session("start", o.name);
  if (!found) return 1;
  const auto& [dir, info] = *found;
  bool control_ok = true;
  const auto current = read_control("start", dir, &control_ok);
  if (!control_ok) return 1;
  const std::uint64_t generation = current ? current->generation : 0;
  if (current && current->start)
    return cli_fail(
        "start", "session '" + o.name + "' is already recording (window " + std::to_string(window_of(generation)) + ")",
        "gpuscope stop " + o.name + " closes it");
  const SessionCommand command{generation + 1, true};
  if (!send_command("start", dir, command)) return 1;
  const std::uint64_t window = window_of(command.generation);
  const auto acked = wait_for_acks(
      dir, command.generation, {},
      std::min<std::chrono::nanoseconds>(std::chrono::nanoseconds(o.timeout_ns), std::chrono::seconds(5)));
  if (acked.empty()) {
    std::cerr << "gpuscope start: session " << o.name << ": window " << window
              << " open, but no traced process has answered yet (none has initialized CUDA?): each records from "
                 "its first CUDA call\n";
  } else {
    std::cerr << "gpuscope start: session " << o.name << ": recording (window " << window << ") in "
              << plural(acked.size(), "process") << "\n";
  }
  if (o.duration_ns <= 0) return 0;
  std::this_thread::sleep_for(std::chrono::nanoseconds(o.duration_ns));
  return run_stop(o);
}

int run_stop(const SessionOptions& o) {
  const auto found = find_session("stop", o.name);
  if (!found) return 1;
  const auto& [dir, info] = *found;
  bool control_ok = true;
  const auto current = read_control("stop", dir, &control_ok);
  if (!control_ok) return 1;
  if (!current || !current->start)
    return cli_fail("stop", "session '" + o.name + "' is not recording",
                    "gpuscope start " + o.name + " opens a window");
  std::set<std::uint32_t> recording;
  for (const collect::SessionAck& a : collect::read_session_acks(dir))
    if (a.command.generation == current->generation) recording.insert(a.pid);
  const SessionCommand command{current->generation + 1, false};
  if (!send_command("stop", dir, command)) return 1;
  const std::uint64_t window = window_of(command.generation);
  const auto acked = wait_for_acks(dir, command.generation, recording, std::chrono::nanoseconds(o.timeout_ns));
  std::size_t missing = 0;
  for (std::uint32_t pid : recording)
    if (!acked.contains(pid) && pid_alive(pid)) ++missing;
  std::cerr << "gpuscope stop: session " << o.name << ": window " << window << " closed in "
            << plural(acked.size(), "process") << "\n";
  if (missing > 0)
    std::cerr << "gpuscope stop: warning: " << plural(missing, "process")
              << " did not answer within --timeout: their last records of the window may come only in the "
                 "trace written at exit\n";
  if (o.no_trace) return 0;

  std::error_code ec;
  const std::vector<std::string> inputs = store::list_trace_inputs(info.log_dir, ec);
  if (ec || inputs.empty())
    return cli_fail("stop", "no event log in " + info.log_dir + (ec ? ": " + ec.message() : ""),
                    "the trace is written when the program ends: " + info.output);
  store::ImportOptions opts;
  opts.command = info.command;
  opts.start_time = info.started;
  opts.trace_sources = "cuda,nvtx";
  opts.capture_range = "session";
  opts.live_logs = true;
  opts.overwrite = true;
  opts.extra_meta.emplace_back("session", o.name);
  opts.extra_meta.emplace_back("session_windows", std::to_string(window));
  const std::string out = window_trace_path(info.output, window);
  try {
    const store::ImportResult r = store::import_logs(inputs, out, opts);
    std::cerr << "gpuscope stop: wrote " << out << " (windows 1-" << window << ": " << r.rows.kernels << " kernels, "
              << r.rows.memcpys << " memcpys, " << r.rows.api_calls << " API calls)\n";
  } catch (const std::exception& e) {
    return cli_fail("stop", std::string("cannot write the trace so far: ") + e.what(),
                    "the whole trace is written when the program ends: " + info.output);
  }
  return 0;
}

int run_sessions() {
  Report rep;
  rep.name = "sessions";
  rep.title = "Sessions of gpuscope launch, in " + collect::sessions_root().string();
  rep.add_column("Session", "", ColumnType::kText)
      .add_column("State", "", ColumnType::kText)
      .add_column("Windows", "", ColumnType::kInteger)
      .add_column("Launcher PID", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Processes", "", ColumnType::kInteger)
      .add_column("Trace", "", ColumnType::kText)
      .add_column("Command", "", ColumnType::kText);
  // The sessions folder must be the user's own and private; a missing one holds no session.
  const store::PrivateStatus root = collect::check_sessions_root();
  if (!root.ok() && root.problem != store::PrivateProblem::kMissing)
    return cli_fail("sessions", root.message, root.fix);
  std::error_code ec;
  std::vector<fs::path> gone;
  for (const auto& entry : fs::directory_iterator(collect::sessions_root(), ec)) {
    store::PrivateStatus st;
    const auto info = read_session_info(entry.path(), &st);
    if (!info && st.problem != store::PrivateProblem::kMissing) {  // not listed, nor removed
      std::cerr << "gpuscope sessions: warning: skipped " << entry.path().string() << ": " << st.message
                << (st.fix.empty() ? "" : " (" + st.fix + ")") << "\n";
      continue;
    }
    if (!info) continue;
    if (!pid_alive(info->launcher_pid)) {
      gone.push_back(entry.path());
      continue;
    }
    const auto control = collect::read_session_file(entry.path() / "control", &st);
    if (!st.ok() && st.problem != store::PrivateProblem::kMissing) {
      std::cerr << "gpuscope sessions: warning: session " << info->name << ": " << st.message << " (" << st.fix
                << "): its state is not shown\n";
    }
    const std::uint64_t generation = control ? control->generation : 0;
    const bool recording = control && control->start;
    std::set<std::uint32_t> pids;
    for (const collect::SessionAck& a : collect::read_session_acks(entry.path()))
      if (pid_alive(a.pid)) pids.insert(a.pid);
    rep.rows.push_back({info->name, std::string(recording ? "recording" : "not recording"),
                        static_cast<std::int64_t>(window_of(generation)), static_cast<std::int64_t>(info->launcher_pid),
                        static_cast<std::int64_t>(pids.size()), info->output, info->command});
  }
  for (const fs::path& p : gone) fs::remove_all(p, ec);  // sessions whose launcher ended (killed)
  if (rep.rows.empty())
    rep.add_note(NoteLevel::kInfo, "no session: start one with gpuscope launch --session NAME -- CMD");
  rep.add_note(NoteLevel::kInfo,
               "Processes: those that answered a start or stop so far (a process records from its first CUDA call).");
  render::render(rep, render::Format::kTable, std::cout);
  return 0;
}

}  // namespace gpuscope::cli
