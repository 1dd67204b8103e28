// `gpuscope monitor`: what the GPUs are really doing, live — SM and tensor-core activity from
// the GPUs' own counters (CUPTI PM sampling, as `trace --gpu-metrics`), beside NVML's
// utilization, clocks, power, temperature, memory and processes (docs/monitor.md).
//
//   source (cli/monitor_source.hpp: the GPUs, or a recording) -> model (core/monitor_model.hpp:
//   the last 60 s) -> view (render/monitor_view.hpp: the screen drawn with ncurses, plain lines
//   when stdout is not a terminal, one JSON document) [+ --record: a trace, cli/monitor_record.hpp]
//
// Exit codes: 0 done; 2 no GPU (no driver, no visible device; the message says which);
// 1 any other error (a recording that cannot be read or written).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace gpuscope::cli {

/// Exit code of `gpuscope monitor` when there is no GPU to watch.
inline constexpr int kMonitorNoGpuExit = 2;

struct MonitorOptions {
  double interval_s = 0.5;      // refresh interval
  double sample_rate_hz = 100;  // PM sampling rate
  bool once = false;            // one frame, then exit
  double duration_s = 0;        // run this long, then exit; 0 = until q / Ctrl-C
  std::string format = "text";  // text | json
  std::string record;           // --record FILE: a trace of the frames
  bool plain = false;           // lines even on a terminal
  bool no_counters = false;     // NVML only
  int gpu = -1;                 // show this GPU (index); -1 = all
  std::string replay;           // frames from a --format json document instead of the GPUs
};

/// Declares the subcommand and its options (one place: also the --help text).
CLI::App* add_monitor_command(CLI::App& app, MonitorOptions& options);

/// Runs it; returns the exit code (above). Throws std::runtime_error for a bad recording.
[[nodiscard]] int run_monitor(const MonitorOptions& options);

}  // namespace gpuscope::cli
