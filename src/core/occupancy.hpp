// occupancy: theoretical occupancy of one kernel launch on one GPU, as the CUDA
// Occupancy Calculator and cudaOccupancyMaxActiveBlocksPerMultiprocessor compute it.
//
// Source: the CUDA toolkit's cuda_occupancy.h (cudaOccMaxBlocksPerSMWarpsLimit,
// cudaOccMaxBlocksPerSMRegsLimit, cudaOccMaxBlocksPerSMSmemLimit) and the CUDA C++
// Programming Guide, "Compute Capabilities" table. Default cache configuration, no
// clusters, no partitioned global caching; the shared-memory carveout is assumed to be
// the largest (max_shared_memory_per_sm), as the runtime picks when a kernel needs it.
//
// Formula, for a block of T threads, R registers per thread and S bytes of shared
// memory per block (static + dynamic), W = 32 threads per warp:
//   warps per block     wb = ceil(T / W)
//   warp limit          Lw = floor(max_warps_per_sm / wb)
//   block limit         Lb = max_blocks_per_sm
//   register limit      rw = roundup(R × W, 256)           (registers per warp; unit 256)
//                       Lr = floor(floor(regs_per_sm / P / rw) × P / wb)
//                            with P = 4 SM sub-partitions (2 on cc 6.0); Lr = ∞ when R = 0;
//                            Lr = 0 when R > 255, or when rw × roundup(wb, P) or rw × wb
//                            exceeds max_registers_per_block (when that is known, > 0)
//   smem limit          sb = roundup(S + reserved, g)      (reserved = 1024 B per block on
//                            cc ≥ 8.0, else 0; granularity g = 128 B on cc ≥ 8.0, else 256 B)
//                       Ls = floor(max_shared_memory_per_sm / sb)
//   active blocks/SM    B  = min(Lw, Lb, Lr, Ls);  active warps/SM = B × wb
//   occupancy (%)       = B × wb / max_warps_per_sm × 100
// The limiter is the smallest of the four limits; ties go to the first in the order
// warps, blocks, registers, shared memory (256 threads at 32 registers on cc 9.0 are
// limited to 8 blocks by both warps and registers: the limiter says "warps").
//
// The per-block shared-memory maximum is not checked: the opt-in maximum is not
// always known, and a kernel that ran did fit.
//
// Errors: nullopt when an input is unusable (block of 0 threads or more than
// max_threads_per_block when that is known, or a device limit ≤ 0 among
// max_warps_per_sm, max_blocks_per_sm, max_registers_per_sm, max_shared_memory_per_sm).
// A block that fits nowhere is not an error: 0 active blocks, limiter = the limit that is 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpuscope::core::occupancy {

/// Per-SM limits of a GPU (devices table; cudaDeviceProp names in brackets).
struct DeviceLimits {
  int cc_major = 0;
  int cc_minor = 0;
  std::int64_t max_warps_per_sm = 0;          // maxThreadsPerMultiProcessor / 32
  std::int64_t max_blocks_per_sm = 0;         // maxBlocksPerMultiProcessor
  std::int64_t max_registers_per_sm = 0;      // regsPerMultiprocessor
  std::int64_t max_registers_per_block = 0;   // regsPerBlock; 0 = unknown, not checked
  std::int64_t max_shared_memory_per_sm = 0;  // sharedMemPerMultiprocessor, bytes
  std::int64_t max_threads_per_block = 0;     // maxThreadsPerBlock; 0 = unknown, not checked
};

/// One launch's resource use.
struct LaunchConfig {
  std::int64_t block_threads = 0;  // block_x × block_y × block_z
  std::int64_t registers_per_thread = 0;
  std::int64_t shared_memory_per_block = 0;  // static + dynamic, bytes
};

enum class Limiter { kWarps, kBlocks, kRegisters, kSharedMemory };

/// "warps", "blocks", "registers", "shared memory".
[[nodiscard]] std::string_view limiter_name(Limiter limiter);

struct Occupancy {
  std::int64_t active_blocks_per_sm = 0;
  std::int64_t active_warps_per_sm = 0;
  double occupancy_percent = 0.0;  // active warps / max warps × 100
  Limiter limiter = Limiter::kWarps;
};

/// Architecture constants of the formula above, by compute capability.
struct ArchConstants {
  std::int64_t register_allocation_unit = 256;  // registers, per warp
  std::int64_t max_registers_per_thread = 255;
  std::int64_t sub_partitions = 4;
  std::int64_t shared_memory_granularity = 128;          // bytes
  std::int64_t reserved_shared_memory_per_block = 1024;  // bytes
};
[[nodiscard]] ArchConstants arch_constants(int cc_major, int cc_minor);

/// Theoretical occupancy of `launch` on `device` (see the file comment).
[[nodiscard]] std::optional<Occupancy> compute(const DeviceLimits& device, const LaunchConfig& launch);

/// x × y × z: the blocks of a grid or the threads of a block, from dimensions read from a
/// trace. 0 (unknown) when a dimension is not positive (-1 and 0 mean unknown in the trace)
/// or the product exceeds 2^63 - 1, which only a damaged or foreign trace holds: CUDA's
/// limits (grid x < 2^31, y and z < 2^16) keep a real grid below it.
[[nodiscard]] std::int64_t dims_product(std::int64_t x, std::int64_t y, std::int64_t z);

}  // namespace gpuscope::core::occupancy

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
