#include "core/tracer_cost.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace gpuscope::core {
namespace {

TEST(TracerCost, DifferenceOfTheMinima) {
  // Hand-computed: min traced 4.9, min untraced 4.2 -> 0.7 (noisy blocks above the minima ignored).
  const std::vector<double> untraced{5.0, 4.2, 6.5, 4.4};
  const std::vector<double> traced{6.1, 4.9, 9.7};
  ASSERT_TRUE(tracer_cost_per_call(untraced, traced).has_value());
  EXPECT_DOUBLE_EQ(*tracer_cost_per_call(untraced, traced), 4.9 - 4.2);
}

TEST(TracerCost, NegativeDifferenceIsClampedToZero) {
  const std::vector<double> untraced{4.2};
  const std::vector<double> traced{4.1, 4.3};
  EXPECT_EQ(tracer_cost_per_call(untraced, traced), 0.0);
}

TEST(TracerCost, EmptyOrBadSamplesGiveNoEstimate) {
  const std::vector<double> ok{4.0};
  EXPECT_FALSE(tracer_cost_per_call({}, ok).has_value());
  EXPECT_FALSE(tracer_cost_per_call(ok, {}).has_value());
  const std::vector<double> nan{std::nan("")};
  const std::vector<double> negative{-1.0};
  EXPECT_FALSE(tracer_cost_per_call(ok, nan).has_value());
  EXPECT_FALSE(tracer_cost_per_call(negative, ok).has_value());
}

}  // namespace
}  // namespace gpuscope::core
