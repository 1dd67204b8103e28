// `gpuscope report RUN.sqlite [-o RUN.html]`: one self-contained HTML page a person reads
// (issue 19): the headline of `stats -r top`, where the time goes per GPU and per step, the
// timeline overview, the stats tables (sortable, filterable), memory and GPU metrics over
// time. Data from analyze/report/report_page.hpp, HTML from render/html_report.hpp; docs/report.md.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace gpuscope::cli {

struct ReportCommandOptions {
  std::string trace;   // RUN.sqlite
  std::string output;  // default: RUN.html next to the trace
  bool force_overwrite = false;
  bool whole_run = false;    // as stats --whole-run
  bool no_timeline = false;  // leave the timeline overview out (a smaller page)
};

/// Declares the subcommand and its options (also the --help text).
CLI::App* add_report_command(CLI::App& app, ReportCommandOptions& options);

/// Writes the page (atomically); returns the exit code. Throws store::DatabaseError for a file
/// that is not a trace (store::TraceDamagedError for a damaged one), store::OutputExistsError
/// for an existing output without -f.
[[nodiscard]] int run_report_page(const ReportCommandOptions& options);

}  // namespace gpuscope::cli
