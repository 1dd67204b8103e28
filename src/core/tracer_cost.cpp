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

std::optional<double> tracer_cost_per_call(const std::vector<std::vector<double>>& untraced_runs,
                                           const std::vector<std::vector<double>>& traced_runs) {
  const std::optional<double> a = median_of_run_minima(untraced_runs);
  const std::optional<double> b = median_of_run_minima(traced_runs);
  if (!a || !b) return std::nullopt;
  return std::max(0.0, *b - *a);
}

}  // namespace gpuscope::core
