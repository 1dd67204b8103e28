#include "cli/schema_command.hpp"

#include <iostream>

#include "store/schema.hpp"

namespace gpuscope::cli {

CLI::App* add_schema_command(CLI::App& app, SchemaOptions& o) {
  CLI::App* sub = app.add_subcommand("schema", "Print the trace database schema (markdown; --sql for DDL).");
  sub->add_flag("--sql", o.sql, "Print CREATE statements instead of the documentation");
  return sub;
}

int run_schema(const SchemaOptions& o) {
  std::cout << (o.sql ? store::create_schema_sql() : store::schema_markdown());
  return 0;
}

}  // namespace gpuscope::cli
