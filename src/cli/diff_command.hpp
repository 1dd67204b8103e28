// `gpuscope diff A.sqlite B.sqlite [--format F] [--top N] [--k K] [--floor F]
// [--timeunit U] [--name-width N|full]`: what changed
// from trace A to trace B per kernel name, NVTX range, PyTorch operator and training step,
// with a noise-aware verdict (analyze/diff/trace_diff.hpp). One document per format
// (render/report_render.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/table_flags.hpp"

namespace gpuscope::cli {

struct DiffOptions {
  std::string a, b;              // the two traces
  std::string format = "table";  // table | csv | json | markdown
  int top = 30;                  // rows printed; 0 = all
  double k = 3.0;                // standard errors of the difference
  double floor = 0.05;           // smallest relative change ever called
  bool whole_run = false;        // --whole-run: compare the whole traces, not their steady states
  std::string html;              // --html OUT.html: also the page of the whole comparison
  bool force_overwrite = false;  // -f: replace an existing --html file
  TableFlags table;              // --timeunit, --name-width
};

/// Declares the subcommand and its options (also the --help text).
CLI::App* add_diff_command(CLI::App& app, DiffOptions& options);

/// Runs it (prints to stdout); returns the exit code. Throws store::DatabaseError for a file
/// that is not a trace, std::invalid_argument for a bad format.
[[nodiscard]] int run_diff(const DiffOptions& options);

}  // namespace gpuscope::cli
