// `gpuscope stats` over several inputs (traces, comm summaries that gpuscope comm-summary
// wrote, or both), or over one comm summary: the many-GPU reports (analyze/comm/
// nccl_reports.hpp's comm_report_names; all of them without -r) over the whole job, as map →
// reduce. Each input is mapped to its summary in parallel (-j, cli/comm_inputs.hpp), the
// summaries are reduced (analyze/comm/comm_data.hpp's comm_reduce) and the collectives
// matched across ranks, then the reports run on the result and are finished as for one
// trace (stats_steps.hpp). Memory is bounded by one rank, not by the job.
// Checked before any input is read: the report names (only the many-GPU ones), no filter and
// no --whole-run (they need one trace), --timeunit, each input given once, the output file.
// Errors: std::invalid_argument with a user-facing message for those; the map's errors
// (a trace or summary that cannot be read) and those of finish_stats_reports.
#pragma once

#include "cli/stats_command.hpp"

namespace gpuscope::cli {

/// Whether `options` takes this path: several inputs, or one that is a comm summary.
[[nodiscard]] bool is_stats_many(const StatsOptions& options);

/// Runs the many-GPU reports (see the file comment); returns the exit code (0).
[[nodiscard]] int run_stats_many(const StatsOptions& options);

}  // namespace gpuscope::cli
