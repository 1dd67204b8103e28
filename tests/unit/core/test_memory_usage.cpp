#include "core/memory_usage.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace gpuscope::core {
namespace {

constexpr std::int64_t kMiB = 1 << 20;

TEST(GpuMemorySum, SumsTheLatestLevelOfEveryProcessOnTheGpu) {
  GpuMemorySum sum;
  EXPECT_EQ(sum.total(0), 0);
  EXPECT_EQ(sum.update(0, 100, 0, 2 * kMiB), 2 * kMiB);
  EXPECT_EQ(sum.update(0, 200, 0, 20 * kMiB), 22 * kMiB);  // another process on GPU 0
  EXPECT_EQ(sum.update(1, 100, 1, 4 * kMiB), 4 * kMiB);    // GPU 1 apart
  EXPECT_EQ(sum.update(0, 100, 0, 6 * kMiB), 26 * kMiB);   // a level replaces, never adds
  EXPECT_EQ(sum.update(0, 200, 0, 0), 6 * kMiB);
  EXPECT_EQ(sum.total(0), 6 * kMiB);
  EXPECT_EQ(sum.total(1), 4 * kMiB);
}

TEST(GpuMemorySum, DamagedLevelsNeitherOverflowNorGoNegative) {
  GpuMemorySum sum;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(sum.update(0, 1, 0, kMax), kMax);
  EXPECT_EQ(sum.update(0, 2, 0, kMax), kMax);  // saturates
  EXPECT_EQ(sum.update(0, 3, 0, -5), kMax);    // a negative level counts as 0
  EXPECT_GE(sum.update(0, 1, 0, 0), 0);
}

std::vector<MemoryLevel> series() {
  // alloc 2 MiB at 10, alloc 20 MiB at 20, free 2 MiB at 30, alloc 4 MiB at 40, free all at 50/60.
  return {{10, 2 * kMiB}, {20, 22 * kMiB}, {30, 20 * kMiB}, {40, 24 * kMiB}, {50, 4 * kMiB}, {60, 0}};
}

TEST(PeakIn, HighestLevelInsideTheWindowFirstReached) {
  const WindowPeak p = peak_in(series(), 0, 100);
  EXPECT_EQ(p.start_bytes, 0);
  EXPECT_EQ(p.peak_bytes, 24 * kMiB);
  EXPECT_EQ(p.peak_ns, 40);
  ASSERT_TRUE(p.peak_index.has_value());
  EXPECT_EQ(*p.peak_index, 3u);
  EXPECT_EQ(p.end_bytes, 0);
  EXPECT_EQ(p.first, 0u);
  EXPECT_EQ(p.last, 6u);
}

TEST(PeakIn, TheLevelEnteringTheWindowCounts) {
  // [31, 40): no event inside; 20 MiB allocated before the window are in use during it.
  const WindowPeak p = peak_in(series(), 31, 40);
  EXPECT_EQ(p.start_bytes, 20 * kMiB);
  EXPECT_EQ(p.peak_bytes, 20 * kMiB);
  EXPECT_EQ(p.peak_ns, 31);
  EXPECT_FALSE(p.peak_index.has_value());
  EXPECT_EQ(p.end_bytes, 20 * kMiB);
  EXPECT_EQ(p.first, p.last);
}

TEST(PeakIn, HalfOpenWindowAndTies) {
  // [20, 40): the events at 20 and 30, not the one at 40.
  WindowPeak p = peak_in(series(), 20, 40);
  EXPECT_EQ(p.start_bytes, 2 * kMiB);
  EXPECT_EQ(p.peak_bytes, 22 * kMiB);
  EXPECT_EQ(p.peak_ns, 20);
  EXPECT_EQ(p.end_bytes, 20 * kMiB);
  EXPECT_EQ(p.last - p.first, 2u);
  // A level equal to the entering one does not move the peak: the earliest is kept.
  const std::vector<MemoryLevel> flat = {{10, 8}, {20, 8}, {30, 8}};
  p = peak_in(flat, 15, 40);
  EXPECT_EQ(p.peak_bytes, 8);
  EXPECT_FALSE(p.peak_index.has_value());
  EXPECT_EQ(p.peak_ns, 15);
}

TEST(PeakIn, EmptySeriesAndEmptyWindow) {
  const WindowPeak none = peak_in({}, 0, 10);
  EXPECT_EQ(none.peak_bytes, 0);
  EXPECT_EQ(none.start_bytes, 0);
  EXPECT_EQ(none.end_bytes, 0);
  const WindowPeak empty = peak_in(series(), 45, 45);  // end <= start: the entering level only
  EXPECT_EQ(empty.peak_bytes, 24 * kMiB);
  EXPECT_EQ(empty.first, empty.last);
  EXPECT_EQ(empty.end_bytes, 24 * kMiB);
}

}  // namespace
}  // namespace gpuscope::core
