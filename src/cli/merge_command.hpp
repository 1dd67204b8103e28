// `gpuscope merge A.sqlite B.sqlite ... -o JOB [-f]`: joins traces written on different
// hosts (one per node, or one per rank under srun) into one job trace, JOB.sqlite, keeping
// every event and putting every host on the first trace's clock (store/trace_merge.hpp).
// JOB.sqlite is written atomically and kept unless -f (cli/output_files.hpp); the merge holds
// JOB.sqlite.lock (store/output_lock.hpp) against another gpuscope writing it.
// Exit codes: 0 written (a host whose clock offset could not be estimated is a warning);
// 1 an input is missing, not a gpuscope trace, of another schema version, a merge itself or
// given twice, or JOB.sqlite exists without -f (the message says which and what to do).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace gpuscope::cli {

struct MergeOptions {
  std::vector<std::string> traces;  // the inputs, in order: the first gives the clock
  std::string output;               // JOB or JOB.sqlite
  bool force_overwrite = false;     // replace JOB.sqlite if it exists
};

/// Declares the subcommand and its options (one place: also the --help text).
CLI::App* add_merge_command(CLI::App& app, MergeOptions& options);

/// Runs it; returns the exit code (see above). Prints to stderr. Throws store::DatabaseError
/// when SQLite fails while writing.
[[nodiscard]] int run_merge(const MergeOptions& options);

}  // namespace gpuscope::cli
