// `gpuscope comm-summary TRACE... [-o FILE | --dir DIR] [-j N] [-f]`: the map of the many-GPU
// reports (nccl_sum, comm_overlap, rank_sum, stragglers, collective_trace): reads one trace
// (one rank's, one host's, or a whole job's) and writes its small summary, a JSON document
// (analyze/comm/comm_summary.hpp: step times, every NCCL kernel's collective, start, end and size,
// compute/communication/exposed totals per step, the clock domain). `gpuscope stats
// A.summary.json B.summary.json -r stragglers` is the reduce. Several traces are mapped in
// parallel (-j, cli/comm_inputs.hpp); each summary goes to NAME.summary.json beside its trace
// (or in --dir). Outputs are written atomically and kept unless -f (cli/output_files.hpp).
// Exit codes: 0 written; 1 a trace cannot be read or an output exists without -f.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace gpuscope::cli {

struct CommSummaryOptions {
  std::vector<std::string> traces;
  std::string output;  // -o FILE: only with one trace
  std::string dir;     // --dir DIR: NAME.summary.json of each trace there
  int jobs = 0;        // 0: every core
  bool force_overwrite = false;
};

/// Declares the subcommand and its options (one place: also the --help text).
CLI::App* add_comm_summary_command(CLI::App& app, CommSummaryOptions& options);

/// Runs it; returns the exit code. Throws with a user-facing message on a bad trace or output.
[[nodiscard]] int run_comm_summary(const CommSummaryOptions& options);

/// Where the summary of `trace` goes without -o: NAME.summary.json beside it, or in `dir`.
[[nodiscard]] std::string summary_path(const std::string& trace, const std::string& dir);

}  // namespace gpuscope::cli
