#include "core/tracer_cost.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace gpuscope::core {
namespace {

using Runs = std::vector<std::vector<double>>;

TEST(TracerCost, MedianOverPairsOfEachRunsFastestBlock) {
  // Hand-computed: pairs' minima (untraced, traced) (4.2, 4.5), (4.4, 6.1), (4.3, 5.9) ->
  // differences 0.3, 1.7, 1.6 -> median 1.6. The sides' medians (5.9 - 4.3) happen to agree here.
  const Runs untraced{{5.0, 4.2, 6.5}, {4.4, 7.0}, {4.3, 4.9}};
  const Runs traced{{4.5, 9.7}, {6.1, 6.4}, {7.2, 5.9}};
  ASSERT_TRUE(tracer_cost_per_call(untraced, traced).has_value());
  EXPECT_DOUBLE_EQ(*tracer_cost_per_call(untraced, traced), 5.9 - 4.3);
  const std::vector<double> pairs = paired_run_minima_differences(untraced, traced);
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_NEAR(pairs[0], 0.3, 1e-12);
  EXPECT_NEAR(pairs[1], 1.7, 1e-12);
  EXPECT_NEAR(pairs[2], 1.6, 1e-12);
  // An even count: the mean of the two middle values (median_of_run_minima: 4.2 and 4.4).
  EXPECT_DOUBLE_EQ(*median_of_run_minima({{5.0, 4.2}, {4.4}}), 4.3);
  EXPECT_DOUBLE_EQ(*tracer_cost_per_call({{5.0, 4.2}, {4.4}}, {{6.1}, {5.9, 8.0}}), ((6.1 - 4.2) + (5.9 - 4.4)) / 2);
}

TEST(TracerCost, PairingCancelsAMachineThatMovesBetweenPairs) {
  // The 2026-12-07 calibration on an H100 (fastest blocks, ns a launch, in run order): the
  // machine slowed after the first pair. The sides' medians differ by 4,478 - 4,202 = 276 ns; the
  // pairs by 1,085, 5 and 1,430 ns: median 1,085.
  const Runs untraced{{3393}, {4202}, {4227}};
  const Runs traced{{4478}, {4207}, {5657}};
  EXPECT_DOUBLE_EQ(*median_of_run_minima(traced) - *median_of_run_minima(untraced), 276.0);
  EXPECT_DOUBLE_EQ(*tracer_cost_per_call(untraced, traced), 1085.0);
}

TEST(TracerCost, NegativeDifferenceIsClampedToZero) { EXPECT_EQ(tracer_cost_per_call({{4.2}}, {{4.1, 4.3}}), 0.0); }

TEST(TracerCost, EmptyOrBadSamplesGiveNoEstimate) {
  const Runs ok{{4.0}};
  EXPECT_FALSE(tracer_cost_per_call({}, ok).has_value());
  EXPECT_FALSE(tracer_cost_per_call(ok, {}).has_value());
  EXPECT_FALSE(tracer_cost_per_call(ok, {{4.0}, {}}).has_value());
  EXPECT_FALSE(tracer_cost_per_call(ok, {{std::nan("")}}).has_value());
  EXPECT_FALSE(tracer_cost_per_call({{-1.0}}, ok).has_value());
  EXPECT_FALSE(tracer_cost_per_call({{4.0}, {4.1}}, ok).has_value());  // a run without its partner
  EXPECT_TRUE(paired_run_minima_differences({{4.0}, {4.1}}, ok).empty());
}

}  // namespace
}  // namespace gpuscope::core
