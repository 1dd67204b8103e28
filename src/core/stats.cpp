#include "core/stats.hpp"
#include "core/saturating.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuscope::core::stats {

double mean(std::span<const double> samples) {
  if (samples.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0.0;
  for (double x : samples) sum += x;
  return sum / static_cast<double>(samples.size());
}

double median(std::span<const double> samples) {
  if (samples.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v(samples.begin(), samples.end());
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  // The lower middle is the largest element of the lower half.
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2.0;
}

double stddev(std::span<const double> samples) {
  if (samples.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  const double m = mean(samples);
  double sq = 0.0;
  for (double x : samples) sq += (x - m) * (x - m);
  return std::sqrt(sq / static_cast<double>(samples.size() - 1));
}

std::vector<Interval> interval_union(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end_ns <= i.start_ns; });
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    if (!out.empty() && i.start_ns <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, i.end_ns);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

std::int64_t union_length(std::vector<Interval> intervals) {
  std::int64_t total = 0;
  for (const Interval& i : interval_union(std::move(intervals))) core::add_span(total, i.end_ns, i.start_ns);
  return total;
}

}  // namespace gpuscope::core::stats
