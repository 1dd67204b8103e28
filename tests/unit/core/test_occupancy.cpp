#include "core/occupancy.hpp"

#include <gtest/gtest.h>

namespace gpuscope::core::occupancy {
namespace {

// H100/H200 (cc 9.0): 64 warps, 32 blocks, 65536 registers, 228 KiB shared memory per SM.
DeviceLimits hopper() {
  DeviceLimits d;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.max_warps_per_sm = 64;
  d.max_blocks_per_sm = 32;
  d.max_registers_per_sm = 65536;
  d.max_registers_per_block = 65536;
  d.max_shared_memory_per_sm = 233472;
  d.max_threads_per_block = 1024;
  return d;
}

TEST(Occupancy, FullOccupancyLimitedByWarps) {
  // 8 warps/block: 64/8 = 8 blocks; registers: 32×32 = 1024/warp, 16384/1024 = 16 warps per
  // sub-partition × 4 / 8 = 8 blocks too (a tie: warps first); smem: 233472/1024 = 228.
  const auto o = compute(hopper(), {256, 32, 0});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->active_blocks_per_sm, 8);
  EXPECT_EQ(o->active_warps_per_sm, 64);
  EXPECT_DOUBLE_EQ(o->occupancy_percent, 100.0);
  EXPECT_EQ(o->limiter, Limiter::kWarps);
  EXPECT_EQ(limiter_name(o->limiter), "warps");
}

TEST(Occupancy, RegisterLimited) {
  // 128×32 = 4096 registers/warp; 16384/4096 = 4 warps per sub-partition → 16 warps → 2 blocks.
  const auto o = compute(hopper(), {256, 128, 0});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->active_blocks_per_sm, 2);
  EXPECT_EQ(o->active_warps_per_sm, 16);
  EXPECT_DOUBLE_EQ(o->occupancy_percent, 25.0);
  EXPECT_EQ(o->limiter, Limiter::kRegisters);
}

TEST(Occupancy, RegistersRoundUpToTheAllocationUnit) {
  // 33 registers: 33×32 = 1056 → 1280 per warp; 16384/1280 = 12 warps per sub-partition
  // → 48 warps → 6 blocks of 8 warps = 75 %.
  const auto o = compute(hopper(), {256, 33, 0});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->active_blocks_per_sm, 6);
  EXPECT_DOUBLE_EQ(o->occupancy_percent, 75.0);
  EXPECT_EQ(o->limiter, Limiter::kRegisters);
}

TEST(Occupancy, SharedMemoryLimitedWithReservedKilobyte) {
  // 48 KiB + 1 KiB reserved = 50176 B (a multiple of 128); 233472/50176 = 4 blocks = 32 warps.
  const auto o = compute(hopper(), {256, 32, 48 * 1024});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->active_blocks_per_sm, 4);
  EXPECT_EQ(o->active_warps_per_sm, 32);
  EXPECT_DOUBLE_EQ(o->occupancy_percent, 50.0);
  EXPECT_EQ(o->limiter, Limiter::kSharedMemory);
  EXPECT_EQ(limiter_name(o->limiter), "shared memory");
}

TEST(Occupancy, SharedMemoryRoundsUpToGranularity) {
  // 1 B + 1024 reserved → 1152 B; 233472/1152 = 202 > 32 blocks: the block limit wins
  // for 32-thread blocks (1 warp: 64 by warps).
  const auto o = compute(hopper(), {32, 16, 1});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->active_blocks_per_sm, 32);
  EXPECT_DOUBLE_EQ(o->occupancy_percent, 50.0);
  EXPECT_EQ(o->limiter, Limiter::kBlocks);
  // 57000 B + 1024 = 58024 → 58112; 233472/58112 = 4.
  EXPECT_EQ(compute(hopper(), {32, 16, 57000})->active_blocks_per_sm, 4);
}

TEST(Occupancy, PartialWarpsAndOlderArchitectures) {
  // 100 threads = 4 warps; cc 7.0: no reserved smem, 256 B granularity:
  // 10000 → 10240 B; 98304/10240 = 9 blocks (warps: 64/4 = 16, blocks 32).
  DeviceLimits volta = hopper();
  volta.cc_major = 7;
  volta.max_shared_memory_per_sm = 98304;
  const auto o = compute(volta, {100, 0, 10000});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->active_blocks_per_sm, 9);
  EXPECT_EQ(o->active_warps_per_sm, 36);
  EXPECT_EQ(o->limiter, Limiter::kSharedMemory);
  EXPECT_EQ(arch_constants(6, 0).sub_partitions, 2);
  EXPECT_EQ(arch_constants(9, 0).reserved_shared_memory_per_block, 1024);
}

TEST(Occupancy, BlocksThatDoNotFitAndBadInputs) {
  const auto too_many_regs = compute(hopper(), {256, 256, 0});  // > 255 per thread
  ASSERT_TRUE(too_many_regs);
  EXPECT_EQ(too_many_regs->active_blocks_per_sm, 0);
  EXPECT_EQ(too_many_regs->limiter, Limiter::kRegisters);
  const auto over_block_regs = compute(hopper(), {1024, 128, 0});  // 4096 × 32 warps > 65536
  ASSERT_TRUE(over_block_regs);
  EXPECT_EQ(over_block_regs->active_blocks_per_sm, 0);

  EXPECT_FALSE(compute(hopper(), {0, 32, 0}));
  EXPECT_FALSE(compute(hopper(), {2048, 32, 0}));  // over max_threads_per_block
  EXPECT_FALSE(compute(DeviceLimits{}, {256, 32, 0}));
}

// Found by fuzz_event_log_import: grid dimensions of a damaged log multiplied past 2^63.
TEST(Occupancy, DimsProductIsZeroWhenUnknownOrOverflowing) {
  EXPECT_EQ(dims_product(128, 2, 3), 768);
  EXPECT_EQ(dims_product(2147483647, 65535, 65535), 2147483647LL * 65535 * 65535);  // CUDA's largest grid
  EXPECT_EQ(dims_product(0, 1, 1), 0);
  EXPECT_EQ(dims_product(-1, 1, 1), 0);    // unknown in kernel_profiles
  EXPECT_EQ(dims_product(64, -1, -1), 0);  // two negatives do not make a size
  EXPECT_EQ(dims_product(1120152399291648, 3145728, 1), 0);
  EXPECT_EQ(dims_product(1LL << 40, 1LL << 20, 1LL << 10), 0);
}

}  // namespace
}  // namespace gpuscope::core::occupancy
