#include "store/memory_tracker.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace gpuscope::store::detail {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

TEST(MemoryTracker, AllocationsMinusFreesPerDevice) {
  MemoryTracker t;
  auto e = t.alloc(0x1000, 2 * kMiB, 0, true, 1);
  EXPECT_EQ(e.in_use_bytes, std::optional<std::int64_t>(2 * kMiB));
  EXPECT_FALSE(e.alloc_row.has_value());
  e = t.alloc(0x2000, 20 * kMiB, 0, true, 2);
  EXPECT_EQ(e.in_use_bytes, std::optional<std::int64_t>(22 * kMiB));
  e = t.alloc(0x3000, 4 * kMiB, 1, true, 3);  // another device: its own count
  EXPECT_EQ(e.in_use_bytes, std::optional<std::int64_t>(4 * kMiB));
  // The free names its allocation's row and subtracts the allocation's size, whatever
  // the free record says.
  e = t.free(0x1000, 0, true);
  EXPECT_EQ(e.alloc_row, std::optional<std::int64_t>(1));
  EXPECT_EQ(e.bytes, static_cast<std::int64_t>(2 * kMiB));
  EXPECT_EQ(e.in_use_bytes, std::optional<std::int64_t>(20 * kMiB));
  EXPECT_EQ(t.in_use(0), static_cast<std::int64_t>(20 * kMiB));
  EXPECT_EQ(t.in_use(1), static_cast<std::int64_t>(4 * kMiB));
  EXPECT_EQ(t.in_use(7), 0);
  EXPECT_EQ(t.unmatched_frees(), 0u);
  EXPECT_EQ(t.replaced_allocations(), 0u);
}

TEST(MemoryTracker, FreeOfAnUnseenAllocationChangesNothingAndIsCounted) {
  MemoryTracker t;
  (void)t.alloc(0x1000, kMiB, 0, true, 1);
  const auto e = t.free(0x9000, 0, true);  // allocated before recording started
  EXPECT_FALSE(e.alloc_row.has_value());
  EXPECT_FALSE(e.matched);
  EXPECT_EQ(e.bytes, 0);
  EXPECT_EQ(e.in_use_bytes, std::optional<std::int64_t>(kMiB));  // unchanged, never negative
  EXPECT_EQ(t.unmatched_frees(), 1u);
  // A second free of the same address is unmatched too: the first one already released it.
  (void)t.free(0x1000, 0, true);
  const auto again = t.free(0x1000, 0, true);
  EXPECT_EQ(again.in_use_bytes, std::optional<std::int64_t>(0));
  EXPECT_EQ(t.unmatched_frees(), 2u);
}

TEST(MemoryTracker, UncountedKindsAreMatchedButNotInUse) {
  MemoryTracker t;
  auto e = t.alloc(0x5000, 8 * kMiB, 0, /*counted=*/false, 4);  // pinned host memory
  EXPECT_FALSE(e.in_use_bytes.has_value());
  EXPECT_EQ(t.in_use(0), 0);
  e = t.free(0x5000, 0, false);
  EXPECT_EQ(e.alloc_row, std::optional<std::int64_t>(4));
  EXPECT_FALSE(e.in_use_bytes.has_value());
  EXPECT_EQ(t.unmatched_frees(), 0u);
}

TEST(MemoryTracker, AllocationOverALiveOneCountsTheOldAsFreed) {
  MemoryTracker t;
  (void)t.alloc(0x1000, 4 * kMiB, 0, true, 1);
  const auto e = t.alloc(0x1000, 2 * kMiB, 0, true, 2);  // the free in between was lost
  EXPECT_EQ(e.in_use_bytes, std::optional<std::int64_t>(2 * kMiB));
  EXPECT_EQ(t.replaced_allocations(), 1u);
  const auto f = t.free(0x1000, 0, true);
  EXPECT_EQ(f.alloc_row, std::optional<std::int64_t>(2));
  EXPECT_EQ(f.in_use_bytes, std::optional<std::int64_t>(0));
}

TEST(MemoryTracker, AllocationWithoutRowIsStillTracked) {
  // Allocated before a capture window: no row, but it counts and its free subtracts it.
  MemoryTracker t;
  (void)t.alloc(0x1000, 6 * kMiB, 0, true, std::nullopt);
  const auto f = t.free(0x1000, 0, true);
  EXPECT_FALSE(f.alloc_row.has_value());
  EXPECT_TRUE(f.matched);
  EXPECT_EQ(f.bytes, static_cast<std::int64_t>(6 * kMiB));
  EXPECT_EQ(f.in_use_bytes, std::optional<std::int64_t>(0));
  EXPECT_EQ(t.unmatched_frees(), 0u);
}

TEST(MemoryTracker, DamagedSizesSaturate) {
  MemoryTracker t;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  (void)t.alloc(1, std::numeric_limits<std::uint64_t>::max(), 0, true, 1);
  const auto e = t.alloc(2, std::numeric_limits<std::uint64_t>::max(), 0, true, 2);
  EXPECT_EQ(e.in_use_bytes, std::optional<std::int64_t>(kMax));
  const auto f = t.free(1, 0, true);
  EXPECT_EQ(f.in_use_bytes, std::optional<std::int64_t>(0));  // clamped, never negative
}

}  // namespace
}  // namespace gpuscope::store::detail
