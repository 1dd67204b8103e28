// Small statistics helpers shared by analyze/ (trace summary, `gpuscope stats`)
// and bench/. Pure functions, no I/O.
//
// Too few samples is not an error: each function documents what it returns then
// (NaN for an undefined statistic, 0 for an empty union), in the spirit of
// NVBench's statistics.cuh. Inputs are never modified (functions that must sort
// take their argument by value).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gpuscope::core::stats {

/// Arithmetic mean. Empty input → NaN.
[[nodiscard]] double mean(std::span<const double> samples);

/// Median (mean of the two middle values for an even count). Empty input → NaN.
[[nodiscard]] double median(std::span<const double> samples);

/// Unbiased sample standard deviation (divides by n - 1).
/// Fewer than 2 samples → NaN (the spread of one sample is undefined, not zero).
[[nodiscard]] double stddev(std::span<const double> samples);

/// A half-open time interval [start_ns, end_ns) in ns. An interval with
/// end_ns <= start_ns is empty and contributes nothing.
struct Interval {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  friend bool operator==(const Interval&, const Interval&) = default;
};

/// The union of the intervals as disjoint, sorted intervals. Touching intervals
/// ([0,10) and [10,20)) merge. Empty intervals are dropped. O(n log n).
[[nodiscard]] std::vector<Interval> interval_union(std::vector<Interval> intervals);

/// Total length in ns of the union of the intervals: time covered by at least one
/// of them (e.g. GPU busy time when kernels on several streams overlap).
/// Empty input → 0.
[[nodiscard]] std::int64_t union_length(std::vector<Interval> intervals);

}  // namespace gpuscope::core::stats

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
