// Device helpers shared by the suite's kernels (bench/ops/*.cu): dtype dispatch, f32
// conversions, 16-byte vectors, warp/block reductions, grid sizes. nvcc only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "bench/ops/dtype.hpp"
#include "gpuscope/bench.hpp"

namespace gpuscope::bench::ops::kernels::detail {

inline constexpr int kBlock = 256;      // threads per block of the grid-stride kernels
inline constexpr int kBlocksPerSm = 8;  // 8 × 256 = 2048 resident threads per SM (sm_90)

template <class T>
struct Tag {
  using type = T;
};

/// Calls f(Tag<T>{}) with T the storage type of `dtype` (tf32 is stored as float).
template <class F>
void dispatch(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF32:
    case DType::kTF32:
      f(Tag<float>{});
      return;
    case DType::kF16:
      f(Tag<__half>{});
      return;
    case DType::kBF16:
      f(Tag<__nv_bfloat16>{});
      return;
  }
  throw std::invalid_argument("unsupported dtype");
}

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__device__ __forceinline__ T from_f(float v);
template <>
__device__ __forceinline__ float from_f<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_f<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

/// 16 bytes of T: one LDG.128 / STG.128.
template <class T>
struct alignas(16) Vec {
  static constexpr int kN = 16 / sizeof(T);
  T v[kN];
};

/// Grid of a grid-stride kernel over `work` items (vectors, or groups of vectors) per thread.
inline int grid_stride_blocks(std::int64_t work, int sm_count) {
  const std::int64_t wanted = (work + kBlock - 1) / kBlock;
  return static_cast<int>(std::clamp<std::int64_t>(wanted, 1, std::int64_t{std::max(sm_count, 1)} * kBlocksPerSm));
}

inline void check_launch(const char* kernel) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) throw CudaError(status, kernel, __FILE__, __LINE__);
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

/// Sum over the block (blockDim.x a multiple of 32, at most 1024); the result is valid in
/// every thread. Uses 32 floats of shared memory; may be called repeatedly.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float warp_sums[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_sum(v);
  __syncthreads();  // a previous call may still be reading warp_sums
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  v = lane < warps ? warp_sums[lane] : 0.0f;
  v = warp_sum(v);
  return __shfl_sync(0xffffffffu, v, 0);
}

/// Max over the block, as block_sum.
__device__ __forceinline__ float block_max(float v) {
  __shared__ float warp_maxes[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) warp_maxes[warp] = v;
  __syncthreads();
  v = lane < warps ? warp_maxes[lane] : -INFINITY;
  v = warp_max(v);
  return __shfl_sync(0xffffffffu, v, 0);
}

}  // namespace gpuscope::bench::ops::kernels::detail
