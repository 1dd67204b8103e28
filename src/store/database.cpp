#include "store/database.hpp"

#include <sqlite3.h>

#include <atomic>
#include <string>
#include <utility>

namespace gpuscope::store {

namespace {

// Before SQLite's first use: no global memory statistics (a mutex taken on every
// allocation; nothing in gpuscope reads them). Fails harmlessly if SQLite was
// already initialized by someone else.
void configure_sqlite_once() {
  static const bool done = [] {
    (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    return true;
  }();
  (void)done;
}

}  // namespace

std::string trace_damaged_message(const std::string& path, const std::string& sqlite_message) {
  return path + ": the trace is corrupt or truncated (SQLite: " + sqlite_message +
         "); was it copied while being written, or its disk filled? If its event logs were kept "
         "(NAME.logs/), rebuild it with `gpuscope import NAME.logs -o NAME`; otherwise record it again";
}

namespace {

// The one place a failed SQLite call becomes an exception: damage to the file gets its own
// type and wording (TraceDamagedError); anything else names the statement.
[[noreturn]] void throw_sql_error(sqlite3* db, int rc, const std::string& sql) {
  const int primary = rc & 0xff;
  const char* file = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
  const std::string msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB)
    throw TraceDamagedError(trace_damaged_message(file != nullptr && *file ? file : "the trace", msg));
  throw DatabaseError(std::string("SQL error: ") + msg + " (in: " + sql.substr(0, 200) + ")");
}

}  // namespace

Database::Database(const std::string& path, Mode mode) : m_path(path) {
  static std::atomic<std::uint64_t> s_next_serial{1};
  m_serial = s_next_serial.fetch_add(1);
  configure_sqlite_once();
  // NOMUTEX: a connection is used by one thread at a time, so skip SQLite's
  // per-call locking (measurable on bulk inserts).
  const int flags = SQLITE_OPEN_NOMUTEX |
                    (mode == Mode::kReadOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
  if (sqlite3_open_v2(path.c_str(), &m_db, flags, nullptr) != SQLITE_OK) {
    std::string msg = m_db ? sqlite3_errmsg(m_db) : "out of memory";
    sqlite3_close(m_db);
    m_db = nullptr;
    throw DatabaseError("cannot open trace database " + path + ": " + msg);
  }
  sqlite3_busy_timeout(m_db, 5000);
}

Database::~Database() {
  if (m_db) sqlite3_close(m_db);
}

Database::Database(Database&& other) noexcept
    : m_db(std::exchange(other.m_db, nullptr)), m_path(std::move(other.m_path)), m_serial(other.m_serial) {}

std::int64_t Database::total_changes() const { return sqlite3_total_changes64(m_db); }
std::int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(m_db); }

void Database::exec(std::string_view sql) {
  char* err = nullptr;
  const std::string s(sql);
  if (const int rc = sqlite3_exec(m_db, s.c_str(), nullptr, nullptr, &err); rc != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    const int primary = rc & 0xff;
    if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB)
      throw TraceDamagedError(trace_damaged_message(m_path, msg));
    throw DatabaseError(m_path + ": " + msg + " (in: " + s.substr(0, 200) + ")");
  }
}

void Database::attach(Database& source, std::string_view schema) {
  const std::string& path = source.path();
  if (!path.empty() && path != ":memory:") {
    prepare("ATTACH DATABASE ? AS \"" + std::string(schema) + "\"").bind(1, std::string_view(path)).step();
    return;
  }
  exec("ATTACH DATABASE ':memory:' AS \"" + std::string(schema) + "\"");
  const std::string name(schema);
  sqlite3_backup* backup = sqlite3_backup_init(m_db, name.c_str(), source.m_db, "main");
  if (!backup) throw DatabaseError("copying an in-memory database into schema " + name + ": " + sqlite3_errmsg(m_db));
  const int rc = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE)
    throw DatabaseError("copying an in-memory database into schema " + name + ": " + sqlite3_errstr(rc));
}

Statement Database::prepare(std::string_view sql) { return Statement(m_db, sql); }

std::optional<std::int64_t> Database::query_int(std::string_view sql) {
  Statement st(m_db, sql);
  if (!st.step() || st.is_null(0)) return std::nullopt;
  return st.column_int(0);
}

std::optional<std::string> Database::query_text(std::string_view sql) {
  Statement st(m_db, sql);
  if (!st.step() || st.is_null(0)) return std::nullopt;
  return st.column_text(0);
}

bool Database::has_table(std::string_view name) {
  Statement st(m_db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?");
  st.bind(1, name);
  return st.step();
}

Statement::Statement(sqlite3* db, std::string_view sql) : m_db(db), m_sql(sql) {
  if (const int rc = sqlite3_prepare_v2(db, m_sql.c_str(), static_cast<int>(m_sql.size()), &m_stmt, nullptr);
      rc != SQLITE_OK) {
    throw_sql_error(db, rc, m_sql);
  }
}

Statement::~Statement() {
  if (m_stmt) sqlite3_finalize(m_stmt);
}

Statement::Statement(Statement&& other) noexcept
    : m_db(other.m_db), m_stmt(std::exchange(other.m_stmt, nullptr)), m_sql(std::move(other.m_sql)) {}

Statement& Statement::bind(int index, std::int64_t value) {
  sqlite3_bind_int64(m_stmt, index, value);
  return *this;
}
Statement& Statement::bind(int index, double value) {
  sqlite3_bind_double(m_stmt, index, value);
  return *this;
}
Statement& Statement::bind(int index, std::string_view value) {
  sqlite3_bind_text(m_stmt, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::bind_blob(int index, std::string_view bytes) {
  sqlite3_bind_blob64(m_stmt, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind_null(int index) {
  sqlite3_bind_null(m_stmt, index);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw_sql_error(m_db, rc, m_sql);
}

void Statement::reset() {
  sqlite3_reset(m_stmt);
  sqlite3_clear_bindings(m_stmt);
}

void Statement::rewind() { sqlite3_reset(m_stmt); }

int Statement::column_count() const { return sqlite3_column_count(m_stmt); }
bool Statement::is_null(int col) const { return sqlite3_column_type(m_stmt, col) == SQLITE_NULL; }
std::int64_t Statement::column_int(int col) const { return sqlite3_column_int64(m_stmt, col); }
double Statement::column_double(int col) const { return sqlite3_column_double(m_stmt, col); }
std::string Statement::column_text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, col));
  return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, col))) : std::string();
}
std::string Statement::column_name(int col) const { return sqlite3_column_name(m_stmt, col); }
int Statement::column_type(int col) const { return sqlite3_column_type(m_stmt, col); }

}  // namespace gpuscope::store
