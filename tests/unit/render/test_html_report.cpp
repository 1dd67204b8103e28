// render/html_report: the page's JSON cannot break out of its <script> element, names are
// data, and the page is self-contained (no fetch from the network).
#include "render/html_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>

#include "render/report_assets.hpp"

namespace gpuscope::render {
namespace {

const std::string kHostile =
    "k<script>alert(1)</script></svg><!--\"q\" 'a' &amp; \x01\x1b[31m\xff\xfe\xc3 \xe2\x80\xa8 \xe2\x80\xa9 end";

core::ReportPage hostile_page() {
  core::ReportPage page;
  page.trace_name = "run</title><script>alert(3)</script>.sqlite";
  page.generator = "gpuscope test";
  page.wall_ns = 1000;
  Report top;
  top.name = "top";
  top.title = "Top";
  top.add_column("Wall Time", "ms", ColumnType::kReal);
  top.rows.push_back(Row{0.001});
  top.add_note(NoteLevel::kWarning, "launch-bound: " + kHostile);
  page.headline.push_back(top);
  Report k;
  k.name = "cuda_gpu_kern_sum";
  k.title = "CUDA GPU Kernel Summary";
  k.add_column("Total Time", "ns", ColumnType::kInteger).add_column("Name", "", ColumnType::kText);
  k.rows.push_back(Row{std::int64_t{123456}, kHostile});
  page.tables.push_back(k);
  page.gpus.push_back({0, kHostile, 1000, 500, 100, 0, 400});
  page.steps.push_back({1, kHostile, 0, 1000, 600, 400, "steady", 1});
  return page;
}

TEST(HtmlReport, ScriptSafeJsonCannotEndItsElement) {
  const nlohmann::json j = {{"name", kHostile}, {"n", 1.5}};
  const std::string text = script_safe_json(j);
  EXPECT_EQ(text.find('<'), std::string::npos);
  EXPECT_EQ(text.find('>'), std::string::npos);
  EXPECT_EQ(text.find('&'), std::string::npos);
  EXPECT_EQ(text.find("\xe2\x80\xa8"), std::string::npos);
  EXPECT_EQ(text.find("\xe2\x80\xa9"), std::string::npos);
  EXPECT_NE(text.find("\\u003cscript\\u003e"), std::string::npos);
  // Read back, the text is the name with its bytes that are not UTF-8 as U+FFFD.
  const nlohmann::json back = nlohmann::json::parse(text);
  const std::string name = back["name"];
  EXPECT_NE(name.find("<script>alert(1)</script></svg><!--\"q\" 'a' &amp;"), std::string::npos);
  EXPECT_NE(name.find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
  EXPECT_NE(name.find("\xe2\x80\xa8"), std::string::npos);  // U+2028 itself, escaped in transit
  EXPECT_EQ(back["n"], 1.5);
}

TEST(HtmlReport, ScriptSafeJsonEscapesWhatHtmlDoesNotAllowRaw) {
  // DEL, a C1 control, U+FFFE and U+FFFF (in a trace edited after import) travel as \u escapes;
  // JSON.parse gives them back. Text without them is written as nlohmann writes it.
  const std::string odd = "a\x7f b\u0085 c\xef\xbf\xbe d\xef\xbf\xbf e\u00a0";
  const std::string text = script_safe_json(nlohmann::json{{"name", odd}});
  EXPECT_EQ(text, R"({"name":"a\u007f b\u0085 c\ufffe d\uffff e)"
                  "\u00a0\"}");
  EXPECT_EQ(nlohmann::json::parse(text)["name"], odd);
  EXPECT_EQ(script_safe_json(nlohmann::json{{"name", "k<\u00e9>"}}), R"({"name":"k\u003c)"
                                                                     "\u00e9\\u003e\"}");
}

TEST(HtmlReport, HtmlEscape) {
  EXPECT_EQ(html_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(html_escape("plain"), "plain");
}

TEST(HtmlReport, HostileNamesStayData) {
  std::ostringstream out;
  write_html_report(hostile_page(), out);
  const std::string html = out.str();
  // The page's own script elements only: the template's, none from a name.
  const std::string tmpl = detail::report_asset("page_html");
  auto count = [](const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(html, "<script"), count(tmpl, "<script"));
  EXPECT_EQ(html.find("alert(1)</script>"), std::string::npos);
  EXPECT_EQ(html.find("<script>alert(3)"), std::string::npos);
  EXPECT_NE(html.find("<title>gpuscope report: run&lt;/title&gt;&lt;script&gt;alert(3)&lt;/script&gt;.sqlite</title>"),
            std::string::npos);
  // The data element holds the JSON, read back whole.
  const std::string open = "<script type=\"application/json\" id=\"gpuscope-data\">";
  const std::size_t a = html.find(open);
  ASSERT_NE(a, std::string::npos);
  const std::size_t b = html.find("</script>", a);
  ASSERT_NE(b, std::string::npos);
  const nlohmann::json data = nlohmann::json::parse(html.substr(a + open.size(), b - a - open.size()));
  EXPECT_EQ(data["version"], 2);
  EXPECT_EQ(data["tables"][0]["name"], "cuda_gpu_kern_sum");
  EXPECT_EQ(data["tables"][0]["rows"][0][0], 123456);
  const std::string name = data["strings"][data["tables"][0]["rows"][0][1].get<std::size_t>()];
  EXPECT_NE(name.find("<script>alert(1)</script>"), std::string::npos);
  EXPECT_EQ(data["gpus"][0]["kernel_ns"], 500);
  EXPECT_EQ(data["steps"][0]["state"], "steady");
  EXPECT_TRUE(data["timeline"].is_null());
  // Valid UTF-8 throughout (the names' bad bytes replaced).
  EXPECT_NO_THROW((void)nlohmann::json(html).dump());
}

// hostile_page with `name` also in the headline's top_kernels, in cuda_gpu_kern_sum, a step's
// label and on the roofline.
core::ReportPage page_listing(const std::string& name) {
  core::ReportPage page = hostile_page();
  Report top_kernels = page.tables[0];
  top_kernels.name = "top_kernels";
  top_kernels.rows = {Row{std::int64_t{7}, name}, Row{std::int64_t{8}, std::monostate{}}};
  page.headline.push_back(top_kernels);
  page.tables[0].rows.push_back(Row{std::int64_t{9}, name});
  page.steps.push_back({1, name, 1000, 1000, 600, 400, "steady", 1});
  kernels::KernelPoint point;
  point.label = name;
  page.roofline_points.push_back(point);
  return page;
}

TEST(HtmlReport, EachNameIsStoredOnce) {
  // One entry of "strings" for the name, every place holding its index.
  const std::string big(100'000, 'k');
  const nlohmann::json data = report_page_json(page_listing(big));
  const nlohmann::json& strings = data.at("strings");
  EXPECT_EQ(std::count(strings.begin(), strings.end(), nlohmann::json(big)), 1);
  const auto at =
      static_cast<std::size_t>(std::find(strings.begin(), strings.end(), nlohmann::json(big)) - strings.begin());
  EXPECT_EQ(data["headline"][1]["rows"][0][1], at);
  EXPECT_EQ(data["tables"][0]["rows"][1][1], at);
  EXPECT_EQ(data["steps"][1]["label"], at);
  EXPECT_EQ(data["roofline"]["points"][0]["kernel"], at);
  // The hostile name (made valid UTF-8) is the other entry; numbers and nulls stay as they were.
  EXPECT_EQ(strings.size(), 2U);
  EXPECT_EQ(data["tables"][0]["rows"][0][1], data["steps"][0]["label"]);
  EXPECT_EQ(data["headline"][1]["rows"][0][0], 7);
  EXPECT_TRUE(data["headline"][1]["rows"][1][1].is_null());
  EXPECT_EQ(data["headline"][0]["rows"][0][0], 0.001);
  // The page listing the name four times grows by the name once (and the roofline's 512-byte label).
  std::ostringstream with_big, with_short;
  write_html_report(page_listing(big), with_big);
  write_html_report(page_listing("k"), with_short);
  EXPECT_LT(with_big.str().size() - with_short.str().size(), big.size() + 2'000);
}

TEST(HtmlReport, SelfContained) {
  std::ostringstream out;
  write_html_report(hostile_page(), out);
  const std::string html = out.str();
  std::string lower = html;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* what : {"<script src", "<link", "@import", "fetch(", "xmlhttprequest", "url(http", "url(//",
                           "url('http", "url(\"http", "src=\"http", "href=\"http"}) {
    EXPECT_EQ(lower.find(what), std::string::npos) << what;
  }
  // Chart.js and the page's scripts are inlined.
  EXPECT_NE(html.find("Chart.js v"), std::string::npos);
  EXPECT_NE(html.find("window.gpuscopeTimeline"), std::string::npos);
  EXPECT_NE(html.find("gpuscope-errors"), std::string::npos);
  EXPECT_EQ(html.find("@@"), std::string::npos);  // every marker replaced
}

}  // namespace
}  // namespace gpuscope::render
