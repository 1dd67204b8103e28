// Thin RAII wrapper over the SQLite C API (statically linked libsqlite3).
// Errors throw gpuscope::store::DatabaseError with SQLite's message and the SQL.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace gpuscope::store {

class DatabaseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The trace file itself is damaged (SQLite reports SQLITE_CORRUPT or SQLITE_NOTADB on a file
/// that starts as a SQLite database): the message names the file, the damage, the likely
/// cause and what to do, never the SQL statement. Other reports may still run on the
/// tables that are intact.
class TraceDamagedError : public DatabaseError {
 public:
  using DatabaseError::DatabaseError;
};

/// "PATH: the trace is corrupt or truncated (SQLite: WHAT); was it copied while being
/// written? ..." — the one wording of TraceDamagedError.
[[nodiscard]] std::string trace_damaged_message(const std::string& path, const std::string& sqlite_message);

class Statement;

/// One connection; use it from one thread at a time (it is opened without
/// SQLite's internal locking).
class Database {
 public:
  enum class Mode { kReadOnly, kReadWriteCreate };
  /// Opens `path`. kReadOnly fails if the file is missing or not a database.
  Database(const std::string& path, Mode mode);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  Database(Database&& other) noexcept;

  /// Runs one or more statements with no results.
  void exec(std::string_view sql);
  [[nodiscard]] Statement prepare(std::string_view sql);
  /// Runs a query returning one integer (first column of first row); nullopt if no row or NULL.
  [[nodiscard]] std::optional<std::int64_t> query_int(std::string_view sql);
  [[nodiscard]] std::optional<std::string> query_text(std::string_view sql);
  [[nodiscard]] bool has_table(std::string_view name);
  [[nodiscard]] const std::string& path() const { return m_path; }
  /// A number unique to this connection among those opened by this process (kept by a
  /// move): lets caches tell connections apart (analyze/common/analysis_cache.hpp).
  [[nodiscard]] std::uint64_t serial() const { return m_serial; }
  /// Rows this connection has inserted, updated or deleted since it opened
  /// (sqlite3_total_changes64; temp tables included).
  [[nodiscard]] std::int64_t total_changes() const;
  /// Rowid of the last row this connection inserted (sqlite3_last_insert_rowid).
  [[nodiscard]] std::int64_t last_insert_rowid() const;

  /// Makes `source`'s main database readable from this connection as schema `schema`
  /// (`SELECT ... FROM schema.table`), until `DETACH DATABASE schema`.
  /// - A file database (path() neither empty nor ":memory:") is attached by its path:
  ///   nothing is copied, and what is read is what is committed in the file.
  /// - An in-memory database (tests) cannot be attached by name, so `schema` becomes a
  ///   fresh in-memory database holding a complete copy of it, made with SQLite's online
  ///   backup API (sqlite3_backup_init/step/finish); later changes to `source` are not seen.
  /// `source` is only read. Throws DatabaseError with SQLite's message if the attach
  /// or the copy fails (a file that is not a database, `schema` already in use).
  void attach(Database& source, std::string_view schema);

 private:
  sqlite3* m_db = nullptr;
  std::string m_path;
  std::uint64_t m_serial = 0;
};

/// A prepared statement. bind() indexes start at 1 (SQLite's); column() at 0.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept;

  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind_null(int index);
  /// Binds `bytes` as a BLOB (copied; need not be text).
  Statement& bind_blob(int index, std::string_view bytes);
  /// Advances; true while a row is available.
  bool step();
  /// Resets for re-use with new bindings (clears the old ones to NULL).
  void reset();
  /// Resets for re-use keeping the bindings: for bulk inserts that re-bind
  /// every parameter anyway (cheaper than reset()).
  void rewind();

  [[nodiscard]] int column_count() const;
  [[nodiscard]] bool is_null(int col) const;
  [[nodiscard]] std::int64_t column_int(int col) const;
  [[nodiscard]] double column_double(int col) const;
  [[nodiscard]] std::string column_text(int col) const;
  [[nodiscard]] std::string column_name(int col) const;
  /// SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL.
  [[nodiscard]] int column_type(int col) const;

 private:
  sqlite3* m_db = nullptr;
  sqlite3_stmt* m_stmt = nullptr;
  std::string m_sql;
};

}  // namespace gpuscope::store
