#include "core/tracer_cost.hpp"

#include <algorithm>
#include <cmath>

#include "core/stats.hpp"

namespace gpuscope::core {

std::optional<double> median_of_run_minima(const std::vector<std::vector<double>>& runs) {
  if (runs.empty()) return std::nullopt;
  std::vector<double> minima;
  minima.reserve(runs.size());
  for (const std::vector<double>& run : runs) {
    if (run.empty()) return std::nullopt;
    for (double x : run)
      if (!std::isfinite(x) || x < 0) return std::nullopt;
    minima.push_back(*std::min_element(run.begin(), run.end()));
  }
  return stats::median(minima);
}

std::vector<double> paired_run_minima_differences(const std::vector<std::vector<double>>& untraced_runs,
                                                  const std::vector<std::vector<double>>& traced_runs) {
  std::vector<double> out;
  if (untraced_runs.size() != traced_runs.size() || !median_of_run_minima(untraced_runs) ||
      !median_of_run_minima(traced_runs))
    return out;  // median_of_run_minima checks each run (empty, not finite, negative)
  for (std::size_t i = 0; i < traced_runs.size(); ++i)
    out.push_back(*std::min_element(traced_runs[i].begin(), traced_runs[i].end()) -
                  *std::min_element(untraced_runs[i].begin(), untraced_runs[i].end()));
  return out;
}

std::optional<double> tracer_cost_per_call(const std::vector<std::vector<double>>& untraced_runs,
                                           const std::vector<std::vector<double>>& traced_runs) {
  const std::vector<double> pairs = paired_run_minima_differences(untraced_runs, traced_runs);
  if (pairs.empty()) return std::nullopt;
  return std::max(0.0, stats::median(pairs));
}

}  // namespace gpuscope::core
