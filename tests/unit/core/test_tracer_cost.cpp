#include "core/tracer_cost.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace gpuscope::core {
namespace {

using Runs = std::vector<std::vector<double>>;

TEST(TracerCost, MedianOfEachRunsFastestBlock) {
  // Hand-computed: untraced runs' minima 4.2, 4.4, 4.3 -> median 4.3; traced runs' minima 4.5 (a
  // lucky process), 6.1, 5.9 -> median 5.9; cost 1.6. The fastest traced block of all (4.5) would
  // have said 0.3.
  const Runs untraced{{5.0, 4.2, 6.5}, {4.4, 7.0}, {4.3, 4.9}};
  const Runs traced{{4.5, 9.7}, {6.1, 6.4}, {7.2, 5.9}};
  ASSERT_TRUE(tracer_cost_per_call(untraced, traced).has_value());
  EXPECT_DOUBLE_EQ(*tracer_cost_per_call(untraced, traced), 5.9 - 4.3);
  // An even count: the mean of the two middle minima (4.2 and 4.4; 6.1 and 5.9).
  EXPECT_DOUBLE_EQ(*median_of_run_minima({{5.0, 4.2}, {4.4}}), 4.3);
  EXPECT_DOUBLE_EQ(*tracer_cost_per_call({{5.0, 4.2}, {4.4}}, {{6.1}, {5.9, 8.0}}), 6.0 - 4.3);
}

TEST(TracerCost, NegativeDifferenceIsClampedToZero) { EXPECT_EQ(tracer_cost_per_call({{4.2}}, {{4.1, 4.3}}), 0.0); }

TEST(TracerCost, EmptyOrBadSamplesGiveNoEstimate) {
  const Runs ok{{4.0}};
  EXPECT_FALSE(tracer_cost_per_call({}, ok).has_value());
  EXPECT_FALSE(tracer_cost_per_call(ok, {}).has_value());
  EXPECT_FALSE(tracer_cost_per_call(ok, {{4.0}, {}}).has_value());
  EXPECT_FALSE(tracer_cost_per_call(ok, {{std::nan("")}}).has_value());
  EXPECT_FALSE(tracer_cost_per_call({{-1.0}}, ok).has_value());
}

}  // namespace
}  // namespace gpuscope::core
