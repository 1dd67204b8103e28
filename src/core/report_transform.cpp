#include "core/report_transform.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <variant>

namespace gpuscope::core {
namespace {

std::optional<TimeUnit> time_unit_of(std::string_view unit) {
  if (unit == "ns") return TimeUnit::kNs;
  if (unit == "us") return TimeUnit::kUs;
  if (unit == "ms") return TimeUnit::kMs;
  if (unit == "s") return TimeUnit::kS;
  return std::nullopt;
}

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           const auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

std::string header(const Column& c) { return c.unit.empty() ? c.name : c.name + " (" + c.unit + ")"; }

// A cell's place in the order: missing values (NULL, NaN) after every value.
bool is_missing(const Cell& c) {
  if (std::holds_alternative<std::monostate>(c)) return true;
  if (const auto* d = std::get_if<double>(&c)) return std::isnan(*d);
  return false;
}

// a < b for present cells of one column (ints compared exactly, mixed as doubles).
bool less_than(const Cell& a, const Cell& b) {
  if (const auto* sa = std::get_if<std::string>(&a)) {
    const auto* sb = std::get_if<std::string>(&b);
    return sb ? *sa < *sb : false;  // text before nothing else: a column holds one kind
  }
  if (std::holds_alternative<std::int64_t>(a) && std::holds_alternative<std::int64_t>(b))
    return std::get<std::int64_t>(a) < std::get<std::int64_t>(b);
  const auto num = [](const Cell& c) {
    if (const auto* i = std::get_if<std::int64_t>(&c)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&c)) return *d;
    return 0.0;
  };
  return num(a) < num(b);
}

}  // namespace

TimeUnit parse_time_unit(std::string_view text) {
  if (text == "ns" || text == "nsec") return TimeUnit::kNs;
  if (text == "us" || text == "usec" || text == "\xC2\xB5s") return TimeUnit::kUs;
  if (text == "ms" || text == "msec") return TimeUnit::kMs;
  if (text == "s" || text == "sec") return TimeUnit::kS;
  throw std::invalid_argument("unknown time unit '" + std::string(text) + "' (valid: ns, us, ms, s)");
}

std::string_view time_unit_name(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kUs:
      return "us";
    case TimeUnit::kMs:
      return "ms";
    case TimeUnit::kS:
      return "s";
    case TimeUnit::kNs:
      break;
  }
  return "ns";
}

std::int64_t ns_per(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kUs:
      return 1'000;
    case TimeUnit::kMs:
      return 1'000'000;
    case TimeUnit::kS:
      return 1'000'000'000;
    case TimeUnit::kNs:
      break;
  }
  return 1;
}

std::optional<std::size_t> find_column(const Report& report, std::string_view column) {
  for (std::size_t i = 0; i < report.columns.size(); ++i)
    if (iequal(report.columns[i].name, column) || iequal(header(report.columns[i]), column)) return i;
  return std::nullopt;
}

void convert_time_unit(Report& report, TimeUnit unit) {
  for (std::size_t c = 0; c < report.columns.size(); ++c) {
    Column& col = report.columns[c];
    const std::optional<TimeUnit> from = time_unit_of(col.unit);
    if (!from || col.kind != ColumnKind::kQuantity || col.type == ColumnType::kText || *from == unit) continue;
    const std::int64_t from_ns = ns_per(*from), to_ns = ns_per(unit);
    const bool finer = from_ns > to_ns;  // e.g. ms → ns: an exact integer multiple
    const std::int64_t multiple = finer ? from_ns / to_ns : 1;
    const double scale = static_cast<double>(from_ns) / static_cast<double>(to_ns);
    if (!finer) col.type = col.type == ColumnType::kInteger ? ColumnType::kReal : col.type;
    col.unit = std::string(time_unit_name(unit));
    for (Row& row : report.rows) {
      if (c >= row.size()) continue;
      Cell& cell = row[c];
      if (auto* i = std::get_if<std::int64_t>(&cell)) {
        if (finer) {
          *i *= multiple;
        } else {
          cell = static_cast<double>(*i) * scale;
        }
      } else if (auto* d = std::get_if<double>(&cell)) {
        *d *= scale;
      }
    }
  }
}

void sort_rows(Report& report, std::string_view column) {
  const std::optional<std::size_t> found = find_column(report, column);
  if (!found) {
    std::string valid;
    for (const Column& c : report.columns) valid += (valid.empty() ? "" : ", ") + ("'" + c.name + "'");
    throw std::invalid_argument("report " + report.name + " has no column '" + std::string(column) +
                                "' (its columns: " + valid + ")");
  }
  const std::size_t c = *found;
  const Column& col = report.columns[c];
  const bool descending = col.type != ColumnType::kText && col.kind == ColumnKind::kQuantity;
  static const Cell kNull{};
  const auto at = [c](const Row& r) -> const Cell& { return c < r.size() ? r[c] : kNull; };
  std::stable_sort(report.rows.begin(), report.rows.end(), [&](const Row& ra, const Row& rb) {
    const Cell& a = at(ra);
    const Cell& b = at(rb);
    const bool ma = is_missing(a), mb = is_missing(b);
    if (ma || mb) return !ma && mb;  // values before missing ones
    return descending ? less_than(b, a) : less_than(a, b);
  });
}

void keep_top_rows(Report& report, std::int64_t n) {
  if (n < 0) throw std::invalid_argument("--top needs a row count of 0 or more, not " + std::to_string(n));
  if (static_cast<std::size_t>(n) < report.rows.size()) report.rows.resize(static_cast<std::size_t>(n));
}

}  // namespace gpuscope::core
