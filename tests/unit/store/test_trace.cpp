#include "store/trace.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "log_builder.hpp"
#include "store/importer.hpp"
#include "store/schema.hpp"

namespace gpuscope::store {
namespace {

using test::TempDir;

std::string message_of(const std::string& path) {
  try {
    (void)open_trace(path);
  } catch (const DatabaseError& e) {
    return e.what();
  }
  return "<no error>";
}

std::string make_trace(const TempDir& dir) {
  const std::string log = dir.file("a.gslog");
  {
    test::LogBuilder b(log, 100);
    b.end(1000);
    b.close();
  }
  const std::string path = dir.file("t.sqlite");
  (void)import_logs({log}, path, {});
  return path;
}

TEST(OpenTrace, OpensAnImportedTrace) {
  TempDir dir;
  Database db = open_trace(make_trace(dir));
  EXPECT_EQ(db.query_text("SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(kSchemaVersion));
  // Read-only.
  EXPECT_THROW(db.exec("DELETE FROM meta"), DatabaseError);
}

TEST(OpenTrace, MissingFile) {
  TempDir dir;
  const std::string msg = message_of(dir.file("nope.sqlite"));
  EXPECT_NE(msg.find("nope.sqlite does not exist"), std::string::npos) << msg;
}

TEST(OpenTrace, NotSqlite) {
  TempDir dir;
  const std::string path = dir.file("text.sqlite");
  std::ofstream(path) << "definitely not a database, but long enough to look like a header........"
                         "..........................................................................";
  const std::string msg = message_of(path);
  EXPECT_NE(msg.find("is not a SQLite database"), std::string::npos) << msg;
}

TEST(OpenTrace, SqliteButNotATrace) {
  TempDir dir;
  const std::string path = dir.file("other.sqlite");
  {
    Database db(path, Database::Mode::kReadWriteCreate);
    db.exec("CREATE TABLE meta (name TEXT, v TEXT)");
  }
  const std::string msg = message_of(path);
  EXPECT_NE(msg.find("not a gpuscope trace (no meta.schema_version)"), std::string::npos) << msg;
}

TEST(OpenTrace, OtherSchemaVersionNamesBothVersions) {
  TempDir dir;
  const std::string path = make_trace(dir);
  {
    Database db(path, Database::Mode::kReadWriteCreate);
    db.exec("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
    db.exec("UPDATE meta SET value = '7.0.0' WHERE key = 'gpuscope_version'");
  }
  try {
    (void)open_trace(path);
    FAIL() << "no error";
  } catch (const SchemaVersionError& e) {
    EXPECT_EQ(e.found(), 99);
    EXPECT_EQ(e.expected(), kSchemaVersion);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("schema version 99, this gpuscope reads version " +
                       std::to_string(kSchemaVersion) + ": open it with a newer gpuscope"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("7.0.0"), std::string::npos) << msg;
  }
  {
    Database db(path, Database::Mode::kReadWriteCreate);
    db.exec("UPDATE meta SET value = '0' WHERE key = 'schema_version'");
  }
  const std::string msg = message_of(path);
  EXPECT_NE(msg.find("schema version 0, this gpuscope reads version"), std::string::npos) << msg;
  EXPECT_NE(msg.find("re-import"), std::string::npos) << msg;
}

}  // namespace
}  // namespace gpuscope::store
