// Opens an existing trace database for reading (analyze/, cli/).
//
// Errors (all derive from DatabaseError, with a message fit for the user):
//  - the file is missing, unreadable or not SQLite: DatabaseError;
//  - SQLite but not a gpuscope trace (no meta.schema_version): DatabaseError;
//  - a gpuscope trace of another schema version: SchemaVersionError, naming
//    both versions and what to do.
#pragma once

#include <string>

#include "store/database.hpp"

namespace gpuscope::store {

class SchemaVersionError : public DatabaseError {
 public:
  SchemaVersionError(const std::string& message, int found, int expected)
      : DatabaseError(message), m_found(found), m_expected(expected) {}
  [[nodiscard]] int found() const { return m_found; }
  [[nodiscard]] int expected() const { return m_expected; }

 private:
  int m_found;
  int m_expected;
};

/// Opens `path` read-only and checks meta.schema_version == kSchemaVersion. A FIFO, socket or
/// device is refused with DatabaseError without waiting on it (store/input_file.hpp).
[[nodiscard]] Database open_trace(const std::string& path);

}  // namespace gpuscope::store
