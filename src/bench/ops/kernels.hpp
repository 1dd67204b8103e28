// kernels: the launchers of the operator suite's CUDA kernels (bench/ops/*.cu). Plain C++
// declarations, so the host code (*.cpp) builds with the C++ compiler; every launcher
// enqueues its work on `stream` and never synchronizes (the timing engine may capture it
// into a CUDA graph). Pointers are device pointers holding `dtype` elements unless said
// otherwise; sizes are element counts. Each launcher checks the launch with
// cudaGetLastError and throws gpuscope::bench::CudaError (gpuscope/bench.hpp) on failure,
// std::invalid_argument for a shape the kernel cannot launch (named in the message).
//
// The kernels are the exercises of the tutorial material; ops/*_ops.cpp says what each
// teaches. Grid-stride kernels launch at most `sm_count` × 8 blocks of 256 threads
// (2048 resident threads per SM on sm_90: one full wave).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "bench/ops/dtype.hpp"

namespace gpuscope::bench::ops::kernels {

// ---- inputs (fill.hpp) -----------------------------------------------------------------
enum class Fill { kExact, kUniform };
/// dst[i] = round_to_dtype(value(i, seed) × scale); scale should be a power of two (exact).
void fill(Fill kind, DType dtype, void* dst, std::int64_t n, std::uint32_t seed, float scale, cudaStream_t stream);

// ---- elementwise (elementwise.cu); arithmetic in f32, loads/stores in dtype -------------
enum class AddKind {
  kSerial,          // <<<1, 1>>>: one thread walks all n elements
  kPerElement,      // one thread per element, ceil(n / 256) blocks
  kGridStrideVec4,  // grid-stride loop, 16-byte vector loads/stores (float4 / 8 halves)
};
/// out = x + y.
void vector_add(AddKind kind, DType dtype, const void* x, const void* y, void* out, std::int64_t n, int sm_count,
                cudaStream_t stream);

enum class SquareKind {
  kMul,    // a generic binary multiply kernel called with x twice: out = a * b, a = b = x
  kPow,    // a generic power kernel: out = powf(x, p), p = 2 passed at run time
  kFused,  // a dedicated square kernel: out = x * x
};
/// y = x²; all three share the grid-stride 16-byte-vector loop, only the arithmetic differs.
void square(SquareKind kind, DType dtype, const void* x, void* y, std::int64_t n, int sm_count, cudaStream_t stream);

/// y = max(x, 0), grid-stride 16-byte vectors.
void relu(DType dtype, const void* x, void* y, std::int64_t n, int sm_count, cudaStream_t stream);

/// Copies `bytes` bytes (any count) with 16-byte vector accesses, 4 loads in flight per
/// thread before the stores (the DRAM copy kernel of the tutorial). Pointers 16-byte aligned.
void copy(const void* src, void* dst, std::int64_t bytes, int sm_count, cudaStream_t stream);

// ---- mean (reduce.cu); every variant writes the f32 mean of x to *mean ------------------
/// memset(*sum = 0); one atomicAdd(sum, x[i]) per element; *mean = *sum / n.
void mean_atomic(DType dtype, const void* x, std::int64_t n, float* sum, float* mean, cudaStream_t stream);

/// Blocks of the first pass of mean_two_pass / mean_warp_shuffle (= sm_count × 8, at most
/// 4096) — the length of the `partials` array they need.
[[nodiscard]] int mean_partial_blocks(int sm_count);
/// Pass 1: each block sums a grid-stride slice in a shared-memory tree and writes
/// partials[block]; pass 2 (one block) sums the partials and writes *mean.
void mean_two_pass(DType dtype, const void* x, std::int64_t n, float* partials, int blocks, float* mean,
                   cudaStream_t stream);
/// One kernel: 16-byte vector loads, per-warp __shfl_down_sync reduction, per-block sums
/// in partials[]; the last block to finish (threadfence + atomic counter) adds the partials
/// in block order, writes *mean and resets *counter to 0 for the next call. *counter must
/// be 0 before the first call.
void mean_warp_shuffle(DType dtype, const void* x, std::int64_t n, float* partials, int blocks, unsigned int* counter,
                       float* mean, cudaStream_t stream);
/// cub::DeviceReduce::TransformReduce (f32 accumulation) temp storage in bytes.
[[nodiscard]] std::size_t mean_cub_temp_bytes(DType dtype, std::int64_t n);
/// cub::DeviceReduce::TransformReduce into *sum, then *mean = *sum / n.
void mean_cub(DType dtype, const void* x, std::int64_t n, void* temp, std::size_t temp_bytes, float* sum, float* mean,
              cudaStream_t stream);

// ---- softmax (softmax.cu): row-wise over a rows × cols row-major matrix, one block per row
enum class SoftmaxKind {
  kNaive,   // three passes over the row: max, sum of exp(x - max), write exp(x - max) / sum
  kOnline,  // one pass for max and normalizer together (Milakov & Gimelshein 2018), one write pass
};
void softmax(SoftmaxKind kind, DType dtype, const void* x, void* y, std::int64_t rows, std::int64_t cols,
             cudaStream_t stream);
/// Threads per block softmax uses for rows of `cols` elements (a power of two, 32..256).
[[nodiscard]] int softmax_block_threads(std::int64_t cols);

// ---- transpose (transpose.cu): out (cols × rows) = in (rows × cols)ᵀ, both row-major ----
enum class TransposeKind {
  kNaive,          // 32 × 32 tiles, reads coalesced, writes strided by `rows`
  kTiledUnpadded,  // staged through a 32 × 32 shared tile: both coalesced, 32-way bank conflicts
  kTiled,          // 32 × 33 padded shared tile: coalesced and conflict-free
};
/// Largest `rows` transpose can launch (grid.y = ceil(rows / 32) <= 65535).
inline constexpr std::int64_t kTransposeMaxRows = 65535LL * 32;
void transpose(TransposeKind kind, DType dtype, const void* in, void* out, std::int64_t rows, std::int64_t cols,
               cudaStream_t stream);

}  // namespace gpuscope::bench::ops::kernels
