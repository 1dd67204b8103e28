// `gpuscope summary TRACE [--format F] [--top N]`: prints the end-of-trace summary of a
// trace again (analyze/trace_summary.hpp): wall and GPU busy time, top kernels, memory
// copies, and any data loss — the reports `gpuscope trace` prints when it finishes.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace gpuscope::cli {

struct SummaryOptions {
  std::string trace;              // NAME.sqlite
  std::string format = "table";   // table | csv | json | markdown
  int top = 10;                   // kernels listed
};

/// Declares the subcommand and its options (one place: also the --help text).
CLI::App* add_summary_command(CLI::App& app, SummaryOptions& options);

/// Runs it (prints to stdout); returns the exit code. Throws (store::DatabaseError,
/// std::invalid_argument) with a user-facing message on a bad trace or format.
[[nodiscard]] int run_summary(const SummaryOptions& options);

}  // namespace gpuscope::cli
