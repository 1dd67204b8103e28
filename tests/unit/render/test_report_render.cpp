#include "render/report_render.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/utf8.hpp"
#include "render/svg_chart.hpp"

namespace gpuscope::render {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Report sample() {
  Report r;
  r.name = "kern";
  r.title = "Kernel Summary";
  r.add_column("Name", "", ColumnType::kText)
      .add_column("Calls", "", ColumnType::kInteger)
      .add_column("Total Time", "ns", ColumnType::kInteger)
      .add_column("Avg", "ns", ColumnType::kReal)
      .add_column("Time", "%", ColumnType::kReal);
  r.rows.push_back(Row{std::string("kernel_b"), std::int64_t{1}, std::int64_t{6000}, 6000.0, 54.5});
  r.rows.push_back(Row{std::string("a, \"b\""), std::int64_t{1234567}, std::int64_t{1234567890}, 1000.3, kNaN});
  r.add_note(NoteLevel::kInfo, "n1");
  r.add_note(NoteLevel::kWarning, "w1");
  r.add_note(NoteLevel::kDataLoss, "d1");
  return r;
}

std::string rendered(const Report& r, Format f, const TableOptions& t = {}) {
  std::ostringstream out;
  render(r, f, out, t);
  return out.str();
}

// Units as the report gives them (the layout after --timeunit).
const TableOptions kOwnUnits{false, false, kMaxTableTextWidth};

TEST(ReportRender, TableAlignsColumnsGroupsThousandsAndPrefixesNotes) {
  // Text left-aligned, numbers right-aligned; 2 spaces between columns; Avg has
  // 1 decimal (max >= 1000), Time 2 decimals (max >= 10); NaN prints "-".
  const std::string expected =
      "Kernel Summary (kern)\n"
      "\n"
      "Name          Calls  Total Time (ns)  Avg (ns)  Time (%)\n"
      "--------  ---------  ---------------  --------  --------\n"
      "kernel_b          1            6,000   6,000.0     54.50\n"
      "a, \"b\"    1,234,567    1,234,567,890   1,000.3         -\n"
      "\n"
      "note: n1\n"
      "WARNING: w1\n"
      "DATA LOSS: d1\n";
  EXPECT_EQ(rendered(sample(), Format::kTable, kOwnUnits), expected);
}

TEST(ReportRender, CsvQuotesPerRfc4180WithUnitsInHeader) {
  const std::string expected =
      "Name,Calls,Total Time (ns),Avg (ns),Time (%)\n"
      "kernel_b,1,6000,6000,54.5\n"
      "\"a, \"\"b\"\"\",1234567,1234567890,1000.3,\n";
  EXPECT_EQ(rendered(sample(), Format::kCsv), expected);
}

TEST(ReportRender, CsvQuotesNewlinesAndHeaderCommas) {
  Report r;
  r.add_column("a,b", "", ColumnType::kText);
  r.rows.push_back(Row{std::string("line1\nline2")});
  r.rows.push_back(Row{std::monostate{}});
  EXPECT_EQ(rendered(r, Format::kCsv), "\"a,b\"\n\"line1\nline2\"\n\n");
}

// A trace edited after import (merged, or written by another tool) may hold bytes that are not
// UTF-8: every format repairs them where it writes text, and escapes control characters its way.
Report edited() {
  Report r;
  r.name = "edited";
  r.title = "Edited \xff";
  r.add_column("Name", "", ColumnType::kText).add_column("Calls", "", ColumnType::kInteger);
  r.rows.push_back(Row{std::string("k\xff\xfe\xc3(\x01\x1b[31m\tend"), std::int64_t{3}});
  r.add_note(NoteLevel::kWarning, "slow: k\xff\x07");
  return r;
}

TEST(ReportRender, EveryFormatRepairsTextThatIsNotUtf8) {
  const Report r = edited();
  for (Format f : {Format::kTable, Format::kCsv, Format::kJson, Format::kMarkdown}) {
    const std::string out = rendered(r, f);
    EXPECT_TRUE(core::valid_utf8(out)) << format_name(f) << ":\n" << out;
    EXPECT_NE(out.find("k\uFFFD\uFFFD\uFFFD("), std::string::npos) << format_name(f) << ":\n" << out;
  }
  const std::string table = rendered(r, Format::kTable);
  EXPECT_NE(table.find("Edited \uFFFD (edited)\n"), std::string::npos) << table;
  EXPECT_NE(table.find("k\uFFFD\uFFFD\uFFFD(\\x01\\x1b[31m\\tend  "), std::string::npos) << table;
  EXPECT_NE(table.find("WARNING: slow: k\uFFFD\\x07\n"), std::string::npos) << table;
  EXPECT_NE(rendered(r, Format::kMarkdown).find(R"(k���(\\x01\\x1b\[31m\\tend)"), std::string::npos);
  // csv keeps control characters as data, inside quotes.
  EXPECT_EQ(rendered(r, Format::kCsv), "Name,Calls\n\"k\uFFFD\uFFFD\uFFFD(\x01\x1b[31m\tend\",3\n");
  EXPECT_EQ(one_line("k\xe2\x82"), "k\uFFFD");  // a cut sequence: one U+FFFD (core/utf8.hpp)
  EXPECT_EQ(one_line("a\u0085\u009b[31mb\u00a0"), "a\\u0085\\u009b[31mb\u00a0");  // C1 escaped, U+00A0 kept
}

TEST(ReportRender, ValidTextIsWrittenAsBefore) {
  // The rule must not fire on valid UTF-8: no quotes added in csv, nothing replaced.
  EXPECT_EQ(one_line("void k<\u00e9>()"), "void k<\u00e9>()");
  Report r;
  r.add_column("Name", "", ColumnType::kText);
  r.rows.push_back(Row{std::string("vec<float> \u2026 \uFFFD")});
  EXPECT_EQ(rendered(r, Format::kCsv), "Name\nvec<float> \u2026 \uFFFD\n");
}

TEST(ReportRender, XmlEscapeGivesXmlCharactersOnly) {
  // Not UTF-8 → U+FFFD; C0 controls but tab/LF/CR, and DEL → space; U+FFFE/U+FFFF (not XML
  // characters) → U+FFFD; markup → entities.
  EXPECT_EQ(xml_escape("a\xff\xfe<b>&\"'\x01\x7f\t\xef\xbf\xbe\xef\xbf\xbf\xef\xbf\xbd\u00e9"),
            "a\uFFFD\uFFFD&lt;b&gt;&amp;&quot;&apos;  \t\uFFFD\uFFFD\uFFFD\u00e9");
  EXPECT_EQ(xml_escape("a\u0085b\u00a0"), "a b\u00a0");
  EXPECT_EQ(xml_escape("void k<float>()"), "void k&lt;float&gt;()");
}

TEST(ReportRender, Markdown) {
  Report r = sample();
  std::get<std::string>(r.rows[0][0]) = "x|y";
  const std::string expected =
      "### Kernel Summary\n"
      "\n"
      "| Name | Calls | Total Time (ns) | Avg (ns) | Time (%) |\n"
      "|---|---:|---:|---:|---:|\n"
      "| x\\|y | 1 | 6000 | 6000.0 | 54.50 |\n"
      "| a, \"b\" | 1234567 | 1234567890 | 1000.3 | - |\n"
      "\n"
      "- note: n1\n"
      "- **WARNING:** w1\n"
      "- **DATA LOSS:** d1\n";
  EXPECT_EQ(rendered(r, Format::kMarkdown, kOwnUnits), expected);
}

TEST(ReportRender, JsonKeepsTypesAndNullsNonFinite) {
  Report r;
  r.name = "t";
  r.title = "T";
  r.add_column("Name", "", ColumnType::kText).add_column("Time", "ns", ColumnType::kReal);
  r.rows.push_back(Row{std::string("x"), 1.5});
  r.rows.push_back(Row{std::monostate{}, std::numeric_limits<double>::infinity()});
  r.add_note(NoteLevel::kDataLoss, "lost");
  const std::string expected = R"({
  "name": "t",
  "title": "T",
  "columns": [
    {
      "name": "Name",
      "unit": "",
      "type": "text"
    },
    {
      "name": "Time",
      "unit": "ns",
      "type": "real"
    }
  ],
  "rows": [
    [
      "x",
      1.5
    ],
    [
      null,
      null
    ]
  ],
  "notes": [
    {
      "level": "data_loss",
      "text": "lost"
    }
  ]
}
)";
  EXPECT_EQ(rendered(r, Format::kJson), expected);
}

TEST(ReportRender, JsonOfSampleParsesWithIntegersIntact) {
  const auto j = nlohmann::json::parse(rendered(sample(), Format::kJson));
  EXPECT_EQ(j["rows"][1][2].get<std::int64_t>(), 1234567890);
  EXPECT_TRUE(j["rows"][1][4].is_null());  // NaN
  EXPECT_EQ(j["columns"][2]["type"], "integer");
  EXPECT_EQ(j["notes"][1]["level"], "warning");
}

TEST(ReportRender, MarkdownEscapesKernelNamePunctuation) {
  Report r;
  r.name = "n";
  r.add_column("Name", "", ColumnType::kText);
  r.rows.push_back(Row{std::string("add<float>(float*, float*) my_k")});
  EXPECT_NE(rendered(r, Format::kMarkdown).find("| add\\<float\\>(float\\*, float\\*) my\\_k |"), std::string::npos)
      << rendered(r, Format::kMarkdown);
}

// Several reports are ONE document in every format (header: "Documents").
TEST(ReportRender, SeveralReportsAreOneJsonDocument) {
  const std::vector<Report> two{sample(), sample()};
  std::ostringstream json;
  render(two, Format::kJson, json, DocumentOptions{"summary", false});
  const auto j = nlohmann::json::parse(json.str());  // throws on a second document ("Extra data")
  EXPECT_EQ(j["schema_version"], kDocumentSchemaVersion);
  EXPECT_EQ(j["command"], "summary");
  ASSERT_EQ(j["reports"].size(), 2u);
  EXPECT_EQ(j["reports"]["kern"]["name"], "kern");
  EXPECT_EQ(j["reports"]["kern#2"]["rows"][1][2].get<std::int64_t>(), 1234567890);  // a name twice: #2
  // Print order is key order.
  EXPECT_EQ(j["reports"].begin().key(), "kern");
}

TEST(ReportRender, SeveralReportsAreOneCsvTableWithASectionColumn) {
  Report other;
  other.name = "copies";
  other.add_column("Operation", "", ColumnType::kText).add_column("Total Time", "ns", ColumnType::kInteger);
  other.rows.push_back(Row{std::string("[CUDA memcpy Host-to-Device]"), std::int64_t{30000}});
  Report empty;  // no rows: its columns, no line
  empty.name = "none";
  empty.add_column("Z", "", ColumnType::kInteger);
  const std::vector<Report> three{sample(), other, empty};
  std::ostringstream csv;
  render(three, Format::kCsv, csv);
  // The union of the headers in order of first appearance; "Total Time (ns)" is shared.
  EXPECT_EQ(csv.str(),
            "section,Name,Calls,Total Time (ns),Avg (ns),Time (%),Operation,Z\n"
            "kern,kernel_b,1,6000,6000,54.5,,\n"
            "kern,\"a, \"\"b\"\"\",1234567,1234567890,1000.3,,,\n"
            "copies,,,30000,,,[CUDA memcpy Host-to-Device],\n");

  // One report: the plain table, unless the command asks for the section column.
  std::ostringstream one, sectioned;
  render(std::span<const Report>(three.data(), 1), Format::kCsv, one);
  EXPECT_EQ(one.str(), rendered(sample(), Format::kCsv));
  render(std::span<const Report>(three.data(), 1), Format::kCsv, sectioned, DocumentOptions{"summary", true});
  EXPECT_EQ(sectioned.str().substr(0, sectioned.str().find('\n')),
            "section,Name,Calls,Total Time (ns),Avg (ns),Time (%)");

  // A header twice in one report keeps two columns.
  Report twice;
  twice.name = "t";
  twice.add_column("A", "", ColumnType::kInteger).add_column("A", "", ColumnType::kInteger);
  twice.rows.push_back(Row{std::int64_t{1}, std::int64_t{2}});
  std::ostringstream dup;
  render(std::vector<Report>{twice, twice}, Format::kCsv, dup);
  EXPECT_EQ(dup.str(), "section,A,A\nt,1,2\nt,1,2\n");
}

TEST(ReportRender, SeveralReportsInTableAndMarkdownAreSeparatedByABlankLine) {
  const std::vector<Report> two{sample(), sample()};
  for (Format f : {Format::kTable, Format::kMarkdown}) {
    std::ostringstream out;
    render(two, f, out, DocumentOptions{"stats", true});
    const std::string one = rendered(sample(), f);
    EXPECT_EQ(out.str(), one + "\n" + one);
  }
}

TEST(ReportRender, TableTruncatesLongTextWithEllipsis) {
  Report r;
  r.name = "n";
  r.add_column("Name", "", ColumnType::kText);
  r.rows.push_back(Row{std::string(100, 'k')});
  const std::string out = rendered(r, Format::kTable);
  // Cut in the middle: 40 code points, "…", the last 39.
  EXPECT_NE(out.find("\n" + std::string(40, 'k') + "…" + std::string(39, 'k') + "\n"), std::string::npos) << out;
  EXPECT_EQ(out.find(std::string(80, 'k')), std::string::npos);
  // The dash line matches the display width (80), not the byte length.
  EXPECT_NE(out.find("\n" + std::string(80, '-') + "\n"), std::string::npos);
  // Markdown and CSV never truncate.
  EXPECT_NE(rendered(r, Format::kCsv).find(std::string(100, 'k')), std::string::npos);
}

TEST(ReportRender, TablePrecisionFollowsMagnitudeAndAvoidsNegativeZero) {
  Report r;
  r.name = "p";
  r.add_column("v", "ms", ColumnType::kReal);
  r.rows.push_back(Row{0.4});
  r.rows.push_back(Row{-0.0001});
  r.rows.push_back(Row{std::monostate{}});
  EXPECT_EQ(rendered(r, Format::kTable, kOwnUnits), "p\n\nv (ms)\n------\n 0.400\n 0.000\n     -\n");
}

TEST(ReportRender, TableShowsThreeSignificantDigitsOfSmallColumns) {
  // A kernel time in s after --timeunit s must not print as 0.000.
  Report r;
  r.name = "p";
  r.add_column("v", "s", ColumnType::kReal);
  r.rows.push_back(Row{0.0004});
  r.rows.push_back(Row{-0.0001});
  EXPECT_EQ(rendered(r, Format::kTable, kOwnUnits), "p\n\n    v (s)\n---------\n 0.000400\n-0.000100\n");
  r.rows = {Row{1.5e-12}};  // at most 9 decimals
  EXPECT_EQ(rendered(r, Format::kTable, kOwnUnits), "p\n\n      v (s)\n-----------\n0.000000000\n");
}

TEST(ReportRender, IdentifierColumnsHaveNoThousandsSeparators) {
  Report r;
  r.name = "ids";
  r.add_column("Pid", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Duration", "ns", ColumnType::kInteger);
  r.rows.push_back(Row{std::int64_t{4012345}, std::int64_t{4012345}});
  EXPECT_EQ(rendered(r, Format::kTable, kOwnUnits),
            "ids\n\n    Pid  Duration (ns)\n-------  -------------\n4012345      4,012,345\n");
  // Scaled, the identifier still prints as is; the duration reads in ms.
  EXPECT_EQ(rendered(r, Format::kTable),
            "ids\n\n    Pid  Duration (ms)\n-------  -------------\n4012345          4.012\n");
  const std::string json = rendered(r, Format::kJson);
  EXPECT_NE(
      json.find("\"name\": \"Pid\",\n      \"unit\": \"\",\n      \"type\": \"integer\",\n      \"identifier\": true"),
      std::string::npos)
      << json;
  EXPECT_EQ(json.find("\"identifier\": false"), std::string::npos);  // only identifiers say so
}

TEST(ReportRender, ParseFormat) {
  EXPECT_EQ(parse_format("table"), Format::kTable);
  EXPECT_EQ(parse_format("csv"), Format::kCsv);
  EXPECT_EQ(parse_format("json"), Format::kJson);
  EXPECT_EQ(parse_format("markdown"), Format::kMarkdown);
  for (Format f : {Format::kTable, Format::kCsv, Format::kJson, Format::kMarkdown})
    EXPECT_EQ(parse_format(format_name(f)), f);
  try {
    (void)parse_format("xml");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown output format 'xml' (valid: table, csv, json, markdown)");
  }
}

TEST(ReportRender, GroupThousands) {
  EXPECT_EQ(group_thousands(0), "0");
  EXPECT_EQ(group_thousands(999), "999");
  EXPECT_EQ(group_thousands(1000), "1,000");
  EXPECT_EQ(group_thousands(-1234567), "-1,234,567");
}

TEST(ReportRender, TableAndMarkdownChooseOneUnitPerColumn) {
  // The header names the unit chosen from the column's largest value; csv and json keep ns.
  const std::string table = rendered(sample(), Format::kTable);
  EXPECT_NE(table.find("Name          Calls  Total Time (s)  Avg (µs)  Time (%)\n"), std::string::npos) << table;
  // 6,000 ns in a column of seconds keeps two significant digits (never 0.000).
  EXPECT_NE(table.find("kernel_b          1       0.0000060     6.000     54.50\n"), std::string::npos) << table;
  EXPECT_NE(table.find("a, \"b\"    1,234,567           1.235     1.000         -\n"), std::string::npos) << table;
  const std::string md = rendered(sample(), Format::kMarkdown);
  EXPECT_NE(md.find("| Name | Calls | Total Time (s) | Avg (µs) | Time (%) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1234567 | 1.235 | 1.000 | - |"), std::string::npos) << md;
  EXPECT_NE(rendered(sample(), Format::kCsv).find("Total Time (ns),Avg (ns)"), std::string::npos);
  EXPECT_NE(rendered(sample(), Format::kJson).find("\"unit\": \"ns\""), std::string::npos);
}

TEST(ReportRender, SizesScaleAndTinyValuesNeverReadZero) {
  Report r;
  r.name = "m";
  r.add_column("Total", "MB", ColumnType::kReal).add_column("Bytes", "bytes", ColumnType::kInteger);
  r.rows.push_back(Row{0.000004, std::int64_t{2'500'000'000}});
  r.rows.push_back(Row{0.000001, std::int64_t{512}});
  EXPECT_EQ(rendered(r, Format::kTable),
            "m\n\nTotal (B)  Bytes (GB)\n---------  ----------\n    4.000       2.500\n    1.000  0.00000051\n");
  r.rows = {Row{0.0, std::int64_t{0}}};  // all zero: the column's own unit
  EXPECT_EQ(rendered(r, Format::kTable), "m\n\nTotal (MB)  Bytes (B)\n----------  ---------\n     0.000          0\n");
}

TEST(ReportRender, PointsInTimeAndOtherUnitsAreNotScaled) {
  Report r;
  r.name = "t";
  r.add_column("Start", "ns", ColumnType::kInteger)
      .add_column("Peak At", "ns", ColumnType::kInteger)
      .add_column("Rate", "GB/s", ColumnType::kReal)
      .add_column("Mem", "MiB", ColumnType::kReal);
  r.rows.push_back(Row{std::int64_t{1'234'567'890}, std::int64_t{5'000'000}, 1234.5, 2048.0});
  EXPECT_EQ(rendered(r, Format::kTable),
            "t\n\n   Start (ns)  Peak At (ns)  Rate (GB/s)  Mem (MiB)\n"
            "-------------  ------------  -----------  ---------\n"
            "1,234,567,890     5,000,000      1,234.5    2,048.0\n");
}

TEST(ReportRender, NameWidthCutsAndKeepsDifferentNamesDifferent) {
  Report r;
  r.name = "n";
  r.add_column("Name", "", ColumnType::kText);
  // Same start, same end, different middle: cut in the middle they would read the same.
  const std::string a = "void kern<" + std::string(30, 'x') + "AddFunctor" + std::string(30, 'y') + ">(int)";
  const std::string b = "void kern<" + std::string(30, 'x') + "MulFunctor" + std::string(30, 'y') + ">(int)";
  r.rows = {Row{a}, Row{b}, Row{std::string("short")}};
  const std::string out = rendered(r, Format::kTable, TableOptions{true, true, 20});
  std::istringstream lines(out);
  std::vector<std::string> cells;
  for (std::string line; std::getline(lines, line);) cells.push_back(line);
  ASSERT_EQ(cells.size(), 7u) << out;
  EXPECT_NE(cells[4], cells[5]) << out;
  EXPECT_NE(cells[4].find("Add"), std::string::npos) << out;
  EXPECT_NE(cells[5].find("Mul"), std::string::npos) << out;
  EXPECT_EQ(cells[6], "short");
  // full: names whole.
  const std::string full = rendered(r, Format::kTable, TableOptions{true, true, 0});
  EXPECT_NE(full.find(a), std::string::npos);
  // A name that is unique when cut is cut in the middle.
  r.rows = {Row{a}};
  EXPECT_NE(rendered(r, Format::kTable, TableOptions{true, true, 20}).find("void kern<…yyy>(int)"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::render
