#include "core/tracer_cost.hpp"

#include <algorithm>
#include <cmath>

namespace gpuscope::core {
namespace {

std::optional<double> checked_min(std::span<const double> v) {
  if (v.empty()) return std::nullopt;
  for (double x : v)
    if (!std::isfinite(x) || x < 0) return std::nullopt;
  return *std::min_element(v.begin(), v.end());
}

}  // namespace

std::optional<double> tracer_cost_per_call(std::span<const double> untraced_per_call,
                                           std::span<const double> traced_per_call) {
  const std::optional<double> a = checked_min(untraced_per_call);
  const std::optional<double> b = checked_min(traced_per_call);
  if (!a || !b) return std::nullopt;
  return std::max(0.0, *b - *a);
}

}  // namespace gpuscope::core
