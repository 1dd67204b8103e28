#include "cli/trace_command.hpp"

#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "analyze/trace_summary.hpp"
#include "cli/driver_check.hpp"
#include "cli/launcher.hpp"
#include "core/version.hpp"
#include "render/report_render.hpp"
#include "store/database.hpp"
#include "store/importer.hpp"

namespace fs = std::filesystem;

namespace gpuscope::cli {
namespace {

std::string now_stamp(const char* fmt) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, fmt, &tm);
  return buf;
}

std::int64_t realtime_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The collector library sits in ../lib next to bin/gpuscope (build tree and install).
std::optional<fs::path> find_inject_library() {
  if (const char* env = std::getenv("GPUSCOPE_INJECT_LIBRARY")) {
    if (fs::exists(env)) return fs::absolute(env);
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  for (const fs::path& candidate : {exe.parent_path().parent_path() / "lib" / "libgpuscope_inject.so",
                                    exe.parent_path() / "libgpuscope_inject.so"}) {
    if (fs::exists(candidate)) return candidate;
  }
  return std::nullopt;
}

std::string join_command(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    const bool quote = a.empty() || a.find_first_of(" \t\"'$\\") != std::string::npos;
    s += quote ? "'" + a + "'" : a;
  }
  return s;
}

int fail(const std::string& what, const std::string& todo) {
  std::cerr << "gpuscope trace: error: " << what << "\n";
  if (!todo.empty()) std::cerr << "  what to do: " << todo << "\n";
  return 1;
}

}  // namespace

CLI::App* add_trace_command(CLI::App& app, TraceOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "trace",
      "Run a command with the collector injected and record its GPU timeline into NAME.sqlite.\n"
      "Works on any unmodified CUDA program: a C++ binary, `python3 train.py` with PyTorch/Triton.\n"
      "Records kernels, memcpy/memset, CUDA runtime+driver API calls, synchronization and NVTX\n"
      "ranges of the command and of its child processes, then prints a short summary.\n"
      "Example: gpuscope trace -o cnn --capture-range=cudaProfilerApi -- python3 train.py");
  sub->add_option("-o,--output", o.output,
                  "Trace name: writes NAME.sqlite (default gpuscope-<date>-<time>)");
  sub->add_flag("-f,--force-overwrite", o.force_overwrite, "Replace NAME.sqlite if it exists");
  sub->add_option("-t,--trace", o.trace,
                  "Sources to record, comma-separated: cuda (kernels, memcpy, memset, runtime and\n"
                  "driver API, synchronization), nvtx (NVTX ranges and marks)")
      ->capture_default_str();
  sub->add_option("-c,--capture-range", o.capture_range,
                  "What starts recording: none (whole run), cudaProfilerApi (between\n"
                  "cudaProfilerStart/Stop, e.g. torch.cuda.profiler.start/stop), nvtx (inside the\n"
                  "NVTX range given by --nvtx-capture)")
      ->check(CLI::IsMember({"none", "cudaProfilerApi", "nvtx"}))
      ->capture_default_str();
  sub->add_option("-p,--nvtx-capture", o.nvtx_capture,
                  "NVTX range that opens the capture with --capture-range=nvtx: RANGE or RANGE@DOMAIN");
  sub->add_option("--capture-range-end", o.capture_range_end,
                  "After the first capture range closes: stop (record nothing more) or repeat\n"
                  "(every range opens a new window)")
      ->check(CLI::IsMember({"stop", "repeat"}))
      ->capture_default_str();
  sub->add_option("-y,--delay", o.delay_s, "Start recording SECONDS after launch")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("-d,--duration", o.duration_s,
                  "Record for SECONDS (after --delay), then end the target with --kill")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--kill", o.kill, "Signal sent to the target when --duration ends: sigterm, sigkill, none")
      ->check(CLI::IsMember({"sigterm", "sigkill", "none"}))
      ->capture_default_str();
  sub->add_flag("--cuda-polling-calls", o.polling_calls,
                "Also record the polling calls muted by default (cudaGetDevice, cudaEventQuery,\n"
                "cudaStreamQuery, cuCtxGetCurrent, ...)");
  sub->add_option("--flush-period", o.flush_period_ms,
                  "Milliseconds between flushes of the event log; a crash loses at most about this much")
      ->check(CLI::Range(10, 60000))
      ->capture_default_str();
  sub->add_flag("--keep-logs", o.keep_logs, "Keep the per-process event logs (NAME.logs/) after import");
  sub->add_flag("-q,--quiet", o.quiet, "Do not print the summary at the end");
  sub->add_option("--top", o.top, "Kernels in the summary")->capture_default_str();
  sub->add_option("command", o.command, "The command to run, after --")->required();
  sub->positionals_at_end();
  return sub;
}

int run_trace(TraceOptions o) {
  // Output names: NAME.sqlite and the per-process logs in NAME.logs/.
  if (o.output.empty()) o.output = "gpuscope-" + now_stamp("%Y%m%d-%H%M%S");
  if (o.output.size() > 7 && o.output.ends_with(".sqlite")) o.output.resize(o.output.size() - 7);
  const fs::path db_path = fs::absolute(o.output + ".sqlite");
  const fs::path log_dir = fs::absolute(o.output + ".logs");
  if (fs::exists(db_path) && !o.force_overwrite)
    return fail(db_path.string() + " already exists; nothing was run",
                "use --force-overwrite to replace it, or -o another name");
  if (o.capture_range == "nvtx" && o.nvtx_capture.empty())
    return fail("--capture-range=nvtx needs --nvtx-capture=RANGE", "name the NVTX range, e.g. -p 'step 5'");
  if (!o.nvtx_capture.empty() && o.capture_range != "nvtx")
    return fail("--nvtx-capture needs --capture-range=nvtx", "");
  for (std::string_view src : {std::string_view(o.trace)}) {
    std::size_t b = 0;
    while (b <= src.size()) {
      std::size_t e = src.find(',', b);
      if (e == std::string_view::npos) e = src.size();
      const std::string_view s = src.substr(b, e - b);
      if (s != "cuda" && s != "nvtx")
        return fail("unknown --trace source '" + std::string(s) + "'", "use cuda, nvtx or cuda,nvtx");
      b = e + 1;
    }
  }

  // The command must exist before we check the GPU or touch any file.
  bool not_executable = false;
  const auto exe = find_executable(o.command.front(), &not_executable);
  if (!exe) {
    std::cerr << "gpuscope trace: error: " << o.command.front()
              << (not_executable ? ": permission denied (not executable)" : ": command not found") << "\n";
    return not_executable ? 126 : 127;
  }

  const auto inject = find_inject_library();
  if (!inject)
    return fail("the collector library libgpuscope_inject.so was not found next to gpuscope",
                "build the whole project (cmake --build build) or set GPUSCOPE_INJECT_LIBRARY");

  if (std::getenv("GPUSCOPE_SKIP_DRIVER_CHECK") == nullptr) {
    const DriverCheck dc = check_cuda_driver();
    if (!dc.ok)
      return fail(dc.problem + "; the command was not run",
                  "run gpuscope trace on a machine with an NVIDIA GPU and driver");
  }
  if (const char* other = std::getenv("CUDA_INJECTION64_PATH"))
    std::cerr << "gpuscope trace: warning: CUDA_INJECTION64_PATH was already set (" << other
              << "); another tool's injection is replaced for the target\n";

  std::error_code ec;
  if (fs::exists(log_dir)) {
    if (!o.force_overwrite)
      return fail(log_dir.string() + " exists (logs of an earlier, unfinished trace?)",
                  "import or remove it, or use --force-overwrite");
    fs::remove_all(log_dir, ec);
  }
  fs::create_directories(log_dir, ec);
  if (ec) return fail("cannot create " + log_dir.string() + ": " + ec.message(), "");

  const std::int64_t launch_ns = realtime_ns();
  const std::string start_time = now_stamp("%Y-%m-%dT%H:%M:%S%z");
  LaunchSpec spec;
  spec.argv = o.command;
  spec.env = {
      {"CUDA_INJECTION64_PATH", inject->string()},
      {"GPUSCOPE_LOG_DIR", log_dir.string()},
      {"GPUSCOPE_TRACE", o.trace},
      {"GPUSCOPE_CAPTURE_RANGE", o.capture_range},
      {"GPUSCOPE_NVTX_CAPTURE", o.nvtx_capture},
      {"GPUSCOPE_CAPTURE_RANGE_END", o.capture_range_end},
      {"GPUSCOPE_LAUNCH_REALTIME_NS", std::to_string(launch_ns)},
      {"GPUSCOPE_DELAY_NS", std::to_string(static_cast<std::int64_t>(o.delay_s * 1e9))},
      {"GPUSCOPE_DURATION_NS", std::to_string(static_cast<std::int64_t>(o.duration_s * 1e9))},
      {"GPUSCOPE_POLLING_CALLS", o.polling_calls ? "1" : "0"},
      {"GPUSCOPE_FLUSH_PERIOD_MS", std::to_string(o.flush_period_ms)},
  };
  if (o.trace.find("nvtx") != std::string::npos) spec.env.emplace_back("NVTX_INJECTION64_PATH", inject->string());
  if (o.duration_s > 0 && o.kill != "none") {
    spec.kill_after = std::chrono::nanoseconds(static_cast<std::int64_t>((o.delay_s + o.duration_s) * 1e9));
    spec.kill_signal = o.kill == "sigkill" ? SIGKILL : SIGTERM;
  }

  const LaunchResult run = launch_and_wait(spec);
  if (!run.started) {
    fs::remove_all(log_dir, ec);
    std::cerr << "gpuscope trace: error: " << o.command.front() << ": " << run.describe() << "\n";
    return run.shell_exit_code();
  }
  const bool abnormal = run.term_signal.has_value();
  if (abnormal)
    std::cerr << "gpuscope trace: the target " << run.describe()
              << "; the trace keeps what was flushed before it ended\n";

  // Build the database from every process's log, then publish it atomically.
  std::vector<std::string> logs;
  for (const auto& entry : fs::directory_iterator(log_dir, ec))
    if (entry.path().extension() == ".gslog") logs.push_back(entry.path().string());
  std::sort(logs.begin(), logs.end());
  if (logs.empty())
    std::cerr << "gpuscope trace: warning: no process initialised CUDA, so nothing was recorded "
                 "(the command ran without using the GPU, or CUDA failed to start)\n";

  store::ImportOptions io;
  io.command = join_command(o.command);
  io.launched_pid = run.pid;
  io.exit_status = run.exit_status;
  io.term_signal = run.term_signal;
  io.start_time = start_time;
  io.gpuscope_version = kVersion;
  io.trace_sources = o.trace;
  io.capture_range = o.capture_range == "nvtx" ? "nvtx:" + o.nvtx_capture : o.capture_range;
  const fs::path tmp_db = db_path.string() + ".tmp";
  fs::remove(tmp_db, ec);
  try {
    const store::ImportResult r = store::import_logs(logs, tmp_db.string(), io);
    for (const auto& w : r.warnings) std::cerr << "gpuscope trace: warning: " << w << "\n";
    fs::rename(tmp_db, db_path, ec);
    if (ec) throw store::DatabaseError("cannot move the trace to " + db_path.string() + ": " + ec.message());
  } catch (const std::exception& e) {
    std::cerr << "gpuscope trace: error: building the trace database failed: " << e.what() << "\n"
              << "  the event logs are kept in " << log_dir.string()
              << "; run `gpuscope import " << log_dir.string() << " -o NAME` to retry\n";
    return run.shell_exit_code() != 0 ? run.shell_exit_code() : 1;
  }
  if (!o.keep_logs) fs::remove_all(log_dir, ec);

  if (!o.quiet) {
    try {
      store::Database db(db_path.string(), store::Database::Mode::kReadOnly);
      for (const Report& rep : analyze::trace_summary(db, o.top)) {
        render::render(rep, render::Format::kTable, std::cerr);
        std::cerr << "\n";
      }
    } catch (const std::exception& e) {
      std::cerr << "gpuscope trace: warning: summary failed: " << e.what() << "\n";
    }
  }
  std::cerr << "gpuscope trace: wrote " << db_path.string() << "  (the target " << run.describe() << ")\n";
  return run.shell_exit_code();
}

}  // namespace gpuscope::cli
