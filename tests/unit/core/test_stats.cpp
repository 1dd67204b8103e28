#include "core/stats.hpp"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace gpuscope::core::stats {
namespace {

TEST(Stats, MeanAndMedian) {
  const std::vector<double> odd{5, 1, 3};
  const std::vector<double> even{4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(mean(odd), 3.0);
  EXPECT_DOUBLE_EQ(median(odd), 3.0);
  EXPECT_DOUBLE_EQ(median(even), 2.5);
  EXPECT_TRUE(std::isnan(mean({})));
  EXPECT_TRUE(std::isnan(median({})));
  EXPECT_EQ(odd, (std::vector<double>{5, 1, 3}));  // input untouched
}

TEST(Stats, StddevIsSampleStddevAndNanBelowTwoSamples) {
  const std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};  // mean 5, squares sum 32
  EXPECT_DOUBLE_EQ(stddev(v), std::sqrt(32.0 / 7.0));
  const std::vector<double> one{42};
  EXPECT_TRUE(std::isnan(stddev(one)));
  EXPECT_TRUE(std::isnan(stddev({})));
}

TEST(Stats, IntervalUnionMergesOverlapsAndTouching) {
  const std::vector<Interval> in{{20, 30}, {0, 10}, {5, 15}, {30, 35}, {40, 40}, {50, 45}};
  EXPECT_EQ(interval_union(in), (std::vector<Interval>{{0, 15}, {20, 35}}));
  EXPECT_EQ(union_length(in), 15 + 15);
  EXPECT_EQ(union_length({}), 0);
  EXPECT_EQ(union_length({{0, 100}, {10, 20}}), 100);  // nested
}

}  // namespace
}  // namespace gpuscope::core::stats
