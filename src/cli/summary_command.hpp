// `gpuscope summary TRACE [--format F] [--top N] [-r NAME] [--timeunit U] [--name-width N|full]`: prints the
// end-of-trace summary of a trace again (analyze/nsys/trace_summary.hpp): wall and GPU busy time, top kernels, memory
// copies, and any data loss — the reports `gpuscope trace` prints when it finishes. One
// document per format (render/report_render.hpp): csv always has the "section" column
// (the reports present depend on the trace) unless -r picks one report.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/table_flags.hpp"

namespace gpuscope::cli {

struct SummaryOptions {
  std::string trace;             // NAME.sqlite
  std::string format = "table";  // table | csv | json | markdown
  int top = 10;                  // kernels listed; 0 = all
  std::string report;            // -r: only this report of the summary; empty = all
  TableFlags table;              // --timeunit, --name-width
  bool whole_run = false;        // --whole-run: the overview judges the whole process
};

/// The names of the summary's reports, in print order (trace_summary.hpp).
inline constexpr const char* kSummaryReports[] = {"trace_overview", "gpu_utilization", "cuda_gpu_kern_sum",
                                                  "cuda_gpu_mem_sum"};

/// Declares the subcommand and its options (one place: also the --help text).
CLI::App* add_summary_command(CLI::App& app, SummaryOptions& options);

/// Runs it (prints to stdout); returns the exit code. Throws (store::DatabaseError,
/// std::invalid_argument) with a user-facing message on a bad trace, format or report
/// name, and std::runtime_error when -r names a report this trace has no data for.
[[nodiscard]] int run_summary(const SummaryOptions& options);

}  // namespace gpuscope::cli
