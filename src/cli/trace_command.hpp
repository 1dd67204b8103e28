// `gpuscope trace [options] -- CMD [ARGS...]`: run CMD with the collector injected
// and build one SQLite trace of it and its CUDA-using children.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope::cli {

struct TraceOptions {
  std::string output;  // NAME or NAME.sqlite; default gpuscope-<date>-<time>
  bool force_overwrite = false;
  std::string trace = "cuda,nvtx";         // sources
  std::string capture_range = "none";      // none | cudaProfilerApi | nvtx
  std::string nvtx_capture;                // RANGE[@DOMAIN]
  std::string capture_range_end = "stop";  // stop | repeat
  std::int64_t delay_ns = 0;               // --delay, checked: 0 to 10^6 s
  std::int64_t duration_ns = 0;            // --duration, checked: 0 to 10^6 s; 0 = to the end
  std::string kill = "sigterm";            // sigterm | sigkill | none (after --duration)
  bool polling_calls = false;
  std::string cuda_api = "gpu";  // gpu | all (GPUSCOPE_API_CALLS)
  std::string python_callsites;  // sync | all | none (GPUSCOPE_PYTHON_CALLSITES); "" = the default (trace_command.cpp)
  std::string python_sampling;   // --python-sampling[=RATE]: "" = off (GPUSCOPE_PYTHON_SAMPLING)
  std::string calibrate = "auto";  // auto (cached a week) | always | never
  bool sync_records = false;       // also CUPTI SYNCHRONIZATION records
  bool memory_usage = false;       // --cuda-memory-usage: CUPTI MEMORY2 + MEMORY_POOL records
  std::string gpu_metrics;         // --gpu-metrics[=RATE]: "" = off, else the rate ("20k" when given bare)
  int flush_period_ms = 200;
  bool keep_logs = false;
  bool quiet = false;
  int top = 10;         // kernels in the summary; 0 = all
  std::string pytorch;  // --pytorch: "" (the default hooks: steps, generate), none, or ops / modules /
                        // ops,modules [+ ,shapes] [+ ,memory] added to them
  std::string session;  // gpuscope launch --session NAME (cli/session_command.hpp); "" for trace
  std::vector<std::string> command;
};

/// Declares the subcommand and its options (one place: also the --help text). `name`
/// "launch" declares `gpuscope launch --session NAME`: the same options, recording only
/// between `gpuscope start` and `gpuscope stop` (cli/session_command.hpp).
CLI::App* add_trace_command(CLI::App& app, TraceOptions& options, const std::string& name = "trace");

/// Runs it; returns the process exit code (the target's, passed through, or
/// gpuscope's own error code 1 / 127 / 126). Prints to stderr.
[[nodiscard]] int run_trace(TraceOptions options);

}  // namespace gpuscope::cli
