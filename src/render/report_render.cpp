#include "render/report_render.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/table_units.hpp"
#include "core/utf8.hpp"

namespace gpuscope::render {
namespace {

bool is_numeric(const Column& c) { return c.type != ColumnType::kText; }

constexpr int kMaxDecimals = 9;  // ns in s

std::string header_text(const Column& c) { return c.unit.empty() ? c.name : c.name + " (" + c.unit + ")"; }

// Display width: UTF-8 code points (continuation bytes 10xxxxxx do not count).
std::size_t display_width(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// Decimals for a real column, from its largest finite magnitude (see header).
int real_decimals(const Report& r, std::size_t col) {
  double max_abs = 0.0;
  for (const Row& row : r.rows) {
    if (col < row.size()) {
      if (const auto* d = std::get_if<double>(&row[col]); d && std::isfinite(*d))
        max_abs = std::max(max_abs, std::fabs(*d));
    }
  }
  if (max_abs >= 1000.0) return 1;
  if (max_abs >= 10.0) return 2;
  if (max_abs == 0.0 || max_abs >= 0.1) return 3;
  // Small values (a time in s after --timeunit s): three significant digits of the
  // largest, so 0.00123 does not print as 0.001.
  return std::min(kMaxDecimals, 2 - static_cast<int>(std::floor(std::log10(max_abs))));
}

// Inserts ',' every three digits into the integer part of a plain decimal string.
std::string group_digits(std::string s) {
  const std::size_t begin = (!s.empty() && s[0] == '-') ? 1 : 0;
  std::size_t end = s.find('.');
  if (end == std::string::npos) end = s.size();
  for (std::ptrdiff_t i = static_cast<std::ptrdiff_t>(end) - 3; i > static_cast<std::ptrdiff_t>(begin); i -= 3)
    s.insert(static_cast<std::size_t>(i), 1, ',');
  return s;
}

// Human cell text for table (grouped = true) and markdown (grouped = false).
std::string human_cell(const Cell& cell, int decimals, bool grouped) {
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "-";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return grouped ? group_thousands(v) : std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          if (std::isnan(v)) return "-";
          if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
          std::string s = fmt::format("{:.{}f}", v, decimals);
          if (s == fmt::format("-{:.{}f}", 0.0, decimals)) s.erase(0, 1);  // no "-0.000"
          return grouped ? group_digits(std::move(s)) : s;
        } else {
          return one_line(v);
        }
      },
      cell);
}

// How one column shows in table and markdown (TableOptions in the header).
struct ColumnLayout {
  std::string header;
  double factor = 1.0;      // displayed value = cell × factor
  bool scaled = false;      // a time or size column shown in a chosen unit
  bool as_integer = false;  // a scaled integer column left in its own unit: whole numbers
  int decimals = 3;
};

bool point_in_time(const Column& c) { return c.name == "Start" || c.name == "End" || c.name.ends_with(" At"); }

double largest_magnitude(const Report& r, std::size_t col) {
  double max_abs = 0.0;
  for (const Row& row : r.rows) {
    if (col >= row.size()) continue;
    if (const auto* d = std::get_if<double>(&row[col]); d && std::isfinite(*d))
      max_abs = std::max(max_abs, std::fabs(*d));
    if (const auto* i = std::get_if<std::int64_t>(&row[col]))
      max_abs = std::max(max_abs, std::fabs(static_cast<double>(*i)));
  }
  return max_abs;
}

std::vector<ColumnLayout> layout_columns(const Report& r, const TableOptions& t) {
  std::vector<ColumnLayout> out;
  for (std::size_t c = 0; c < r.columns.size(); ++c) {
    const Column& col = r.columns[c];
    ColumnLayout l;
    l.header = header_text(col);
    if (col.type == ColumnType::kReal) l.decimals = real_decimals(r, c);
    const units::UnitFamily family = units::unit_family(col.unit);
    const bool scale = is_numeric(col) && col.kind == ColumnKind::kQuantity && !point_in_time(col) &&
                       ((family == units::UnitFamily::kTime && t.scale_times) ||
                        (family == units::UnitFamily::kSize && t.scale_sizes));
    if (scale) {
      const double largest = largest_magnitude(r, c);
      const units::ColumnScale cs = units::column_scale(col.unit, largest);
      l.scaled = true;
      l.factor = cs.factor;
      l.header = col.name + " (" + cs.unit + ")";
      l.as_integer = col.type == ColumnType::kInteger && cs.factor == 1.0;
      const double shown = largest * cs.factor;
      l.decimals = shown >= 100 ? 1 : shown >= 10 ? 2 : 3;
    }
    out.push_back(std::move(l));
  }
  return out;
}

// Cell text under `l` for table (grouped = true, quantities) and markdown (grouped = false).
std::string layout_cell(const Cell& cell, const ColumnLayout& l, bool grouped) {
  if (!l.scaled || l.as_integer) return human_cell(cell, l.decimals, grouped);
  double v = 0;
  if (const auto* d = std::get_if<double>(&cell)) {
    v = *d;
  } else if (const auto* i = std::get_if<std::int64_t>(&cell)) {
    v = static_cast<double>(*i);
  } else {
    return human_cell(cell, l.decimals, grouped);
  }
  v *= l.factor;
  return human_cell(Cell{v}, std::isfinite(v) ? units::cell_decimals(v, l.decimals) : l.decimals, grouped);
}

// Text cells of column `c` cut to `width` code points (0: none) so that different texts
// stay different (TableOptions::name_width).
void cut_text_column(std::vector<std::vector<std::string>>& cells, std::size_t c, std::size_t width) {
  if (width == 0) return;
  std::map<std::string, std::set<std::string>> by_cut;  // cut text → the texts giving it
  for (const auto& line : cells) by_cut[units::cut_middle(line[c], width)].insert(line[c]);
  for (auto& line : cells) {
    const std::string& text = line[c];
    const std::set<std::string>& same = by_cut[units::cut_middle(text, width)];
    if (same.size() < 2) {
      line[c] = units::cut_middle(text, width);
      continue;
    }
    // Where this text first differs from the others that read the same (the furthest of those).
    std::size_t at = 0;
    for (const std::string& other : same) {
      if (other == text) continue;
      const auto diff = std::mismatch(text.begin(), text.end(), other.begin(), other.end()).first;
      at = std::max(
          at, units::code_points(std::string_view(text).substr(0, static_cast<std::size_t>(diff - text.begin()))));
    }
    line[c] = units::cut_around(text, width, at);
  }
}

std::string_view note_prefix(NoteLevel level) {
  switch (level) {
    case NoteLevel::kWarning:
      return "WARNING: ";
    case NoteLevel::kDataLoss:
      return "DATA LOSS: ";
    case NoteLevel::kInfo:
      break;
  }
  return "note: ";
}

void render_table(const Report& r, std::ostream& out, const TableOptions& t) {
  const std::size_t ncol = r.columns.size();
  const std::vector<ColumnLayout> layout = layout_columns(r, t);

  std::vector<std::vector<std::string>> cells;
  cells.reserve(r.rows.size());
  for (const Row& row : r.rows) {
    std::vector<std::string> line(ncol);
    for (std::size_t c = 0; c < ncol && c < row.size(); ++c)
      line[c] = layout_cell(row[c], layout[c], r.columns[c].kind == ColumnKind::kQuantity);
    for (std::size_t c = row.size(); c < ncol; ++c) line[c] = "-";
    cells.push_back(std::move(line));
  }
  for (std::size_t c = 0; c < ncol; ++c)
    if (r.columns[c].type == ColumnType::kText) cut_text_column(cells, c, t.name_width);

  std::vector<std::string> headers(ncol);
  std::vector<std::size_t> width(ncol);
  for (std::size_t c = 0; c < ncol; ++c) {
    headers[c] = one_line(layout[c].header);
    width[c] = display_width(headers[c]);
    for (const auto& line : cells) width[c] = std::max(width[c], display_width(line[c]));
  }

  auto write_line = [&](const std::vector<std::string>& line) {
    std::string text;
    for (std::size_t c = 0; c < ncol; ++c) {
      if (c > 0) text += "  ";
      const std::string pad(width[c] - display_width(line[c]), ' ');
      text += is_numeric(r.columns[c]) ? pad + line[c] : line[c] + pad;
    }
    text.erase(text.find_last_not_of(' ') + 1);
    out << text << '\n';
  };

  std::string title = r.title.empty() ? r.name : r.title;
  if (!r.title.empty() && !r.name.empty()) title += " (" + r.name + ")";
  out << one_line(std::move(title)) << "\n\n";
  if (ncol > 0) {
    write_line(headers);
    std::vector<std::string> dashes(ncol);
    for (std::size_t c = 0; c < ncol; ++c) dashes[c] = std::string(width[c], '-');
    write_line(dashes);
    for (const auto& line : cells) write_line(line);
  }
  if (!r.notes.empty()) out << '\n';
  for (const Note& n : r.notes) out << note_prefix(n.level) << one_line(n.text) << '\n';
}

bool is_control(char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; }

// The one place csv text is written: valid UTF-8, quoted when it holds a separator, a quote
// or any control character (kept as data, but inside quotes).
std::string csv_field(std::string_view raw) {
  std::string s = valid_utf8(raw) ? std::string(raw) : repair_utf8(raw);
  if (std::none_of(s.begin(), s.end(), [](char ch) { return ch == ',' || ch == '"' || is_control(ch); })) return s;
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"') q += '"';
    q += ch;
  }
  q += '"';
  return q;
}

std::string csv_cell(const Cell& cell) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "";
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          if (std::isnan(v)) return "";
          if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
          return fmt::format("{}", v);
        } else {
          return csv_field(v);
        }
      },
      cell);
}

void render_csv(const Report& r, std::ostream& out) {
  for (std::size_t c = 0; c < r.columns.size(); ++c) out << (c ? "," : "") << csv_field(header_text(r.columns[c]));
  out << '\n';
  for (const Row& row : r.rows) {
    for (std::size_t c = 0; c < r.columns.size(); ++c)
      out << (c ? "," : "") << (c < row.size() ? csv_cell(row[c]) : std::string());
    out << '\n';
  }
}

std::string md_escape(std::string s) {
  s = one_line(std::move(s));
  std::string out;
  // Backslash-escape the punctuation GitHub markdown would act on: '|' ends a
  // cell, '<' starts HTML (a template name like vec<float> would vanish), '*'
  // and '_' emphasise (float*, float*), '[' links, '`' code, '~' strikes.
  for (char ch : s) {
    if (std::string_view("\\|<>*_[]`~").find(ch) != std::string_view::npos) out += '\\';
    out += ch;
  }
  return out;
}

void render_markdown(const Report& r, std::ostream& out, const TableOptions& t) {
  out << "### " << md_escape(r.title.empty() ? r.name : r.title) << "\n\n";
  const std::size_t ncol = r.columns.size();
  if (ncol > 0) {
    const std::vector<ColumnLayout> layout = layout_columns(r, t);
    out << '|';
    for (const ColumnLayout& l : layout) out << ' ' << md_escape(l.header) << " |";
    out << "\n|";
    for (const Column& c : r.columns) out << (is_numeric(c) ? "---:|" : "---|");
    out << '\n';
    for (const Row& row : r.rows) {
      out << '|';
      for (std::size_t c = 0; c < ncol; ++c)
        out << ' ' << (c < row.size() ? md_escape(layout_cell(row[c], layout[c], false)) : "-") << " |";
      out << '\n';
    }
  }
  if (!r.notes.empty()) out << '\n';
  for (const Note& n : r.notes) {
    switch (n.level) {
      case NoteLevel::kInfo:
        out << "- note: ";
        break;
      case NoteLevel::kWarning:
        out << "- **WARNING:** ";
        break;
      case NoteLevel::kDataLoss:
        out << "- **DATA LOSS:** ";
        break;
    }
    out << md_escape(n.text) << '\n';
  }
}

using Json = nlohmann::ordered_json;

std::string_view type_name(ColumnType t) {
  switch (t) {
    case ColumnType::kInteger:
      return "integer";
    case ColumnType::kReal:
      return "real";
    case ColumnType::kText:
      break;
  }
  return "text";
}

std::string_view level_name(NoteLevel l) {
  switch (l) {
    case NoteLevel::kWarning:
      return "warning";
    case NoteLevel::kDataLoss:
      return "data_loss";
    case NoteLevel::kInfo:
      break;
  }
  return "info";
}

Json json_cell(const Cell& cell) {
  return std::visit(
      [](const auto& v) -> Json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, double>) {
          return std::isfinite(v) ? Json(v) : Json(nullptr);
        } else {
          return Json(v);
        }
      },
      cell);
}

Json to_json(const Report& r) {
  Json j;
  j["name"] = r.name;
  j["title"] = r.title;
  j["columns"] = Json::array();
  for (const Column& c : r.columns) {
    Json jc{{"name", c.name}, {"unit", c.unit}, {"type", type_name(c.type)}};
    if (c.kind == ColumnKind::kIdentifier) jc["identifier"] = true;
    j["columns"].push_back(std::move(jc));
  }
  j["rows"] = Json::array();
  for (const Row& row : r.rows) {
    Json jr = Json::array();
    for (const Cell& cell : row) jr.push_back(json_cell(cell));
    j["rows"].push_back(std::move(jr));
  }
  j["notes"] = Json::array();
  for (const Note& n : r.notes) j["notes"].push_back(Json{{"level", level_name(n.level)}, {"text", n.text}});
  return j;
}

void write_json(const Json& j, std::ostream& out) {
  // replace: invalid UTF-8 (a corrupt name) must not make the whole output fail.
  out << j.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
}

// {"schema_version", "command", "reports": {name: report}} (header: "Documents").
Json json_document(std::span<const Report> reports, const DocumentOptions& document) {
  Json doc;
  doc["schema_version"] = kDocumentSchemaVersion;
  doc["command"] = document.command;
  doc["reports"] = Json::object();
  for (const Report& r : reports) {
    std::string key = r.name;
    for (int n = 2; doc["reports"].contains(key); ++n) key = r.name + "#" + std::to_string(n);
    doc["reports"][key] = to_json(r);
  }
  return doc;
}

// Several reports as one csv table: "section", then the union of the headers.
void render_csv_sections(std::span<const Report> reports, std::ostream& out) {
  std::vector<std::string> headers;          // the union, in order of first appearance
  std::vector<std::vector<std::size_t>> at;  // at[report][column] → index in headers
  for (const Report& r : reports) {
    std::vector<std::size_t> index;
    for (const Column& c : r.columns) {
      const std::string h = header_text(c);
      // The k-th use of a header in this report takes the k-th column of that header.
      const auto uses = static_cast<std::size_t>(
          std::count_if(index.begin(), index.end(), [&](std::size_t i) { return headers[i] == h; }));
      std::size_t seen = 0, found = headers.size();
      for (std::size_t i = 0; i < headers.size(); ++i) {
        if (headers[i] == h && seen++ == uses) {
          found = i;
          break;
        }
      }
      if (found == headers.size()) headers.push_back(h);
      index.push_back(found);
    }
    at.push_back(std::move(index));
  }
  out << "section";
  for (const std::string& h : headers) out << ',' << csv_field(h);
  out << '\n';
  for (std::size_t ri = 0; ri < reports.size(); ++ri) {
    const Report& r = reports[ri];
    for (const Row& row : r.rows) {
      std::vector<std::string> cells(headers.size());
      for (std::size_t c = 0; c < r.columns.size() && c < row.size(); ++c) cells[at[ri][c]] = csv_cell(row[c]);
      out << csv_field(r.name);
      for (const std::string& cell : cells) out << ',' << cell;
      out << '\n';
    }
  }
}

}  // namespace

nlohmann::ordered_json report_json(const Report& report) { return to_json(report); }

Format parse_format(std::string_view text) {
  if (text == "table") return Format::kTable;
  if (text == "csv") return Format::kCsv;
  if (text == "json") return Format::kJson;
  if (text == "markdown") return Format::kMarkdown;
  throw std::invalid_argument("unknown output format '" + std::string(text) + "' (valid: table, csv, json, markdown)");
}

std::string_view format_name(Format format) {
  switch (format) {
    case Format::kCsv:
      return "csv";
    case Format::kJson:
      return "json";
    case Format::kMarkdown:
      return "markdown";
    case Format::kTable:
      break;
  }
  return "table";
}

std::string group_thousands(std::int64_t value) { return group_digits(std::to_string(value)); }

std::string one_line(std::string s) {
  if (!valid_utf8(s)) s = repair_utf8(s);
  // C1 controls (U+0080..U+009F) are C2 80..C2 9F in UTF-8; some terminals act on them too.
  const auto is_c1 = [&](std::size_t i) {
    return s[i] == '\xC2' && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9F;
  };
  bool plain = true;
  for (std::size_t i = 0; i < s.size() && plain; ++i) plain = !is_control(s[i]) && !is_c1(i);
  if (plain) return s;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 8);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (is_control(ch)) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else if (is_c1(i)) {
      const auto c1 = static_cast<unsigned char>(s[++i]);
      out += "\\u00";
      out += kHex[c1 >> 4];
      out += kHex[c1 & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}

std::string markdown_text(std::string s) { return md_escape(std::move(s)); }

void render(const Report& report, Format format, std::ostream& out, const TableOptions& table) {
  switch (format) {
    case Format::kTable:
      render_table(report, out, table);
      break;
    case Format::kCsv:
      render_csv(report, out);
      break;
    case Format::kJson:
      write_json(to_json(report), out);
      break;
    case Format::kMarkdown:
      render_markdown(report, out, table);
      break;
  }
}

void render(std::span<const Report> reports, Format format, std::ostream& out, const DocumentOptions& document) {
  switch (format) {
    case Format::kJson:
      write_json(json_document(reports, document), out);
      return;
    case Format::kCsv:
      if (reports.size() == 1 && !document.csv_section) {
        render_csv(reports.front(), out);
      } else {
        render_csv_sections(reports, out);
      }
      return;
    case Format::kTable:
    case Format::kMarkdown:
      break;
  }
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (i > 0) out << '\n';
    render(reports[i], format, out, document.table);
  }
}

}  // namespace gpuscope::render
