#include "store/trace.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

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

// A trace with many rows, so that damage can land in table pages after the schema's.
std::string make_big_trace(const TempDir& dir) {
  const std::string log = dir.file("big.gslog");
  {
    test::LogBuilder b(log, 100);
    b.process(1000);
    b.device(0, "GPU");
    for (std::uint32_t i = 1; i <= 3000; ++i) {
      b.api(1000 + 100 * i, 1050 + 100 * i, 100, i, "cudaLaunchKernel");
      b.kernel(1060 + 100 * i, 1090 + 100 * i, i, "kernel_with_a_rather_long_name_" + std::to_string(i % 7));
    }
    b.end(400'000);
    b.close();
  }
  const std::string path = dir.file("big.sqlite");
  (void)import_logs({log}, path, {});
  return path;
}

// What a user sees on a damaged trace: its name, the damage, a cause and what to do —
// never the SQL statement. Truncation (a copy cut short) and overwritten pages both.
TEST(OpenTrace, DamagedTraceNamesTheDamageNotTheSql) {
  TempDir dir;
  const std::string path = make_big_trace(dir);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(bytes.size(), 64'000u);
  const auto expect_damage_named = [&](const std::string& damaged, const char* what) {
    const std::string p = dir.file(std::string(what) + ".sqlite");
    std::ofstream(p, std::ios::binary) << damaged;
    std::string message = "<no error>";
    try {
      Database db = open_trace(p);
      (void)db.query_int("SELECT SUM(end_ns - start_ns) FROM kernels");
      (void)db.query_int("SELECT SUM(end_ns - start_ns) FROM api_calls");
    } catch (const TraceDamagedError& e) {
      message = e.what();
    }
    EXPECT_NE(message.find("the trace is corrupt or truncated (SQLite: "), std::string::npos)
        << what << ": " << message;
    EXPECT_NE(message.find(p), std::string::npos) << message;
    EXPECT_NE(message.find("gpuscope import"), std::string::npos) << message;
    EXPECT_EQ(message.find("(in: "), std::string::npos) << message;
  };
  expect_damage_named(bytes.substr(0, bytes.size() / 2), "truncated");
  std::string scribbled = bytes;
  for (std::size_t i = 8192; i < bytes.size(); i += 4096) scribbled.replace(i, 64, 64, '\xA5');
  expect_damage_named(scribbled, "scribbled");
}

TEST(OpenTrace, OpensAnImportedTrace) {
  TempDir dir;
  Database db = open_trace(make_trace(dir));
  EXPECT_EQ(db.query_text("SELECT value FROM meta WHERE key = 'schema_version'"), std::to_string(kSchemaVersion));
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
    EXPECT_NE(msg.find("schema version 99, this gpuscope reads version " + std::to_string(kSchemaVersion) +
                       ": open it with a newer gpuscope"),
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
