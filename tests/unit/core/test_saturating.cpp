#include "core/saturating.hpp"

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace gpuscope::core {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

TEST(Saturating, ExactWhereNothingOverflows) {
  // CUPTI timestamps are ns since the epoch (~1.76e18): their differences are exact.
  EXPECT_EQ(sat_sub(1'764'000'000'123'456'789, 1'764'000'000'000'000'000), 123'456'789);
  EXPECT_EQ(sat_add(-5, 3), -2);
  std::int64_t acc = 10;
  add_span(acc, 250, 50);
  EXPECT_EQ(acc, 210);
}

TEST(Saturating, ClampsWhatADamagedTraceWouldOverflow) {
  EXPECT_EQ(sat_add(kMax, 1), kMax);
  EXPECT_EQ(sat_add(kMin, -1), kMin);
  EXPECT_EQ(sat_sub(kMax, -1), kMax);
  EXPECT_EQ(sat_sub(kMin, 1), kMin);
  EXPECT_EQ(sat_sub(5'741'896'010'389'928'865, -5'741'896'010'389'928'865), kMax);
  std::int64_t acc = kMax - 10;
  add_span(acc, kMax, kMin);  // the span itself saturates, then the sum
  EXPECT_EQ(acc, kMax);
}

}  // namespace
}  // namespace gpuscope::core
