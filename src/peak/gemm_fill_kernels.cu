// Random GEMM inputs for the tensor-core benchmarks (see kernels.hpp for the contract).
// Random data, not zeros or small integers: matrix units draw less power (and can run at
// a higher clock) on data with few bits set, so structured inputs would overstate the rate.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "gpuscope/bench.hpp"
#include "peak/kernels.hpp"

namespace gpuscope::peak::detail {
namespace {

// The 64-bit finalizer of MurmurHash3 over (index, seed), upper 32 bits.
__device__ __forceinline__ std::uint32_t hash(std::size_t i, std::uint32_t seed) {
  std::uint64_t h = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull + seed;
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return static_cast<std::uint32_t>(h >> 32);
}

// Uniform in [-1, 1): 24 random bits.
__device__ __forceinline__ float uniform(std::uint32_t h) { return static_cast<float>(h >> 8) * 0x1p-23f - 1.0f; }

template <class T>
__device__ __forceinline__ T convert(std::uint32_t h);
template <>
__device__ __forceinline__ float convert<float>(std::uint32_t h) {
  return uniform(h);
}
template <>
__device__ __forceinline__ __half convert<__half>(std::uint32_t h) {
  return __float2half_rn(uniform(h));
}
template <>
__device__ __forceinline__ __nv_bfloat16 convert<__nv_bfloat16>(std::uint32_t h) {
  return __float2bfloat16_rn(uniform(h));
}
template <>
__device__ __forceinline__ __nv_fp8_e4m3 convert<__nv_fp8_e4m3>(std::uint32_t h) {
  return __nv_fp8_e4m3(uniform(h));
}
template <>
__device__ __forceinline__ std::int8_t convert<std::int8_t>(std::uint32_t h) {
  return static_cast<std::int8_t>(static_cast<int>(h >> 24) - 128);
}

template <class T>
__global__ void fill_random_kernel(T* __restrict__ data, std::size_t n, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    data[i] = convert<T>(hash(i, seed));
}

template <class T>
void fill(void* data, std::size_t n, std::uint32_t seed, cudaStream_t stream) {
  const int block = 256;
  const std::size_t blocks = (n + block - 1) / block;
  const int grid = static_cast<int>(blocks < 65536 ? (blocks == 0 ? 1 : blocks) : 65536);
  fill_random_kernel<T><<<grid, block, 0, stream>>>(static_cast<T*>(data), n, seed);
}

}  // namespace

void launch_fill_random(ElementType type, void* data, std::size_t n, std::uint32_t seed, cudaStream_t stream) {
  switch (type) {
    case ElementType::kF32:
      fill<float>(data, n, seed, stream);
      break;
    case ElementType::kF16:
      fill<__half>(data, n, seed, stream);
      break;
    case ElementType::kBf16:
      fill<__nv_bfloat16>(data, n, seed, stream);
      break;
    case ElementType::kFp8E4M3:
      fill<__nv_fp8_e4m3>(data, n, seed, stream);
      break;
    case ElementType::kI8:
      fill<std::int8_t>(data, n, seed, stream);
      break;
  }
  GPUSCOPE_CUDA_CALL(cudaGetLastError());
}

}  // namespace gpuscope::peak::detail
