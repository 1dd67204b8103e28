#include "core/comm_intervals.hpp"

#include <algorithm>
#include <cmath>

#include "core/saturating.hpp"

namespace gpuscope::core {

std::vector<Interval> clip_intervals(std::span<const Interval> intervals, Interval window) {
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    const Interval c{std::max(i.start_ns, window.start_ns), std::min(i.end_ns, window.end_ns)};
    if (c.end_ns > c.start_ns) out.push_back(c);
  }
  return out;
}

std::int64_t overlap_length(std::vector<Interval> a, std::vector<Interval> b) {
  const std::vector<Interval> ua = stats::interval_union(std::move(a));
  const std::vector<Interval> ub = stats::interval_union(std::move(b));
  std::int64_t total = 0;
  std::size_t i = 0, j = 0;
  while (i < ua.size() && j < ub.size()) {
    const std::int64_t s = std::max(ua[i].start_ns, ub[j].start_ns);
    const std::int64_t e = std::min(ua[i].end_ns, ub[j].end_ns);
    if (e > s) core::add_span(total, e, s);
    (ua[i].end_ns < ub[j].end_ns ? i : j)++;
  }
  return total;
}

std::vector<Interval> gaps(std::vector<Interval> busy, Interval window) {
  std::vector<Interval> out;
  if (window.end_ns <= window.start_ns) return out;
  std::int64_t at = window.start_ns;
  for (const Interval& b : stats::interval_union(clip_intervals(busy, window))) {
    if (b.start_ns > at) out.push_back({at, b.start_ns});
    at = std::max(at, b.end_ns);
  }
  if (at < window.end_ns) out.push_back({at, window.end_ns});
  return out;
}

double OverlapSplit::overlap_percent() const {
  return comm_ns > 0 ? static_cast<double>(overlapped_ns) / static_cast<double>(comm_ns) * 100.0 : std::nan("");
}

OverlapSplit& OverlapSplit::operator+=(const OverlapSplit& o) {
  window_ns = sat_add(window_ns, o.window_ns);
  compute_ns = sat_add(compute_ns, o.compute_ns);
  comm_ns = sat_add(comm_ns, o.comm_ns);
  overlapped_ns = sat_add(overlapped_ns, o.overlapped_ns);
  exposed_ns = sat_add(exposed_ns, o.exposed_ns);
  return *this;
}

OverlapSplit split_overlap(std::span<const Interval> compute, std::span<const Interval> comm, Interval window) {
  OverlapSplit s;
  if (window.end_ns <= window.start_ns) return s;
  s.window_ns = sat_sub(window.end_ns, window.start_ns);
  std::vector<Interval> cp = clip_intervals(compute, window);
  std::vector<Interval> cm = clip_intervals(comm, window);
  s.compute_ns = stats::union_length(cp);
  s.comm_ns = stats::union_length(cm);
  s.overlapped_ns = overlap_length(std::move(cp), std::move(cm));
  s.exposed_ns = s.comm_ns - s.overlapped_ns;
  return s;
}

std::optional<Arrivals> arrivals(std::span<const std::int64_t> arrival_ns) {
  if (arrival_ns.empty()) return std::nullopt;
  Arrivals a;
  std::int64_t first = arrival_ns[0];
  for (std::size_t i = 0; i < arrival_ns.size(); ++i) {
    if (arrival_ns[i] > arrival_ns[a.last]) a.last = i;
    first = std::min(first, arrival_ns[i]);
  }
  const std::int64_t last = arrival_ns[a.last];
  std::optional<std::int64_t> next;  // the latest arrival of the others
  for (std::size_t i = 0; i < arrival_ns.size(); ++i)
    if (i != a.last && (!next || arrival_ns[i] > *next)) next = arrival_ns[i];
  a.lateness_ns = next ? sat_sub(last, *next) : 0;
  a.spread_ns = sat_sub(last, first);
  a.wait_ns.reserve(arrival_ns.size());
  for (const std::int64_t t : arrival_ns) a.wait_ns.push_back(sat_sub(last, t));
  return a;
}

std::optional<std::size_t> longest_run_start(std::span<const std::int64_t> items, std::int64_t who,
                                             std::size_t min_run) {
  if (min_run == 0) return std::nullopt;
  std::size_t run = 0, best = 0, best_start = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    run = items[i] == who ? run + 1 : 0;
    if (run > best) best = run, best_start = i + 1 - run;
  }
  if (best < min_run) return std::nullopt;
  return best_start;
}

}  // namespace gpuscope::core
