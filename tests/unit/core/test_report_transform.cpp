// --timeunit, --sort and --top as Report transforms (core/report_transform.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/report_transform.hpp"

namespace gpuscope {
namespace {

// A kernel-summary-like report: Total Time (ns, integer), Avg (ns, real), CorrId
// (identifier), Wall (ms, real), Share (%), Name.
Report sample() {
  Report r;
  r.name = "sample";
  r.add_column("Total Time", "ns", ColumnType::kInteger)
      .add_column("Avg", "ns", ColumnType::kReal)
      .add_column("CorrId", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Wall", "ms", ColumnType::kReal)
      .add_column("Share", "%", ColumnType::kReal)
      .add_column("Name", "", ColumnType::kText);
  r.rows.push_back(Row{std::int64_t{1500}, 750.0, std::int64_t{30}, 2.0, 10.0, std::string("b")});
  r.rows.push_back(Row{std::int64_t{250000}, std::numeric_limits<double>::quiet_NaN(), std::int64_t{10}, 0.5, 60.0,
                       std::string("a")});
  r.rows.push_back(Row{std::monostate{}, 1.0, std::int64_t{20}, 1.0, 30.0, std::string("c")});
  return r;
}

std::vector<std::string> names(const Report& r) {
  std::vector<std::string> out;
  for (const Row& row : r.rows) out.push_back(std::get<std::string>(row.back()));
  return out;
}

TEST(ParseTimeUnit, AcceptsNsysSpellings) {
  EXPECT_EQ(parse_time_unit("ns"), TimeUnit::kNs);
  EXPECT_EQ(parse_time_unit("usec"), TimeUnit::kUs);
  EXPECT_EQ(parse_time_unit("\xC2\xB5s"), TimeUnit::kUs);
  EXPECT_EQ(parse_time_unit("ms"), TimeUnit::kMs);
  EXPECT_EQ(parse_time_unit("sec"), TimeUnit::kS);
  try {
    (void)parse_time_unit("min");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("valid: ns, us, ms, s"), std::string::npos) << e.what();
  }
}

TEST(ConvertTimeUnit, NsToUsMakesIntegerColumnsReal) {
  Report r = sample();
  convert_time_unit(r, TimeUnit::kUs);
  EXPECT_EQ(r.columns[0].unit, "us");
  EXPECT_EQ(r.columns[0].type, ColumnType::kReal);
  EXPECT_DOUBLE_EQ(std::get<double>(r.rows[0][0]), 1.5);
  EXPECT_DOUBLE_EQ(std::get<double>(r.rows[1][0]), 250.0);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[2][0]));  // NULL stays NULL
  EXPECT_EQ(r.columns[1].unit, "us");
  EXPECT_DOUBLE_EQ(std::get<double>(r.rows[0][1]), 0.75);
  EXPECT_TRUE(std::isnan(std::get<double>(r.rows[1][1])));
  // ms column converted too; identifier, % and text untouched.
  EXPECT_EQ(r.columns[3].unit, "us");
  EXPECT_DOUBLE_EQ(std::get<double>(r.rows[0][3]), 2000.0);
  EXPECT_EQ(r.columns[2].unit, "");
  EXPECT_EQ(std::get<std::int64_t>(r.rows[0][2]), 30);
  EXPECT_EQ(r.columns[4].unit, "%");
  EXPECT_DOUBLE_EQ(std::get<double>(r.rows[0][4]), 10.0);
}

TEST(ConvertTimeUnit, ToFinerUnitKeepsIntegersExact) {
  Report r;
  r.add_column("Wall", "ms", ColumnType::kInteger);
  r.rows.push_back(Row{std::int64_t{3}});
  convert_time_unit(r, TimeUnit::kNs);
  EXPECT_EQ(r.columns[0].type, ColumnType::kInteger);
  EXPECT_EQ(r.columns[0].unit, "ns");
  EXPECT_EQ(std::get<std::int64_t>(r.rows[0][0]), 3'000'000);
}

TEST(ConvertTimeUnit, SameUnitChangesNothing) {
  Report r = sample();
  convert_time_unit(r, TimeUnit::kNs);
  EXPECT_EQ(r.columns[0].type, ColumnType::kInteger);
  EXPECT_EQ(std::get<std::int64_t>(r.rows[0][0]), 1500);
  EXPECT_EQ(r.columns[3].unit, "ns");  // the ms column still converts
  EXPECT_DOUBLE_EQ(std::get<double>(r.rows[0][3]), 2e6);
}

TEST(SortRows, QuantitiesDescendingMissingLast) {
  Report r = sample();
  sort_rows(r, "Total Time");
  EXPECT_EQ(names(r), (std::vector<std::string>{"a", "b", "c"}));
  sort_rows(r, "avg");  // case-insensitive; NaN sorts with NULL, last
  EXPECT_EQ(names(r), (std::vector<std::string>{"b", "c", "a"}));
  sort_rows(r, "Share (%)");  // the header form
  EXPECT_EQ(names(r), (std::vector<std::string>{"a", "c", "b"}));
}

TEST(SortRows, IdentifiersAndTextAscending) {
  Report r = sample();
  sort_rows(r, "CorrId");
  EXPECT_EQ(names(r), (std::vector<std::string>{"a", "c", "b"}));
  sort_rows(r, "Name");
  EXPECT_EQ(names(r), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(SortRows, StableForTies) {
  Report r;
  r.add_column("N", "", ColumnType::kInteger).add_column("Name", "", ColumnType::kText);
  for (const char* n : {"x", "y", "z"}) r.rows.push_back(Row{std::int64_t{1}, std::string(n)});
  r.rows.push_back(Row{std::int64_t{2}, std::string("w")});
  sort_rows(r, "N");
  EXPECT_EQ(names(r), (std::vector<std::string>{"w", "x", "y", "z"}));
}

TEST(SortRows, UnknownColumnListsTheValidOnes) {
  Report r = sample();
  try {
    sort_rows(r, "Calls");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'Calls'"), std::string::npos) << m;
    EXPECT_NE(m.find("'Total Time', 'Avg', 'CorrId', 'Wall', 'Share', 'Name'"), std::string::npos) << m;
  }
}

TEST(SortRows, AfterTimeUnitTheNewHeaderMatches) {
  Report r = sample();
  convert_time_unit(r, TimeUnit::kMs);
  EXPECT_TRUE(find_column(r, "Total Time (ms)").has_value());
  EXPECT_FALSE(find_column(r, "Total Time (ns)").has_value());
}

TEST(KeepTopRows, KeepsTheFirstN) {
  Report r = sample();
  keep_top_rows(r, 2);
  EXPECT_EQ(names(r), (std::vector<std::string>{"b", "a"}));
  keep_top_rows(r, 10);
  EXPECT_EQ(r.rows.size(), 2u);
  keep_top_rows(r, 0);
  EXPECT_TRUE(r.rows.empty());
  EXPECT_EQ(r.columns.size(), 6u);  // the columns stay
  EXPECT_THROW(keep_top_rows(r, -1), std::invalid_argument);
}

}  // namespace
}  // namespace gpuscope
