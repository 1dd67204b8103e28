#include "cli/collect_run.hpp"

#include "collect/pm_sampler.hpp"

#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <stdexcept>

#include "cli/driver_check.hpp"
#include "cli/output_name.hpp"
#include "core/version.hpp"
#include "store/atomic_file.hpp"
#include "store/database.hpp"
#include "store/output_lock.hpp"
#include "store/run_description.hpp"

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

// The collector library sits in ../lib next to bin/gpuscope (build tree and install).
}  // namespace

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

namespace {

std::string join_command(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    const bool quote = a.empty() || a.find_first_of(" \t\"'$\\") != std::string::npos;
    s += quote ? "'" + a + "'" : a;
  }
  return s;
}

std::int64_t realtime_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

int cli_fail(const std::string& tool, const std::string& what, const std::string& todo) {
  std::cerr << "gpuscope " << tool << ": error: " << what << "\n";
  if (!todo.empty()) std::cerr << "  what to do: " << todo << "\n";
  return 1;
}

CollectRunResult collect_run(CollectRunSpec o) {
  CollectRunResult res;
  const std::string& tool = o.tool;
  // Output names: NAME.sqlite and the per-process logs in NAME.logs/.
  if (o.output.empty()) o.output = "gpuscope-" + now_stamp("%Y%m%d-%H%M%S");
  try {
    o.output = expand_output_name(o.output);  // %h, %p, %q{VAR}: a name per host or rank
  } catch (const std::invalid_argument& e) {
    res.exit_code = cli_fail(tool, std::string(e.what()) + "; nothing was run", "");
    return res;
  }
  if (o.output.size() > 7 && o.output.ends_with(".sqlite")) o.output.resize(o.output.size() - 7);
  const fs::path db_path = fs::absolute(o.output + ".sqlite");
  const fs::path log_dir = fs::absolute(o.output + ".logs");
  res.db_path = db_path;
  // One gpuscope at a time per trace name, held to the end (store/output_lock.hpp); taken
  // first, or, when the output folder does not exist yet, once it is made after the checks.
  std::optional<store::OutputLock> lock;
  const auto take_lock = [&]() {
    try {
      lock.emplace(db_path);
    } catch (const store::OutputBusyError& e) {
      res.exit_code = cli_fail(tool, std::string(e.what()) + "; nothing was run", kBusyTodo);
      return false;
    } catch (const store::FileWriteError& e) {
      res.exit_code = cli_fail(tool, std::string(e.what()) + "; nothing was run", "");
      return false;
    }
    if (const int stale = lock->remove_stale_temporaries(); stale > 0)
      std::cerr << "gpuscope " << tool << ": removed " << stale << " unfinished temporary file(s) of "
                << db_path.string() << " left by a gpuscope that was killed\n";
    return true;
  };
  if (fs::is_directory(db_path.parent_path()) && !take_lock()) return res;
  try {
    store::check_output(db_path, store::overwrite_if(o.force_overwrite));
  } catch (const store::FileWriteError& e) {
    res.exit_code =
        cli_fail(tool, std::string(e.what()) + "; nothing was run", "give another -o name, or add -f to replace it");
    return res;
  }

  // The command must exist before we check the GPU or touch any file.
  bool not_executable = false;
  const auto exe = find_executable(o.command.front(), &not_executable);
  if (!exe) {
    std::cerr << "gpuscope " << tool << ": error: " << o.command.front()
              << (not_executable ? ": permission denied (not executable)" : ": command not found") << "\n";
    res.exit_code = not_executable ? 126 : 127;
    return res;
  }

  const auto inject = find_inject_library();
  if (!inject) {
    res.exit_code = cli_fail(tool, "the collector library libgpuscope_inject.so was not found next to gpuscope",
                             "build the whole project (cmake --build build) or set GPUSCOPE_INJECT_LIBRARY");
    return res;
  }

  if (std::getenv("GPUSCOPE_SKIP_DRIVER_CHECK") == nullptr) {
    const DriverCheck dc = check_cuda_driver();
    if (!dc.ok) {
      res.exit_code = cli_fail(tool, dc.problem + "; the command was not run",
                               "run gpuscope " + tool + " on a machine with an NVIDIA GPU and driver");
      return res;
    }
  }
  if (o.after_checks) o.after_checks(o);
  if (const char* other = std::getenv("CUDA_INJECTION64_PATH"))
    std::cerr << "gpuscope " << tool << ": warning: CUDA_INJECTION64_PATH was already set (" << other
              << "); another tool's injection is replaced for the target\n";

  std::error_code ec;
  if (!lock) {
    fs::create_directories(db_path.parent_path(), ec);
    if (!take_lock()) return res;
  }
  if (fs::exists(log_dir)) {
    if (!o.force_overwrite) {
      res.exit_code = cli_fail(tool,
                               log_dir.string() +
                                   " exists: the event logs of an earlier run that did not finish "
                                   "(gpuscope was killed?); nothing was run",
                               "turn them into a trace with `gpuscope import " + log_dir.string() + " -o " + o.output +
                                   "`, or remove the folder, or use --force-overwrite to discard them");
      return res;
    }
    fs::remove_all(log_dir, ec);
  }
  fs::create_directories(log_dir, ec);
  if (ec) {
    res.exit_code = cli_fail(tool, "cannot create " + log_dir.string() + ": " + ec.message(), "");
    return res;
  }

  const std::string start_time = now_stamp("%Y-%m-%dT%H:%M:%S%z");
  LaunchSpec spec;
  spec.argv = o.command;
  // The launch instant is the origin of --delay/--duration: taken right before the fork.
  spec.env = {{"CUDA_INJECTION64_PATH", inject->string()},
              {"GPUSCOPE_LOG_DIR", log_dir.string()},
              {"GPUSCOPE_LAUNCH_REALTIME_NS", std::to_string(realtime_ns())}};
  spec.env.insert(spec.env.end(), o.env.begin(), o.env.end());
  if (o.nvtx) spec.env.emplace_back("NVTX_INJECTION64_PATH", inject->string());
  if (o.pytorch_hooks) {
    const fs::path hooks = inject->parent_path() / "python";
    const char* todo = "build the whole project (cmake --build build), which copies them beside the collector";
    if (fs::exists(hooks / "sitecustomize.py", ec)) {
      const char* old = std::getenv("PYTHONPATH");
      spec.env.emplace_back("PYTHONPATH", hooks.string() + (old && *old ? ":" + std::string(old) : ""));
    } else if (o.pytorch_hooks_asked) {
      fs::remove_all(log_dir, ec);
      res.exit_code =
          cli_fail(tool, "gpuscope's PyTorch hooks are missing: " + (hooks / "sitecustomize.py").string(), todo);
      return res;
    } else {
      std::cerr << "gpuscope " << tool << ": warning: gpuscope's PyTorch hooks are missing ("
                << (hooks / "sitecustomize.py").string() << "): training steps and generate() calls go unmarked; "
                << todo << "\n";
    }
  }
  spec.kill_after = o.kill_after;
  spec.kill_signal = o.kill_signal;

  // What the logs alone do not hold goes beside them (run.json) before the command starts,
  // with its pid once it runs and its exit status at the end: if gpuscope itself is killed,
  // `gpuscope import NAME.logs` still builds the whole trace.
  store::ImportOptions& io = o.import;
  io.command = join_command(o.command);
  io.start_time = start_time;
  io.gpuscope_version = kVersion;
  const auto describe_run = [&](const char* when) {
    try {
      store::write_run_description(log_dir, io);
    } catch (const std::exception& e) {
      std::cerr << "gpuscope " << tool << ": warning: " << when << ": " << e.what() << "\n";
    }
  };
  describe_run("before the run");
  spec.on_started = [&](int pid) {
    io.launched_pid = static_cast<std::uint32_t>(pid);
    describe_run("at the start");
  };

  if (o.before_launch) o.before_launch(log_dir);
  res.run = launch_and_wait(spec);
  if (o.after_exit) o.after_exit();
  const LaunchResult& run = res.run;
  if (!run.started) {
    fs::remove_all(log_dir, ec);
    std::cerr << "gpuscope " << tool << ": error: " << o.command.front() << ": " << run.describe() << "\n";
    res.exit_code = run.shell_exit_code();
    return res;
  }
  res.exit_code = run.shell_exit_code();
  if (run.term_signal.has_value())
    std::cerr << "gpuscope " << tool << ": the target " << run.describe()
              << "; the database keeps what was flushed before it ended\n";

  // Build the database from every process's log, then publish it atomically.
  const std::vector<std::string> logs = store::list_trace_inputs(log_dir.string(), ec);
  // The GPU-metrics sampler's log (gpuscope trace --gpu-metrics) is not a traced process's.
  const bool any_process = std::any_of(logs.begin(), logs.end(), [](const std::string& p) {
    const fs::path path(p);
    return path.extension() == ".gslog" && !path.filename().string().starts_with(collect::kGpuMetricsLogPrefix);
  });
  if (!any_process)
    std::cerr << "gpuscope " << tool
              << ": warning: no process initialised CUDA, so nothing was recorded "
                 "(the command ran without using the GPU, or CUDA failed to start)\n";

  io.launched_pid = static_cast<std::uint32_t>(run.pid);
  io.exit_status = run.exit_status;
  io.term_signal = run.term_signal;
  describe_run("at the end");
  io.overwrite = o.force_overwrite;  // import_logs writes atomically: the old trace stays until the new one is whole
  try {
    const store::ImportResult r = store::import_logs(logs, db_path.string(), io);
    for (const auto& w : r.warnings) std::cerr << "gpuscope " << tool << ": warning: " << w << "\n";
  } catch (const std::exception& e) {
    std::cerr << "gpuscope " << tool << ": error: building the database failed: " << e.what() << "\n"
              << "  the event logs are kept in " << log_dir.string() << "; run `gpuscope import " << log_dir.string()
              << " -o NAME` to retry\n";
    if (res.exit_code == 0) res.exit_code = 1;
    return res;
  }
  if (!o.keep_logs) fs::remove_all(log_dir, ec);
  res.have_db = true;
  return res;
}

}  // namespace gpuscope::cli
