#include "store/schema.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "store/database.hpp"

namespace gpuscope::store {
namespace {

const std::string kDocPath = std::string(GPUSCOPE_SOURCE_DIR) + "/docs/trace-schema.md";

TEST(Schema, CreatesInAnEmptyDatabase) {
  Database db(":memory:", Database::Mode::kReadWriteCreate);
  db.exec(create_schema_sql());
  for (const TableDef& t : tables()) EXPECT_TRUE(db.has_table(t.name)) << t.name;
  for (const ViewDef& v : views()) {
    EXPECT_TRUE(db.has_table(v.name)) << v.name;
    EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM " + std::string(v.name)), 0);
  }
  EXPECT_EQ(create_schema_sql(), create_tables_sql() + create_indexes_sql());
}

TEST(Schema, EveryColumnDocumented) {
  for (const TableDef& t : tables()) {
    EXPECT_FALSE(t.doc.empty()) << t.name;
    for (const ColumnDef& c : t.columns) EXPECT_FALSE(c.doc.empty()) << t.name << "." << c.name;
  }
}

TEST(Schema, MarkdownHasCrashSection) {
  const std::string md = schema_markdown();
  EXPECT_NE(md.find("## What a crash loses"), std::string::npos);
  EXPECT_NE(md.find("ended_cleanly = 0"), std::string::npos);
  EXPECT_NE(md.find("truncated_log"), std::string::npos);
}

// docs/trace-schema.md is generated from schema.cpp. To regenerate after a
// schema change: GPUSCOPE_REWRITE_EXPECTED=1 test_store --gtest_filter='Schema.*' (the
// switch of every expected-file test; GPUSCOPE_UPDATE_SCHEMA_DOC=1 works too), or
// `gpuscope schema > docs/trace-schema.md`.
TEST(Schema, DocsMatchDefinitions) {
  const std::string md = schema_markdown();
  const auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v == '1';
  };
  if (set("GPUSCOPE_REWRITE_EXPECTED") || set("GPUSCOPE_UPDATE_SCHEMA_DOC")) {
    std::ofstream(kDocPath, std::ios::binary) << md;
  }
  std::ifstream in(kDocPath, std::ios::binary);
  ASSERT_TRUE(in) << kDocPath << " is missing; regenerate it with GPUSCOPE_REWRITE_EXPECTED=1";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string file = ss.str();
  if (file == md) return;
  // Show the first differing line rather than two whole documents.
  std::istringstream a(file), b(md);
  std::string la, lb;
  int line = 1;
  while (true) {
    const bool ga = static_cast<bool>(std::getline(a, la));
    const bool gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb) break;
    if (!ga || !gb || la != lb) break;
    ++line;
  }
  FAIL() << kDocPath << " differs from schema_markdown() at line " << line << ":\n  file:      " << (a ? la : "<end>")
         << "\n  generated: " << (b ? lb : "<end>")
         << "\nRegenerate: GPUSCOPE_REWRITE_EXPECTED=1 test_store --gtest_filter=Schema.*";
}

}  // namespace
}  // namespace gpuscope::store
