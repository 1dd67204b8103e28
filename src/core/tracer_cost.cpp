#include "core/tracer_cost.hpp"

#include <algorithm>
#include <cmath>

#include "core/stats.hpp"

namespace gpuscope::core {

std::optional<std::vector<double>> run_minima(const std::vector<std::vector<double>>& runs) {
  if (runs.empty()) return std::nullopt;
  std::vector<double> minima;
  minima.reserve(runs.size());
  for (const std::vector<double>& run : runs) {
    if (run.empty()) return std::nullopt;
    for (double x : run)
      if (!std::isfinite(x) || x < 0) return std::nullopt;
    minima.push_back(*std::min_element(run.begin(), run.end()));
  }
  return minima;
}

std::optional<double> median_of_run_minima(const std::vector<std::vector<double>>& runs) {
  const std::optional<std::vector<double>> minima = run_minima(runs);
  if (!minima) return std::nullopt;
  return stats::median(*minima);
}

std::vector<double> paired_run_minima_differences(const std::vector<std::vector<double>>& untraced_runs,
                                                  const std::vector<std::vector<double>>& traced_runs) {
  const std::optional<std::vector<double>> untraced = run_minima(untraced_runs), traced = run_minima(traced_runs);
  std::vector<double> out;
  if (!untraced || !traced || untraced->size() != traced->size()) return out;
  for (std::size_t i = 0; i < traced->size(); ++i) out.push_back((*traced)[i] - (*untraced)[i]);
  return out;
}

std::optional<double> tracer_cost_per_call(const std::vector<std::vector<double>>& untraced_runs,
                                           const std::vector<std::vector<double>>& traced_runs) {
  const std::vector<double> pairs = paired_run_minima_differences(untraced_runs, traced_runs);
  if (pairs.empty()) return std::nullopt;
  return std::max(0.0, stats::median(pairs));
}

}  // namespace gpuscope::core
