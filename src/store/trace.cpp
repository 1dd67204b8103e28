#include "store/trace.hpp"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <optional>

#include "store/input_file.hpp"
#include "store/schema.hpp"

namespace gpuscope::store {

Database open_trace(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw DatabaseError("trace " + path + " does not exist");
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw DatabaseError("trace " + path + " is a directory, not a trace database");
  }
  // Checked before SQLite opens it: SQLite would wait forever on a FIFO (store/input_file.hpp).
  InputFile file = InputFile::open(path, "trace");
  if (!file.ok()) throw DatabaseError(file.error());
  Database db(path, Database::Mode::kReadOnly);

  // SQLite opens any file lazily; the first read says whether it is a database.
  bool has_meta = false;
  try {
    has_meta = db.has_table("meta");
  } catch (const DatabaseError& e) {
    // A file that starts as a SQLite database but cannot be read is a damaged trace
    // (truncated by a copy, a full disk), not some other kind of file.
    char magic[16] = {};
    if (::pread(file.fd(), magic, sizeof magic, 0) != static_cast<ssize_t>(sizeof magic)) magic[0] = 0;
    if (std::memcmp(magic, "SQLite format 3", sizeof magic) == 0) {
      if (dynamic_cast<const TraceDamagedError*>(&e) != nullptr) throw;
      throw TraceDamagedError(trace_damaged_message(path, e.what()));
    }
    throw DatabaseError("trace " + path + " is not a SQLite database (not a gpuscope trace)");
  }
  std::optional<std::string> version;
  if (has_meta) {
    try {
      version = db.query_text("SELECT value FROM meta WHERE key = 'schema_version'");
    } catch (const TraceDamagedError&) {
      throw;
    } catch (const DatabaseError&) {
      version.reset();  // a 'meta' table of some other program
    }
  }
  if (!version) {
    throw DatabaseError("trace " + path + " is a SQLite database but not a gpuscope trace (no meta.schema_version)");
  }
  int found = -1;
  try {
    found = std::stoi(*version);
  } catch (const std::exception&) {
    throw DatabaseError("trace " + path + " has an invalid schema_version '" + *version + "'");
  }
  if (found != kSchemaVersion) {
    const auto writer = db.query_text("SELECT value FROM meta WHERE key = 'gpuscope_version'");
    std::string msg = "trace " + path + " has schema version " + std::to_string(found) +
                      ", this gpuscope reads version " + std::to_string(kSchemaVersion) + ": ";
    msg += found > kSchemaVersion ? "open it with a newer gpuscope"
                                  : "re-import its event logs or re-record it with this gpuscope, or open it with";
    if (found < kSchemaVersion) msg += writer ? " gpuscope " + *writer : " the gpuscope that wrote it";
    if (found > kSchemaVersion && writer) msg += " (it was written by gpuscope " + *writer + ")";
    throw SchemaVersionError(msg, found, kSchemaVersion);
  }
  return db;
}

}  // namespace gpuscope::store
