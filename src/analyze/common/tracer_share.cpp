#include "analyze/common/tracer_share.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "core/saturating.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze::detail {
namespace {

std::optional<std::string> meta_value(store::Database& db, std::string_view key) {
  store::Statement st = db.prepare("SELECT value FROM meta WHERE key = ?");
  st.bind(1, key);
  if (!st.step() || st.is_null(0)) return std::nullopt;
  return st.column_text(0);
}

std::string_view trimmed(std::string_view s) {
  constexpr std::string_view kBlanks = " \t\r\n";
  const std::size_t first = s.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kBlanks) - first + 1);
}

}  // namespace

std::optional<double> parse_cost_ns(std::string_view text) {
  const std::string_view t = trimmed(text);
  double v = 0.0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc{} || end != t.data() + t.size()) return std::nullopt;
  if (!std::isfinite(v) || v < 0.0) return std::nullopt;
  return v;
}

TracerCost tracer_cost(store::Database& db) {
  TracerCost out;
  if (const auto v = meta_value(db, "tracer_launch_cost_ns")) out.launch_ns = parse_cost_ns(*v);
  if (const auto v = meta_value(db, "tracer_api_cost_ns")) out.api_ns = parse_cost_ns(*v);
  out.method = std::string(trimmed(meta_value(db, "tracer_cost_method").value_or("")));
  if (const auto v = meta_value(db, "tracer_torch_op_cost_ns")) out.torch_op_ns = parse_cost_ns(*v);
  if (const auto v = meta_value(db, "tracer_torch_module_cost_ns")) out.torch_module_ns = parse_cost_ns(*v);
  return out;
}

std::int64_t whole_cost_ns(std::optional<double> cost_ns) { return cost_ns ? std::llround(*cost_ns) : 0; }

std::vector<stats::Interval> without_tracer_cost(std::span<const stats::Interval> calls, std::int64_t cost_ns) {
  std::vector<stats::Interval> out;
  out.reserve(calls.size());
  for (const stats::Interval& c : calls)
    out.push_back({c.start_ns, std::max(c.start_ns, core::sat_sub(c.end_ns, cost_ns))});
  return out;
}

std::int64_t gap_without_tracer_cost(std::int64_t gap_ns, std::int64_t cost_ns) {
  return std::max<std::int64_t>(0, core::sat_sub(gap_ns, cost_ns));
}

std::optional<double> tracer_time_ns(const TracerCost& cost, std::int64_t launch_calls, std::int64_t other_calls,
                                     std::int64_t torch_ops, std::int64_t torch_modules) {
  if (!cost.launch_ns) return std::nullopt;
  return static_cast<double>(launch_calls) * *cost.launch_ns +
         static_cast<double>(other_calls) * cost.api_ns.value_or(0.0) +
         static_cast<double>(torch_ops) * cost.torch_op_ns.value_or(0.0) +
         static_cast<double>(torch_modules) * cost.torch_module_ns.value_or(0.0);
}

void add_torch_overheads(store::Database& db, std::string_view table, const std::optional<double>& cost_ns,
                         const stats::Interval& wall, std::vector<Overhead>& out) {
  if (!cost_ns || *cost_ns <= 0 || !db.has_table(table)) return;
  store::Statement st =
      db.prepare("SELECT e.start_ns FROM " + std::string(table) +
                 " t JOIN nvtx_events e ON e.id = t.nvtx_id WHERE e.start_ns >= ?1 AND e.start_ns < ?2");
  st.bind(1, wall.start_ns);
  st.bind(2, wall.end_ns);
  while (st.step()) out.push_back({st.column_int(0), *cost_ns});
}

void add_api_overheads(store::Database& db, const std::optional<double>& cost_ns, const stats::Interval& wall,
                       std::span<const std::pair<std::int64_t, std::int64_t>> launch_ids, std::vector<Overhead>& out) {
  if (!cost_ns || *cost_ns <= 0 || !db.has_table("api_calls")) return;
  store::Statement st =
      db.prepare("SELECT pid, correlation_id, start_ns FROM api_calls WHERE start_ns >= ?1 AND start_ns < ?2");
  st.bind(1, wall.start_ns);
  st.bind(2, wall.end_ns);
  while (st.step())
    if (!std::binary_search(launch_ids.begin(), launch_ids.end(), std::make_pair(st.column_int(0), st.column_int(1))))
      out.push_back({st.column_int(2), *cost_ns});
}

std::int64_t critical_overhead_ns(std::vector<Overhead> overheads, const stats::Interval& wall,
                                  const std::vector<stats::Interval>& busy, const std::vector<std::int64_t>& waits) {
  std::sort(overheads.begin(), overheads.end(), [](const Overhead& a, const Overhead& b) { return a.at_ns < b.at_ns; });
  // The idle gaps of W \ B, in order.
  std::vector<stats::Interval> gaps;
  std::int64_t at = wall.start_ns;
  for (const stats::Interval& b : busy) {
    if (b.start_ns > at) gaps.push_back({at, std::min(b.start_ns, wall.end_ns)});
    at = std::max(at, b.end_ns);
  }
  if (wall.end_ns > at) gaps.push_back({at, wall.end_ns});
  double pending = 0.0, taken = 0.0;
  std::size_t o = 0, w = 0;
  for (const stats::Interval& g : gaps) {
    // Everything up to the gap's end, in time order: overheads add, a wait drops what is pending.
    for (;;) {
      const std::int64_t next_overhead = o < overheads.size() ? overheads[o].at_ns : INT64_MAX;
      const std::int64_t next_wait = w < waits.size() ? waits[w] : INT64_MAX;
      if (std::min(next_overhead, next_wait) >= g.end_ns) break;
      if (next_overhead <= next_wait) {
        pending += overheads[o++].ns;
      } else {
        pending = 0.0;
        ++w;
      }
    }
    const double x = std::min(pending, static_cast<double>(g.end_ns - g.start_ns));
    taken += x;
    pending -= x;
  }
  return static_cast<std::int64_t>(std::llround(taken));
}

}  // namespace gpuscope::analyze::detail
