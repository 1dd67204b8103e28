#include "core/occupancy.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace gpuscope::core::occupancy {
namespace {

constexpr std::int64_t kWarpSize = 32;
constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max();

std::int64_t divide_round_up(std::int64_t x, std::int64_t y) { return (x + y - 1) / y; }
std::int64_t round_up(std::int64_t x, std::int64_t y) { return divide_round_up(x, y) * y; }

}  // namespace

std::int64_t dims_product(std::int64_t x, std::int64_t y, std::int64_t z) {
  if (x <= 0 || y <= 0 || z <= 0) return 0;
  std::int64_t xy = 0;
  std::int64_t xyz = 0;
  if (__builtin_mul_overflow(x, y, &xy) || __builtin_mul_overflow(xy, z, &xyz)) return 0;
  return xyz;
}

std::string_view limiter_name(Limiter limiter) {
  switch (limiter) {
    case Limiter::kWarps:
      return "warps";
    case Limiter::kBlocks:
      return "blocks";
    case Limiter::kRegisters:
      return "registers";
    case Limiter::kSharedMemory:
      return "shared memory";
  }
  return "unknown";
}

ArchConstants arch_constants(int cc_major, int cc_minor) {
  ArchConstants c;
  if (cc_major == 6 && cc_minor == 0) c.sub_partitions = 2;
  if (cc_major < 8) {
    c.shared_memory_granularity = 256;
    c.reserved_shared_memory_per_block = 0;
  }
  return c;
}

std::optional<Occupancy> compute(const DeviceLimits& device, const LaunchConfig& launch) {
  if (launch.block_threads <= 0 || launch.registers_per_thread < 0 || launch.shared_memory_per_block < 0)
    return std::nullopt;
  // Values from a trace: beyond these no GPU exists (CUDA: 1024 threads per block, 255
  // registers per thread, 228 KiB of shared memory), and the products below could overflow.
  constexpr std::int64_t kMaxCount = std::int64_t{1} << 24;  // threads, registers, warps, blocks
  constexpr std::int64_t kMaxBytes = std::int64_t{1} << 40;  // shared memory
  if (launch.block_threads > kMaxCount || launch.registers_per_thread > kMaxCount ||
      launch.shared_memory_per_block > kMaxBytes || device.max_warps_per_sm > kMaxCount ||
      device.max_blocks_per_sm > kMaxCount || device.max_registers_per_sm > kMaxBytes ||
      device.max_registers_per_block > kMaxBytes || device.max_shared_memory_per_sm > kMaxBytes ||
      device.max_threads_per_block > kMaxCount)
    return std::nullopt;
  if (device.max_threads_per_block > 0 && launch.block_threads > device.max_threads_per_block) return std::nullopt;
  if (device.max_warps_per_sm <= 0 || device.max_blocks_per_sm <= 0 || device.max_registers_per_sm <= 0 ||
      device.max_shared_memory_per_sm <= 0)
    return std::nullopt;
  const ArchConstants arch = arch_constants(device.cc_major, device.cc_minor);

  const std::int64_t warps_per_block = divide_round_up(launch.block_threads, kWarpSize);
  const std::int64_t warp_limit = device.max_warps_per_sm / warps_per_block;
  const std::int64_t block_limit = device.max_blocks_per_sm;

  // Registers are allocated per warp, in each SM sub-partition (cudaOccMaxBlocksPerSMRegsLimit).
  std::int64_t register_limit = kUnlimited;
  const std::int64_t regs_per_warp = round_up(launch.registers_per_thread * kWarpSize, arch.register_allocation_unit);
  if (regs_per_warp > 0) {
    const bool over_block_limit =
        device.max_registers_per_block > 0 &&
        (regs_per_warp * round_up(warps_per_block, arch.sub_partitions) > device.max_registers_per_block ||
         regs_per_warp * warps_per_block > device.max_registers_per_block);
    if (over_block_limit || launch.registers_per_thread > arch.max_registers_per_thread) {
      register_limit = 0;
    } else {
      const std::int64_t warps_per_sub_partition = device.max_registers_per_sm / arch.sub_partitions / regs_per_warp;
      register_limit = warps_per_sub_partition * arch.sub_partitions / warps_per_block;
    }
  }

  // Every block also takes the reserved shared memory, rounded up to the granularity.
  const std::int64_t smem_per_block =
      round_up(launch.shared_memory_per_block + arch.reserved_shared_memory_per_block, arch.shared_memory_granularity);
  const std::int64_t smem_limit = smem_per_block > 0 ? device.max_shared_memory_per_sm / smem_per_block : kUnlimited;

  Occupancy out;
  std::int64_t blocks = warp_limit;
  out.limiter = Limiter::kWarps;
  for (const auto& [limit, which] :
       {std::pair{block_limit, Limiter::kBlocks}, std::pair{register_limit, Limiter::kRegisters},
        std::pair{smem_limit, Limiter::kSharedMemory}}) {
    if (limit < blocks) {
      blocks = limit;
      out.limiter = which;
    }
  }
  out.active_blocks_per_sm = blocks;
  out.active_warps_per_sm = blocks * warps_per_block;
  out.occupancy_percent =
      static_cast<double>(out.active_warps_per_sm) / static_cast<double>(device.max_warps_per_sm) * 100.0;
  return out;
}

}  // namespace gpuscope::core::occupancy
