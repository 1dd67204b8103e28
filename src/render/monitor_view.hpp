// monitor_view: `gpuscope monitor`'s three outputs from a MonitorModel (core/monitor_model.hpp):
//  - monitor_screen: the full-screen view as lines of text (UTF-8, each at most `width`
//    columns), drawn by the CLI with ncurses; per GPU: SM active with NVML's utilization
//    beside it, warps active, tensor active, DRAM (and % of the ceiling), PCIe, NVLink,
//    clock, power, temperature, memory, with 60 s sparklines; then the processes.
//  - monitor_line: one plain line per GPU for a frame (not a terminal: pipes, logs).
//  - write_monitor_json: frames as one JSON document, base units (bytes/s, Hz, W, °C, bytes,
//    %), null where unknown.
// Pure: writes only to the strings and stream it is given.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/monitor_model.hpp"

namespace gpuscope::render {

/// What the keys changed.
struct MonitorViewState {
  double interval_s = 0.5;         // refresh interval
  bool paused = false;             // frames still come, the screen holds
  int selected_gpu = -1;           // index into MonitorModel::gpus(); -1 = all
  std::vector<std::string> notes;  // lines for the user (counters unavailable: why)
};

/// The screen as at most `height` lines of at most `width` columns.
[[nodiscard]] std::vector<std::string> monitor_screen(const core::MonitorModel& model, const MonitorViewState& state,
                                                      int width, int height);

/// One line per GPU of `frame`: "t=1.5 s gpu0 SM 87 % (NVML util 100 %) warps 35 % tensor 61 % DRAM ...".
[[nodiscard]] std::vector<std::string> monitor_lines(const core::MonitorModel& model, const core::MonitorFrame& frame);

/// {"gpus": [...], "notes": [...], "frames": [{"time_s", "gpus": [...], "processes": [...]}]}.
void write_monitor_json(std::ostream& out, const core::MonitorModel& model,
                        const std::vector<core::MonitorFrame>& frames, const std::vector<std::string>& notes);

}  // namespace gpuscope::render
