// judged_window: the one place that decides which part of a trace the headlines judge — the
// program's steady state, not its imports, model loading and warm-up — and says so in one line.
// `gpuscope stats` (top, gpu_util, launch_overhead, sync_wait, memcpy_check, op_sum, module_sum,
// cuda_api_sum, nvtx_sum, py_sum, gpu_idle_py), `gpuscope summary` (and the summary `trace` prints), the HTML
// `report` and `diff` all take their window from here (docs/steady-state.md).
//
// The steps, from the first source that gives at least 2 steady steps:
//   (a) PyTorch training steps: torch_steps (the optimizer-step marks; step_facts);
//   (b) NVTX ranges named like steps: closed push/pop or start/end ranges (not marks, not the
//       PyTorch hooks' own operator and module ranges) whose whole text matches kStepRangePattern
//       (case-insensitive), the outermost of each thread; numbered 1, 2, ... per process;
//   (c) iterations found in the GPU work (analyze/timeline/iterations.hpp): each from its first
//       GPU start to the next iteration's (the last: its GPU end), classified by the detector;
//   (d) none: the window runs from the first GPU work (kernel, memcpy or memset) to the end of the
//       trace, and the note says that no repeating structure was found and why.
// (a) and (b) are measured by measure_steps and classified per process by classify_steps
// (analyze/pytorch/pytorch_reports.hpp). The window is steady_window(steps): from the first
// steady step's start to the last steady step's end. With whole_run the steps are still found
// (step_sum lists them) but there is no window and no note: the whole process is judged.
//
// Times are the trace clock (ns), as kernels.start_ns. Errors: store::DatabaseError from reading
// `db` or building the filtered copy.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyze/common/trace_filter.hpp"
#include "analyze/pytorch/pytorch_reports.hpp"

namespace gpuscope::analyze {

/// The names of NVTX ranges taken as steps (matched against the whole text, ignoring case):
/// "step", "step 3", "iteration", "iter 12", "train_step", "train step 2", torch.profiler's
/// "ProfilerStep#7". A number may follow after a space, '_', '#', ':' or '-'.
inline constexpr const char* kStepRangePattern =
    R"(^\s*(train[ _]?step|step|iteration|iter|profilerstep)(\s*[ _#:-]?\s*[0-9]+)?\s*$)";

/// The stats reports judged on the window (the others, nsys's per-name sums and per-event traces
/// among them, cover the whole trace, as nsys stats does).
inline constexpr std::array<std::string_view, 11> kJudgedReports = {
    "top",        "gpu_util",     "launch_overhead", "sync_wait", "memcpy_check", "op_sum",
    "module_sum", "cuda_api_sum", "nvtx_sum",        "py_sum",    "gpu_idle_py"};

/// Whether `report` is one of kJudgedReports.
[[nodiscard]] bool is_judged_report(std::string_view report);

/// Whether an NVTX range's text names a step (kStepRangePattern).
[[nodiscard]] bool is_step_range_name(std::string_view text);

enum class StepSource {
  kPytorch,     // torch_steps
  kNvtx,        // NVTX ranges named like steps
  kIterations,  // found in the GPU work
  kNone,        // no steps: judged from the first GPU work on
};

struct JudgedWindow {
  StepSource source = StepSource::kNone;  // where `steps` and the window come from
  std::vector<StepFacts> steps;           // in time order per process, classified; empty for kNone
  /// The judged window, trace clock ns; nullopt: the whole process (whole_run, or no GPU work).
  std::optional<std::pair<std::int64_t, std::int64_t>> window;
  /// One line: which window and how the steps were found, e.g. "judged the steady state: 18 of
  /// 20 iterations found in the GPU work (47 launches each, thread 1234), 2.31 s to 4.07 s since
  /// the start; 2 warm-up left out (step_sum lists them; --whole-run for the whole process)".
  /// Empty when the whole process is judged.
  std::string note;
};

/// The window of `db` the headlines judge (see the file comment).
[[nodiscard]] JudgedWindow judged_window(store::Database& db, bool whole_run = false);

/// The NVTX step ranges of `db` (source (b)), measured and classified; empty when there are none.
[[nodiscard]] std::vector<StepFacts> nvtx_step_facts(store::Database& db);

/// A copy of `db` holding only the events of w.window (filter_trace: events overlapping it, not
/// clipped); nullopt when there is no window or it covers the whole trace: judge `db` itself.
[[nodiscard]] std::optional<FilteredTrace> judged_trace(store::Database& db, const JudgedWindow& w);

/// "PyTorch training steps", "NVTX step ranges", "iterations found in the GPU work", "none".
[[nodiscard]] const char* step_source_name(StepSource s);

}  // namespace gpuscope::analyze
