// `gpuscope export TRACE [--format perfetto] [-o FILE]`: converts a trace into a timeline
// for ui.perfetto.dev / chrome://tracing (Chrome trace-event JSON with PyTorch-profiler
// field names; render/perfetto_json.hpp writes it from analyze/timeline.hpp).
// The default output is NAME.perfetto.json beside NAME.sqlite; an existing file is kept
// unless force_overwrite (-f), and replaced only once the new one is complete
// (cli/output_files.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace gpuscope::cli {

struct ExportOptions {
  std::string trace;                // NAME.sqlite
  std::string format = "perfetto";  // perfetto (the only one today)
  std::string output;               // empty → NAME.perfetto.json
  bool force_overwrite = false;     // -f: replace an existing output
};

/// Declares the subcommand and its options (one place: also the --help text).
CLI::App* add_export_command(CLI::App& app, ExportOptions& options);

/// Runs it; returns the exit code. Throws (store::DatabaseError, std::runtime_error;
/// store::OutputExistsError before the trace is read) with a user-facing message on a bad
/// trace or an output file that exists or cannot be written.
[[nodiscard]] int run_export(const ExportOptions& options);

}  // namespace gpuscope::cli
