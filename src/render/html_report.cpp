#include "render/html_report.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "core/utf8.hpp"
#include "render/flame_svg.hpp"
#include "render/kernel_roofline_svg.hpp"
#include "render/report_assets.hpp"
#include "render/report_render.hpp"
#include "render/svg_chart.hpp"
#include "render/timeline_overview_json.hpp"
#include "render/token_timeline_svg.hpp"

namespace gpuscope::render {
namespace {

using Json = nlohmann::json;

// The page's names (kernel names, NVTX texts, operator and module names: any text of a
// Report's text column, a step's label, a roofline point's kernel, the timeline's names),
// each distinct one once, made valid UTF-8; the data refer to a name by its index here. A
// name is listed by several tables and the timeline: stored once, 100 kB names no longer
// triple the page (html_report.hpp, docs/report.md "Long names").
class StringTable {
 public:
  std::size_t index(std::string_view text) {
    std::string valid = core::repair_utf8(text);
    const auto [it, added] = m_index.try_emplace(std::move(valid), m_strings.size());
    if (added) m_strings.push_back(it->first);
    return it->second;
  }
  // A string cell becomes its index; null stays null.
  void replace(Json& cell) {
    if (cell.is_string()) cell = index(cell.get_ref<const std::string&>());
  }
  [[nodiscard]] Json json() const { return Json(m_strings); }

 private:
  std::unordered_map<std::string, std::size_t> m_index;
  std::vector<std::string> m_strings;
};

Json series_json(const core::PageSeries& s) {
  return Json{
      {"name", core::repair_utf8(s.name)}, {"unit", s.unit}, {"chart", s.chart}, {"t_ns", s.t_ns}, {"values", s.values},
      {"points_total", s.points_total}};
}

// A number, or null when it is unknown (NaN) or infinite.
Json real_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

// The page's roofline points, exactly as the chart places them (core/kernel_point.hpp).
Json roofline_json(const core::ReportPage& page, StringTable& names) {
  Json points = Json::array();
  for (const kernels::KernelPoint& p : page.roofline_points)
    points.push_back(Json{{"kernel", names.index(p.label)},
                          {"intensity", real_or_null(p.intensity)},
                          {"intensity_l2", real_or_null(p.intensity_l2)},
                          {"intensity_l1", real_or_null(p.intensity_l1)},
                          {"flop_rate", real_or_null(p.flop_rate)},
                          {"ceiling", p.ceiling},
                          {"ceiling_value", real_or_null(p.ceiling_value)},
                          {"pct_of_ceiling", real_or_null(p.pct_of_ceiling)},
                          {"bound", p.bound_label},
                          {"on_roofline", p.on_roofline}});
  return Json{{"ceiling_source", page.roofline_ceiling_source}, {"points", std::move(points)}};
}

// The reports as render::report_json writes them, with each text cell an index into `names`.
Json reports_json(const std::vector<Report>& reports, StringTable& names) {
  Json out = Json::array();
  for (const Report& r : reports) {
    Json j(report_json(r));
    for (Json& row : j["rows"])
      for (std::size_t c = 0; c < r.columns.size() && c < row.size(); ++c)
        if (r.columns[c].type == ColumnType::kText) names.replace(row[c]);
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

Json report_page_json(const core::ReportPage& page) {
  StringTable names;
  Json j;
  j["version"] = 2;
  j["kind"] = page.kind;
  j["trace"] = core::repair_utf8(page.trace_name);
  j["generator"] = page.generator;
  j["base_ns"] = page.base_ns;
  j["wall_ns"] = page.wall_ns;
  j["headline"] = reports_json(page.headline, names);
  j["gpus"] = Json::array();
  for (const core::PageGpuTime& g : page.gpus)
    j["gpus"].push_back(Json{{"gpu", g.gpu_index},
                             {"name", core::repair_utf8(g.name)},
                             {"wall_ns", g.wall_ns},
                             {"kernel_ns", g.kernel_ns},
                             {"copy_ns", g.copy_ns},
                             {"memset_ns", g.memset_ns},
                             {"idle_ns", g.idle_ns}});
  j["gpus_scope"] = page.gpus_scope;
  j["steps_source"] = page.steps_source;
  j["steps_total"] = page.steps_total;
  j["steps"] = Json::array();
  for (const core::PageStep& s : page.steps)
    j["steps"].push_back(Json{{"pid", s.pid},
                              {"label", names.index(s.label)},
                              {"start_ns", s.start_ns},
                              {"wall_ns", s.wall_ns},
                              {"gpu_busy_ns", s.gpu_busy_ns},
                              {"idle_ns", s.idle_ns},
                              {"state", s.state},
                              {"steps", s.steps}});
  j["tables"] = reports_json(page.tables, names);
  j["memory"] = Json::array();
  for (const core::PageSeries& s : page.memory) j["memory"].push_back(series_json(s));
  j["metrics"] = Json::array();
  for (const core::PageSeries& s : page.metrics) j["metrics"].push_back(series_json(s));
  j["timeline"] = page.timeline ? timeline_overview_json(*page.timeline) : Json(nullptr);
  if (page.timeline)
    for (Json& name : j["timeline"]["names"]) names.replace(name);
  j["roofline"] = roofline_json(page, names);
  j["notes"] = Json::array();
  for (const std::string& n : page.notes) j["notes"].push_back(core::repair_utf8(n));
  j["strings"] = names.json();
  return j;
}

std::string script_safe_json(const Json& json) {
  // replace: a name that is not UTF-8 becomes U+FFFD instead of failing the page.
  const std::string text = json.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
               (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else if (c == '\x7F') {
      out += "\\u007f";  // DEL, C1 controls, U+FFFE and U+FFFF: characters HTML does not allow raw
    } else if (c == '\xC2' && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1]));
      ++i;
    } else if (c == '\xEF' && i + 2 < text.size() && text[i + 1] == '\xBF' &&
               (text[i + 2] == '\xBE' || text[i + 2] == '\xBF')) {
      out += text[i + 2] == '\xBE' ? "\\ufffe" : "\\uffff";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string html_escape(std::string_view text) {
  // The same five characters as SVG text; &apos; is an HTML5 entity too.
  return xml_escape(text);
}

namespace {

// A kernel's label beside its point on the page's roofline: a name of kilobytes drawn whole
// would bury the chart and stall the page (the tables show the whole name).
constexpr std::size_t kMaxRooflineLabelBytes = 512;

std::string roofline_label(const std::string& name) {
  if (name.size() <= kMaxRooflineLabelBytes) return name;
  std::size_t cut = kMaxRooflineLabelBytes;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // a whole code point
  return name.substr(0, cut) + "\u2026";
}

// The kernels of a `gpuscope kernels` trace as render/kernel_roofline_svg draws them (names
// escaped as SVG text there), inline, from the points the page's data embeds (roofline_json);
// a sentence when there are none or nothing can be drawn.
void write_roofline(const core::ReportPage& page, std::ostream& out) {
  if (page.roofline_points.empty()) {
    out << "<p class=\"empty\">No hardware counters in this trace: <code>gpuscope kernels -o NAME -- CMD</code> "
           "records them, then <code>gpuscope report NAME.sqlite</code> places each kernel here.</p>";
    return;
  }
  std::vector<kernels::KernelPoint> points = page.roofline_points;  // the data's points, labels cut for the chart
  for (kernels::KernelPoint& p : points) p.label = roofline_label(p.label);
  std::ostringstream svg;
  try {
    write_kernel_roofline_svg(page.roofline_ceilings, points, page.roofline_ceiling_source, svg);
  } catch (const std::invalid_argument& e) {
    out << "<p class=\"empty\">No roofline: " << html_escape(e.what()) << "</p>";
    return;
  }
  std::string text = svg.str();
  if (const std::size_t decl = text.find("<svg"); decl != std::string::npos) text.erase(0, decl);  // no <?xml?>
  out << "<div class=\"roofline-chart\">" << text << "</div>";
}

}  // namespace

void write_html_report(const core::ReportPage& page, std::ostream& out) {
  // The template's markers (@@NAME@@) are replaced in order; text between them is copied.
  const std::string tmpl = detail::report_asset("page_html");
  const std::string title = html_escape("gpuscope report: " + page.trace_name);
  std::size_t at = 0;
  while (at < tmpl.size()) {
    const std::size_t open = tmpl.find("@@", at);
    if (open == std::string::npos) break;
    const std::size_t close = tmpl.find("@@", open + 2);
    if (close == std::string::npos) break;
    out.write(tmpl.data() + at, static_cast<std::streamsize>(open - at));
    const std::string_view key(tmpl.data() + open + 2, close - open - 2);
    if (key == "TITLE") {
      out << title;
    } else if (key == "GENERATOR") {
      out << html_escape(page.generator);
    } else if (key == "DATA") {
      out << script_safe_json(report_page_json(page));
    } else if (key == "CHART_JS") {
      out << detail::report_asset("chart_js");
    } else if (key == "PAGE_JS") {
      out << detail::report_asset("page_js");
    } else if (key == "PAGE_CSS") {
      out << detail::report_asset("page_css");
    } else if (key == "TOKENS_NAV") {
      write_tokens_nav(page.tokens, out);
    } else if (key == "TOKENS") {
      write_tokens_section(page.tokens, out);
    } else if (key == "PYTHON_NAV") {
      write_python_nav(page, out);
    } else if (key == "PYTHON") {
      write_python_section(page, out);
    } else if (key == "ROOFLINE") {
      write_roofline(page, out);
    } else if (key == "TIMELINE_JS") {
      out << detail::report_asset("timeline_js");
    } else if (key == "TIMELINE_CSS") {
      out << detail::report_asset("timeline_css");
    } else {
      out << "@@" << key << "@@";  // not a marker: copied as it is
    }
    at = close + 2;
  }
  out.write(tmpl.data() + at, static_cast<std::streamsize>(tmpl.size() - at));
}

}  // namespace gpuscope::render
