// The trace database schema, defined once: every table and column with its SQL
// type, unit and meaning (the columns are declared in store/schema_columns.hpp, which
// also gives the row structs of store/rows.hpp that store/row_writer.hpp inserts).
// The importer creates tables from it, docs/trace-schema.md is generated from it
// (`gpuscope schema`, checked by a unit test), and analyze/ queries the names defined here.
//
// Schema version: bump kSchemaVersion on any change that breaks readers; the
// database records it in meta('schema_version') and open_trace() refuses other
// versions with an error naming both.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace gpuscope::store {

inline constexpr int kSchemaVersion = 1;

struct ColumnDef {
  std::string_view name;
  std::string_view sql_type;  // "INTEGER", "TEXT", "REAL", "BLOB"
  std::string_view unit;      // "ns", "bytes", "" ...
  std::string_view doc;
};

struct TableDef {
  std::string_view name;
  std::string_view doc;
  std::string_view nsys_equivalent;  // the Nsight Systems export table it mirrors, or ""
  std::span<const ColumnDef> columns;
};

struct ViewDef {
  std::string_view name;
  std::string_view doc;
  std::string_view select_sql;  // the SELECT the view is defined by
};

/// All tables, in creation order.
[[nodiscard]] std::span<const TableDef> tables();
/// Convenience views that resolve string ids (for the sqlite3 shell).
[[nodiscard]] std::span<const ViewDef> views();
/// Index definitions ("CREATE INDEX ..." statements).
[[nodiscard]] std::span<const std::string_view> indexes();

/// CREATE TABLE/VIEW/INDEX statements for the whole schema, one string
/// (= create_tables_sql() + create_indexes_sql()).
[[nodiscard]] std::string create_schema_sql();
/// CREATE TABLE and CREATE VIEW statements only. The importer runs these first
/// and create_indexes_sql() after the bulk insert (faster than keeping indexes
/// up to date row by row).
[[nodiscard]] std::string create_tables_sql();
/// CREATE INDEX statements only.
[[nodiscard]] std::string create_indexes_sql();
/// docs/trace-schema.md, generated from the definitions above.
[[nodiscard]] std::string schema_markdown();

}  // namespace gpuscope::store
