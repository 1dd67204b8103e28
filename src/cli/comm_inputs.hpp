// comm_inputs: the map of the many-GPU reports over many files, in parallel on this machine.
// Each input is either a trace (.sqlite: analyze::detail::comm_map runs on it) or a summary a
// map wrote before (gpuscope comm-summary, analyze/comm/comm_summary.hpp: read back). `jobs`
// threads take the inputs in turn (a small pool: each holds one trace open and one rank's
// intervals at a time, so memory grows with jobs, not with the number of ranks).
// Errors: the first input's error that fails (store::DatabaseError, analyze::CommSummaryError),
// rethrown after every thread has stopped.
#pragma once

#include <string>
#include <vector>

#include "analyze/comm/comm_data.hpp"

namespace gpuscope::cli {

/// The summaries of `inputs`, in their order. jobs < 1 means one.
[[nodiscard]] std::vector<analyze::detail::CommSummary> map_comm_inputs(const std::vector<std::string>& inputs,
                                                                        int jobs);

/// One trace's summary: comm_map with `source` set to `path`.
[[nodiscard]] analyze::detail::CommSummary map_trace(const std::string& path);

/// The default map parallelism: the machine's cores (at least 1).
[[nodiscard]] int default_map_jobs();

}  // namespace gpuscope::cli
