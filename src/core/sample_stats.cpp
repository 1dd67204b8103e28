#include "core/sample_stats.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/stats.hpp"

namespace gpuscope::core::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kZ995 = 2.5758293035489004;  // standard normal quantile at 0.995

// The k-th smallest (0-based) of v; v is reordered.
double kth(std::vector<double>& v, std::size_t k) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

// Whether the O(n) convergence test runs at sample count n (see the header).
bool convergence_check_due(std::size_t n) {
  const int log2n = std::bit_width(n) - 1;
  const int shift = std::max(0, log2n - 6);
  return n % (std::size_t{1} << shift) == 0;
}

}  // namespace

double median_stderr(std::span<const double> samples) {
  const std::size_t n = samples.size();
  if (n < 3) return kNaN;
  const double nd = static_cast<double>(n);
  // 1-based order-statistic index c of McKean & Schrader (1984), as Wilcox's msmedse.
  double c = std::round((nd + 1.0) / 2.0 - kZ995 * std::sqrt(nd / 4.0));
  c = std::clamp(c, 1.0, std::floor((nd + 1.0) / 2.0));
  const auto lo = static_cast<std::size_t>(c) - 1;  // x(c), 0-based
  const std::size_t hi = n - lo - 1;                // x(n - c + 1), 0-based
  std::vector<double> v(samples.begin(), samples.end());
  const double x_hi = kth(v, hi);
  // nth_element leaves everything below index hi no greater than v[hi].
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.begin() + static_cast<std::ptrdiff_t>(hi));
  const double x_lo = v[lo];
  return (x_hi - x_lo) / (2.0 * kZ995);
}

double median_rel_stderr(std::span<const double> samples) {
  if (samples.size() < 3) return kNaN;
  const double m = median(samples);
  if (!std::isfinite(m) || m <= 0.0) return kNaN;
  return median_stderr(samples) / m;
}

std::string_view stop_rule_name(StopRule rule) {
  switch (rule) {
    case StopRule::kContinue:
      return "continue";
    case StopRule::kConverged:
      return "converged";
    case StopRule::kBudget:
      return "budget";
    case StopRule::kMaxSamples:
      return "max_samples";
  }
  return "continue";
}

StopRule stop_rule(std::span<const double> samples, double elapsed_s, double max_rel_stderr, double budget_s,
                   int min_samples, int max_samples) {
  if (!(max_rel_stderr >= 0.0))
    throw std::invalid_argument("stop rule: max_rel_stderr must be >= 0 (got " + std::to_string(max_rel_stderr) +
                                "); 0.005 means 0.5 %");
  if (!(budget_s > 0.0))
    throw std::invalid_argument("stop rule: budget_s must be > 0 s (got " + std::to_string(budget_s) + ")");
  if (min_samples < 1)
    throw std::invalid_argument("stop rule: min_samples must be >= 1 (got " + std::to_string(min_samples) + ")");
  if (max_samples < min_samples)
    throw std::invalid_argument("stop rule: max_samples (" + std::to_string(max_samples) +
                                ") must be >= min_samples (" + std::to_string(min_samples) + ")");
  const std::size_t n = samples.size();
  const bool stopping_anyway = n >= static_cast<std::size_t>(max_samples) || elapsed_s >= budget_s;
  if (n >= static_cast<std::size_t>(min_samples) && (convergence_check_due(n) || stopping_anyway)) {
    const double rel = median_rel_stderr(samples);
    if (rel <= max_rel_stderr) return StopRule::kConverged;  // false for NaN
  }
  if (n >= static_cast<std::size_t>(max_samples)) return StopRule::kMaxSamples;
  if (elapsed_s >= budget_s) return StopRule::kBudget;
  return StopRule::kContinue;
}

}  // namespace gpuscope::core::stats
