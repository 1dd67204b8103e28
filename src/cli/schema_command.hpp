// `gpuscope schema [--sql]`: prints the trace database schema — the documentation
// (markdown, the text of docs/trace-schema.md) or, with --sql, the CREATE statements.
// Both come from the one declaration of the tables (store/schema.hpp).
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscope::cli {

struct SchemaOptions {
  bool sql = false;  // CREATE statements instead of the documentation
};

/// Declares the subcommand and its options (one place: also the --help text).
CLI::App* add_schema_command(CLI::App& app, SchemaOptions& options);

/// Prints it to stdout; returns the exit code (0).
[[nodiscard]] int run_schema(const SchemaOptions& options);

}  // namespace gpuscope::cli
