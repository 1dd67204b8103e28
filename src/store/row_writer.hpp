// Typed inserts into the trace tables: RowWriter<rows::Kernel> prepares
// "INSERT INTO kernels(id, pid, ...) VALUES (?1, ?2, ...)" once, from the column list
// declared in store/schema_columns.hpp, and binds every column of each row by member
// (nullopt → NULL). No INSERT SQL is written by hand anywhere else in the importer.
//
// Use it from the importer, from tests that build a trace directly, or from any code
// that writes trace rows (the schema must exist: create_tables_sql()):
//
//   Database db(":memory:", Database::Mode::kReadWriteCreate);
//   db.exec(create_tables_sql());
//   RowWriter<rows::Kernel> kernels(db);          // prepared once
//   kernels.insert({.pid = 42, .device_id = 0, .correlation_id = 7,
//                   .start_ns = 1000, .end_ns = 2000,
//                   .name_id = rows::id_or_null(name_id)});  // unset members: 0, "" or NULL
//   insert(db, rows::Thread{.pid = 42, .tid = 43});   // one-off: prepares, binds, steps
//
// Errors: DatabaseError (from Statement) when SQLite refuses the statement or the row,
// e.g. a duplicate primary key with Conflict::kAbort. Rows are bound and stepped at once;
// nothing of the row is kept after insert() returns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/database.hpp"
#include "store/rows.hpp"

namespace gpuscope::store {

/// What INSERT does with a row whose primary key exists: fail (SQLite's default) or keep
/// the existing row ("INSERT OR IGNORE", meta's first value wins).
enum class Conflict { kAbort, kIgnore };

namespace detail {

inline void bind_column(Statement& st, int i, std::int64_t v) { st.bind(i, v); }
inline void bind_column(Statement& st, int i, double v) { st.bind(i, v); }
inline void bind_column(Statement& st, int i, std::string_view v) { st.bind(i, v); }
inline void bind_column(Statement& st, int i, const std::optional<std::int64_t>& v) {
  if (v) {
    st.bind(i, *v);
  } else {
    st.bind_null(i);
  }
}
inline void bind_column(Statement& st, int i, const std::optional<double>& v) {
  if (v) {
    st.bind(i, *v);
  } else {
    st.bind_null(i);
  }
}
inline void bind_column(Statement& st, int i, const std::optional<rows::Blob>& v) {
  if (v) {
    st.bind_blob(i, v->bytes);
  } else {
    st.bind_null(i);
  }
}
inline void bind_column(Statement& st, int i, const std::optional<std::string_view>& v) {
  if (v) {
    st.bind(i, *v);
  } else {
    st.bind_null(i);
  }
}

/// "INSERT [OR IGNORE] INTO table(c1, c2, ...) VALUES (?1, ?2, ...)".
template <class Row>
[[nodiscard]] std::string insert_sql(Conflict conflict) {
  std::string sql = conflict == Conflict::kIgnore ? "INSERT OR IGNORE INTO " : "INSERT INTO ";
  sql += Row::kTable;
  sql += '(';
  std::string values;
  int i = 0;
  for (std::string_view c : Row::kColumns) {
    if (i > 0) {
      sql += ", ";
      values += ", ";
    }
    sql += c;
    values += "?" + std::to_string(++i);
  }
  sql += ") VALUES (" + values + ')';
  return sql;
}

}  // namespace detail

/// Inserts rows of one table through one prepared statement. Use one writer per table per
/// connection, from one thread; it must not outlive the Database.
template <class Row>
class RowWriter {
 public:
  explicit RowWriter(Database& db, Conflict conflict = Conflict::kAbort)
      : m_st(db.prepare(detail::insert_sql<Row>(conflict))) {}

  /// Binds every column of `row` (nullopt → NULL) and runs the insert.
  void insert(const Row& row) {
    int i = 0;
    Row::visit(row, [&](const auto& value) { detail::bind_column(m_st, ++i, value); });
    (void)m_st.step();
    m_st.rewind();  // every parameter is re-bound on the next row
  }

 private:
  Statement m_st;
};

/// Inserts one row, preparing the statement for it alone: for tests and one-off rows.
template <class Row>
void insert(Database& db, const Row& row, Conflict conflict = Conflict::kAbort) {
  RowWriter<Row>(db, conflict).insert(row);
}

}  // namespace gpuscope::store
