// `gpuscope import LOGS -o NAME [-f]`: builds NAME.sqlite from the event logs (*.gslog)
// that an interrupted `gpuscope trace` left in NAME.logs/ (store/importer.hpp).
// NAME.sqlite is written atomically (store/importer.hpp): with --force-overwrite the old
// trace is replaced only once the import has succeeded. The import holds NAME.sqlite.lock
// (store/output_lock.hpp) against a `gpuscope trace` or import writing the same name.
// Exit codes: 0 written (import warnings on stderr); 1 NAME.sqlite exists without
// --force-overwrite, another gpuscope writes it, or LOGS holds no .gslog file (the
// message says which).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace gpuscope::cli {

struct ImportOptions {
  std::string logs;              // folder of .gslog files
  std::string output;            // NAME or NAME.sqlite
  bool force_overwrite = false;  // replace NAME.sqlite if it exists
};

/// Declares the subcommand and its options (one place: also the --help text).
CLI::App* add_import_command(CLI::App& app, ImportOptions& options);

/// Runs it; returns the exit code (see above). Prints to stderr. Throws
/// (store::DatabaseError, std::runtime_error) when a log cannot be read or imported.
[[nodiscard]] int run_import(const ImportOptions& options);

}  // namespace gpuscope::cli
