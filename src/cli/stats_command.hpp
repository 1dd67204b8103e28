// `gpuscope stats TRACE [-r R1,R2] [--format F] [-o FILE] [--base] [--mangled]
//                 [--filter-nvtx RANGE[@DOMAIN][/N]] [--from T] [--to T] [--process PID]
//                 [--device N] [--top N] [--sort COLUMN] [--timeunit ns|us|ms|s] [--name-width N|full]`:
// print summary reports (analyze/report_registry.hpp lists them all) of a trace.
//
// Order of work: every option is checked before the trace is opened (a typo costs
// nothing); the filters build one filtered copy of the trace (analyze/common/trace_filter.hpp)
// that every report runs on; then each report gets --timeunit, --sort and --top
// (core/report_transform.hpp), in that order, and is rendered. Warnings (a filter that
// matched nothing, a report without the --sort column) go to stderr. -o FILE is written
// atomically and an existing FILE is kept unless -f (cli/output_files.hpp). docs/stats.md
// documents the reports and options for users.
//
// Several inputs (`gpuscope stats A.sqlite B.sqlite ...`, or summaries that gpuscope
// comm-summary wrote, or both): the many-GPU reports (analyze/comm/nccl_reports.hpp's
// comm_report_names; all five without -r) over the whole job, as map → reduce: each input
// is mapped to its summary in parallel (-j, cli/comm_inputs.hpp), the summaries are reduced
// (analyze/comm/comm_data.hpp's comm_reduce), the reports run on the result. One input that is a
// summary takes the same path; one trace takes the ordinary path (which is the same map and
// reduce inside). Filters and --whole-run need one trace and are refused with several.
// That path is cli/stats_many.hpp; the steps both paths share are cli/stats_steps.hpp.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/table_flags.hpp"

namespace gpuscope::cli {

struct StatsOptions {
  std::string trace;                 // NAME.sqlite (the first input)
  std::vector<std::string> inputs;   // every input: traces and/or comm summaries
  int jobs = 0;                      // -j: inputs mapped at once; 0 = every core
  std::vector<std::string> reports;  // empty → analyze::report_names() (report_registry.hpp)
  std::string format = "table";      // table | csv | json | markdown
  std::string output;                // file; empty → stdout
  bool force_overwrite = false;      // -f: replace an existing output (else refused before any work)
  bool base = false;                 // kernel short names
  bool mangled = false;              // kernel mangled names
  // Filters (analyze/common/trace_filter.hpp); empty/unset = no filter.
  std::string filter_nvtx;  // RANGE[@DOMAIN][/N]
  std::string from;         // time since the start of the trace, "1.5", "250ms"
  std::string to;
  std::optional<std::int64_t> process;
  std::optional<std::int64_t> device;  // physical GPU index
  bool whole_run = false;              // top/gpu_util/launch_overhead over the whole process, not the steady steps
  // Report transforms (core/report_transform.hpp).
  std::optional<std::int64_t> top;  // rows per report
  std::string sort;                 // column name
  TableFlags table;                 // --timeunit, --name-width (cli/table_flags.hpp)
};

/// Declares the subcommand and its options (one place: also the --help text).
CLI::App* add_stats_command(CLI::App& app, StatsOptions& options);

/// Runs it; returns the exit code. Throws (store::DatabaseError, std::invalid_argument,
/// std::runtime_error) with a user-facing message on a bad trace, report name, format,
/// time, time unit, --sort column (in no report) or output file.
[[nodiscard]] int run_stats(const StatsOptions& options);

}  // namespace gpuscope::cli
