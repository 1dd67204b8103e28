// The kernels of `gpuscope peak` and their launchers (internal to src/peak).
//
// Host code (.cpp) calls only these launchers; the kernels live in the .cu files beside
// this header (memory_kernels.cu, compute_kernels.cu, launch_kernels.cu,
// gemm_fill_kernels.cu, library_methods.cu). Every launcher enqueues on the stream it is given, never
// synchronizes, and checks the launch with cudaGetLastError (throwing
// gpuscope::bench::CudaError through GPUSCOPE_CUDA_CALL).
//
// Checksums: every measuring kernel folds what it read or computed into a result that
// the host compares with a value it computes itself (peak/checksums.hpp), so the
// compiler cannot delete the work and a kernel that skipped part of it is caught.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "peak/dram_configs.hpp"

namespace gpuscope::peak::detail {

// ---- memory (memory_kernels.cu) ---------------------------------------------------------
// Buffers are arrays of 16-byte vectors (uint4).

/// The DRAM kernels of the sweep (peak/dram_configs.hpp) with configuration c over
/// `vectors` vectors, a multiple of kDramBlock × c.width × c.unroll (else
/// std::invalid_argument); grid: sm_count × c.blocks_per_sm blocks looping grid-stride, or
/// with blocks_per_sm 0 one block per kDramBlock × width × unroll vectors.
///   kWrite: writes the pattern into dst: word w (32-bit, from the buffer start) is
///           w × 2654435761 + seed (mod 2^32);
///   kRead:  adds every 32-bit word of src (mod 2^32) into *checksum (one atomic add per block);
///   kCopy:  dst[i] = src[i] for every vector.
void launch_dram(const DramConfig& c, int sm_count, const void* src, void* dst, std::size_t vectors, std::uint32_t seed,
                 std::uint32_t* checksum, cudaStream_t stream);
/// Resident blocks per SM of c's kernel (cudaOccupancyMaxActiveBlocksPerMultiprocessor).
[[nodiscard]] int dram_blocks_per_sm(const DramConfig& c);

/// The pattern of launch_dram's kWrite with 16-byte stores, unroll 2, one-shot grid
/// (vectors a multiple of 512): how buffers are filled for the read and copy checks.
void launch_write_pattern(void* buffer, std::size_t vectors, std::uint32_t seed, cudaStream_t stream);
/// launch_dram's kRead with 16-byte loads, unroll 2, one-shot grid (vectors a multiple of 512).
void launch_read_sum(const void* buffer, std::size_t vectors, std::uint32_t* checksum, cudaStream_t stream);

/// Adds every word of the buffer into *checksum like kRead, `passes` times over the same
/// buffer with ld.global.cg (cached in L2 only, not in L1). The L2 read benchmark.
void launch_l2_read_sum(const void* buffer, std::size_t vectors, int passes, std::uint32_t* checksum, int grid,
                        int block, cudaStream_t stream);
/// Resident blocks per SM of launch_l2_read_sum's kernel at `block` threads.
[[nodiscard]] int l2_read_blocks_per_sm(int block);

// ---- library methods (library_methods.cu) --------------------------------------------------
/// cub::DeviceTransform::Transform copying `words` 32-bit words from src to dst.
void launch_cub_copy(const void* src, void* dst, std::size_t words, cudaStream_t stream);
/// cub::DeviceTransform::Transform writing the kWrite pattern (seed) into `words` words.
void launch_cub_write_pattern(void* dst, std::size_t words, std::uint32_t seed, cudaStream_t stream);
/// cub::DeviceReduce::Sum of `words` 32-bit words (mod 2^32) into *sum. `temp` holds
/// cub_sum_temp_bytes(words) bytes (cub's temporary storage).
void launch_cub_sum(const void* src, std::size_t words, std::uint32_t* sum, void* temp, std::size_t temp_bytes,
                    cudaStream_t stream);
[[nodiscard]] std::size_t cub_sum_temp_bytes(std::size_t words);

/// Shared-memory read benchmark: each block fills kSharedVectors 16-byte vectors of shared
/// memory with vector k = {4k, 4k+1, 4k+2, 4k+3}, then every thread reads
/// kSharedLoadsPerIter vectors per iteration (ld.shared.v4, a warp reads 512 contiguous
/// bytes: no bank conflicts) for `iterations` iterations and adds the words into *checksum.
/// Block size is kSharedBlock. Expected checksum: shared_read_expected().
inline constexpr int kSharedBlock = 256;
inline constexpr int kSharedVectors = 2048;  // 32 KiB per block
inline constexpr int kSharedLoadsPerIter = 4;
void launch_shared_read_sum(int iterations, std::uint32_t* checksum, int grid, cudaStream_t stream);
/// Blocks of launch_shared_read_sum resident per SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor).
[[nodiscard]] int shared_read_blocks_per_sm();

// ---- CUDA-core arithmetic (compute_kernels.cu) ------------------------------------------
enum class CoreOp { kFp64Fma, kFp32Fma, kFp16Fma, kBf16Fma, kInt32Imad, kSfuExp };

/// The shape of one arithmetic kernel: `chains` independent dependency chains per thread,
/// each advanced `unroll` times per loop iteration (fully unrolled), `block` threads per
/// block, `blocks_per_sm` resident blocks per SM (from the occupancy API).
struct CoreKernelShape {
  int chains = 0;
  int unroll = 0;
  int block = 0;
  int blocks_per_sm = 0;
  double ops_per_instruction = 0;  // counted units per instruction per thread: FMA 2 FLOP,
                                   // HFMA2 4 FLOP, IMAD 2 OP, __expf 1 OP
};
[[nodiscard]] CoreKernelShape core_kernel_shape(CoreOp op);

/// Runs `iterations` loop iterations (even) of the op's kernel on `grid` blocks and writes
/// one float per thread into out[grid × block]: the sum over the thread's chains of the
/// final values. FMA/IMAD chains compute x = x × a + b with a = -1 and b = 3 passed at run
/// time (so the compiler emits real FMAs), which returns every chain to its start value
/// x0 = c + 1 after an even number of steps, exactly; __expf chains compute x = __expf(-x),
/// which converges to the omega constant 0.567143... Expected values: core_expected().
void launch_core(CoreOp op, int iterations, float* out, int grid, cudaStream_t stream);

// ---- launch and sync (launch_kernels.cu) -------------------------------------------------
/// One thread adds 1 to *counter: the "empty" kernel of the launch benchmarks (the one
/// add lets the host count that every launch ran).
void launch_count(std::uint32_t* counter, cudaStream_t stream);
/// One thread stores `value` into *flag (a mapped pinned host address) and fences system
/// wide: the host sees the kernel start.
void launch_signal(std::uint32_t* flag, std::uint32_t value, cudaStream_t stream);

// ---- GEMM inputs (gemm_fill_kernels.cu) --------------------------------------------------
enum class ElementType { kF32, kF16, kBf16, kFp8E4M3, kI8 };
/// Fills n elements with pseudo-random values from a counter hash of (index, seed):
/// floats uniform in [-1, 1) rounded to the type, integers uniform in [-128, 127].
void launch_fill_random(ElementType type, void* data, std::size_t n, std::uint32_t seed, cudaStream_t stream);

}  // namespace gpuscope::peak::detail
