// Every report of `gpuscope stats` on the committed real trace (tests/data/cnn.sqlite),
// rendered as csv and as json and parsed back, gives the same numbers and text: the
// machine-readable formats lose nothing (render/report_render.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "analyze/nsys/nsys_reports.hpp"
#include "analyze/report_registry.hpp"
#include "core/report_transform.hpp"
#include "render/report_render.hpp"
#include "store/trace.hpp"
#include "../committed_traces.hpp"

namespace gpuscope {
namespace {

// RFC 4180: fields separated by ',', records by '\n', a quoted field may hold ',',
// '"' (doubled) and newlines.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      record.push_back(std::move(field));
      field.clear();
      records.push_back(std::move(record));
      record.clear();
    } else {
      field += c;
    }
  }
  EXPECT_FALSE(quoted) << "unterminated quote";
  EXPECT_TRUE(field.empty() && record.empty()) << "last line lacks its newline";
  return records;
}

std::string header(const Column& c) { return c.unit.empty() ? c.name : c.name + " (" + c.unit + ")"; }

bool missing(const Cell& c) {
  return std::holds_alternative<std::monostate>(c) ||
         (std::holds_alternative<double>(c) && std::isnan(std::get<double>(c)));
}

void expect_csv_round_trip(const Report& r) {
  std::ostringstream out;
  render::render(r, render::Format::kCsv, out);
  const auto records = parse_csv(out.str());
  ASSERT_EQ(records.size(), r.rows.size() + 1) << r.name;
  ASSERT_EQ(records[0].size(), r.columns.size()) << r.name;
  for (std::size_t c = 0; c < r.columns.size(); ++c) EXPECT_EQ(records[0][c], header(r.columns[c])) << r.name;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    ASSERT_EQ(records[i + 1].size(), r.columns.size()) << r.name << " row " << i;
    for (std::size_t c = 0; c < r.columns.size(); ++c) {
      const Cell& cell = r.rows[i][c];
      const std::string& text = records[i + 1][c];
      const std::string where = r.name + " row " + std::to_string(i) + " " + r.columns[c].name;
      if (missing(cell)) {
        EXPECT_EQ(text, "") << where;
      } else if (const auto* v = std::get_if<std::int64_t>(&cell)) {
        EXPECT_EQ(std::stoll(text), *v) << where;
      } else if (const auto* d = std::get_if<double>(&cell)) {
        EXPECT_EQ(std::stod(text), *d) << where;  // shortest round-trip form: exact
      } else {
        EXPECT_EQ(text, std::get<std::string>(cell)) << where;
      }
    }
  }
}

void expect_json_round_trip(const Report& r, const nlohmann::json& j) {
  EXPECT_EQ(j.at("name"), r.name);
  ASSERT_EQ(j.at("columns").size(), r.columns.size()) << r.name;
  for (std::size_t c = 0; c < r.columns.size(); ++c) {
    const auto& jc = j["columns"][c];
    EXPECT_EQ(jc.at("name"), r.columns[c].name);
    EXPECT_EQ(jc.at("unit"), r.columns[c].unit);
    EXPECT_EQ(jc.value("identifier", false), r.columns[c].kind == ColumnKind::kIdentifier) << r.columns[c].name;
  }
  ASSERT_EQ(j.at("rows").size(), r.rows.size()) << r.name;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    for (std::size_t c = 0; c < r.columns.size(); ++c) {
      const Cell& cell = r.rows[i][c];
      const auto& v = j["rows"][i][c];
      const std::string where = r.name + " row " + std::to_string(i) + " " + r.columns[c].name;
      if (missing(cell) || (std::holds_alternative<double>(cell) && !std::isfinite(std::get<double>(cell)))) {
        EXPECT_TRUE(v.is_null()) << where;
      } else if (const auto* n = std::get_if<std::int64_t>(&cell)) {
        ASSERT_TRUE(v.is_number_integer()) << where;
        EXPECT_EQ(v.get<std::int64_t>(), *n) << where;
      } else if (const auto* d = std::get_if<double>(&cell)) {
        ASSERT_TRUE(v.is_number()) << where;
        EXPECT_EQ(v.get<double>(), *d) << where;
      } else {
        EXPECT_EQ(v.get<std::string>(), std::get<std::string>(cell)) << where;
      }
    }
  }
  ASSERT_EQ(j.at("notes").size(), r.notes.size());
}

std::vector<Report> all_reports(bool transformed) {
  store::Database db = store::open_trace(gpuscope::test::committed_trace("cnn"));
  std::vector<Report> out;
  for (std::string_view n : analyze::all_report_names()) {
    for (Report& r : analyze::run_report(db, n)) {
      if (transformed) convert_time_unit(r, TimeUnit::kUs);  // ns integers become us reals
      out.push_back(std::move(r));
    }
  }
  return out;
}

TEST(StatsRoundTrip, CsvParsesBackToTheSameCells) {
  for (bool transformed : {false, true}) {
    for (const Report& r : all_reports(transformed)) expect_csv_round_trip(r);
  }
}

TEST(StatsRoundTrip, JsonParsesBackToTheSameCells) {
  for (bool transformed : {false, true}) {
    const std::vector<Report> reports = all_reports(transformed);
    std::ostringstream out;
    render::render(reports, render::Format::kJson, out);
    // One document: {"schema_version", "command", "reports": {name: report}}, reports in order.
    const auto doc = nlohmann::ordered_json::parse(out.str());
    EXPECT_EQ(doc.at("schema_version"), render::kDocumentSchemaVersion);
    ASSERT_EQ(doc.at("reports").size(), reports.size());
    std::size_t i = 0;
    for (const auto& item : doc.at("reports").items())
      expect_json_round_trip(reports[i++], nlohmann::json::parse(item.value().dump()));
  }
}

TEST(StatsRoundTrip, TimeSharesParsedFromCsvSumTo100) {
  store::Database db = store::open_trace(gpuscope::test::committed_trace("cnn"));
  for (const char* name : {"cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "nvtx_sum", "cuda_gpu_sum"}) {
    const Report r = analyze::run_report(db, name).at(0);
    const auto time = find_column(r, "Time (%)");
    ASSERT_TRUE(time) << name;
    ASSERT_FALSE(r.rows.empty()) << name;
    std::ostringstream out;
    render::render(r, render::Format::kCsv, out);
    const auto records = parse_csv(out.str());
    double sum = 0.0;
    for (std::size_t i = 1; i < records.size(); ++i) sum += std::stod(records[i][*time]);
    EXPECT_NEAR(sum, 100.0, 0.01) << r.name;
  }
}

}  // namespace
}  // namespace gpuscope
