// `gpuscope export TRACE [--format perfetto|pftrace] [-o FILE]`: converts a trace into a
// timeline for ui.perfetto.dev: `perfetto`, Chrome trace-event JSON with PyTorch-profiler
// field names, that chrome://tracing opens too (render/perfetto_json.hpp); `pftrace`,
// Perfetto's native protobuf trace, several times smaller, for big traces
// (render/perfetto_proto.hpp). Both are written from analyze/timeline/timeline.hpp, streamed.
// The default output is NAME.perfetto.json (NAME.pftrace) beside NAME.sqlite; an existing file is kept
// unless force_overwrite (-f), and replaced only once the new one is complete
// (cli/output_files.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace gpuscope::cli {

struct ExportOptions {
  std::string trace;                // NAME.sqlite
  std::string format = "perfetto";  // perfetto (Chrome JSON) or pftrace (Perfetto protobuf)
  std::string output;               // empty → NAME.perfetto.json or NAME.pftrace
  bool force_overwrite = false;     // -f: replace an existing output
};

/// Declares the subcommand and its options (one place: also the --help text).
CLI::App* add_export_command(CLI::App& app, ExportOptions& options);

/// Runs it; returns the exit code. Throws (store::DatabaseError, std::runtime_error;
/// store::OutputExistsError before the trace is read) with a user-facing message on a bad
/// trace or an output file that exists or cannot be written.
[[nodiscard]] int run_export(const ExportOptions& options);

}  // namespace gpuscope::cli
