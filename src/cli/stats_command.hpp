// `gpuscope stats TRACE [--report R1,R2] [--format F] [-o FILE] [--base] [--mangled]`:
// print nsys-style summary reports (analyze/nsys_reports.hpp) of a trace.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace gpuscope::cli {

struct StatsOptions {
  std::string trace;                 // NAME.sqlite
  std::vector<std::string> reports;  // empty → analyze::report_names()
  std::string format = "table";      // table | csv | json | markdown
  std::string output;                // file; empty → stdout
  bool base = false;                 // kernel short names
  bool mangled = false;              // kernel mangled names
};

/// Declares the subcommand and its options (one place: also the --help text).
CLI::App* add_stats_command(CLI::App& app, StatsOptions& options);

/// Runs it; returns the exit code. Throws (store::DatabaseError, std::invalid_argument,
/// std::runtime_error) with a user-facing message on a bad trace, report name,
/// format or output file.
[[nodiscard]] int run_stats(const StatsOptions& options);

}  // namespace gpuscope::cli
