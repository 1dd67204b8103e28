// Memory-bandwidth kernels of `gpuscope peak` (see kernels.hpp for the contracts).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpuscope/bench.hpp"
#include "peak/kernels.hpp"

namespace gpuscope::peak::detail {
namespace {

constexpr std::uint32_t kPatternMultiplier = 2654435761u;  // Knuth's multiplicative hash

__device__ __forceinline__ std::uint32_t word_sum(const uint4& v) { return v.x + v.y + v.z + v.w; }

// Each thread handles U vectors per step, `blockDim.x` apart, so a warp's U accesses are
// U fully coalesced 512-byte lines and all U are in flight before the first is used.
template <int U>
__global__ void write_pattern_kernel(uint4* __restrict__ buffer, std::size_t vectors, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x * U;
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * U + threadIdx.x; base < vectors;
       base += stride) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * blockDim.x;
      const std::uint32_t w = static_cast<std::uint32_t>(i) * 4u;
      buffer[i] = make_uint4(w * kPatternMultiplier + seed, (w + 1) * kPatternMultiplier + seed,
                             (w + 2) * kPatternMultiplier + seed, (w + 3) * kPatternMultiplier + seed);
    }
  }
}

template <int U>
__global__ void read_sum_kernel(const uint4* __restrict__ buffer, std::size_t vectors,
                                std::uint32_t* __restrict__ checksum) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x * U;
  std::uint32_t acc = 0;
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * U + threadIdx.x; base < vectors;
       base += stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = buffer[base + static_cast<std::size_t>(u) * blockDim.x];
#pragma unroll
    for (int u = 0; u < U; ++u) acc += word_sum(v[u]);
  }
  atomicAdd(checksum, acc);
}

template <int U>
__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t vectors) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x * U;
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * U + threadIdx.x; base < vectors;
       base += stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = src[base + static_cast<std::size_t>(u) * blockDim.x];
#pragma unroll
    for (int u = 0; u < U; ++u) dst[base + static_cast<std::size_t>(u) * blockDim.x] = v[u];
  }
}

// L2: the buffer is cut into chunks of blockDim × 4 vectors; in pass p, block b reads the
// chunks c ≡ (b + p) mod gridDim (a different set each pass, so no load repeats an address
// of the thread's previous pass), with ld.global.cg so L1 never serves them.
constexpr int kL2Unroll = 4;
__global__ void l2_read_sum_kernel(const uint4* __restrict__ buffer, std::size_t vectors, int passes,
                                   std::uint32_t* __restrict__ checksum) {
  const std::size_t chunk = static_cast<std::size_t>(blockDim.x) * kL2Unroll;
  const std::size_t chunks = vectors / chunk;
  std::uint32_t acc = 0;
  for (int p = 0; p < passes; ++p) {
    for (std::size_t c = (blockIdx.x + static_cast<unsigned>(p)) % gridDim.x; c < chunks; c += gridDim.x) {
      const uint4* base = buffer + c * chunk + threadIdx.x;
      uint4 v[kL2Unroll];
#pragma unroll
      for (int u = 0; u < kL2Unroll; ++u) v[u] = __ldcg(base + u * blockDim.x);
#pragma unroll
      for (int u = 0; u < kL2Unroll; ++u) acc += word_sum(v[u]);
    }
  }
  atomicAdd(checksum, acc);
}

// Shared memory: warp-contiguous 16-byte loads at an offset that moves every iteration
// (so no load can be hoisted out of the loop); offsets stay inside the 2048 vectors:
// 992 + 255 + 3 × 256 = 2015.
static_assert(((1023 & ~31) + kSharedBlock - 1 + (kSharedLoadsPerIter - 1) * kSharedBlock) < kSharedVectors);
__global__ void __launch_bounds__(kSharedBlock)
    shared_read_sum_kernel(int iterations, std::uint32_t* __restrict__ checksum) {
  __shared__ uint4 s[kSharedVectors];
  for (int k = threadIdx.x; k < kSharedVectors; k += blockDim.x) {
    const std::uint32_t w = 4u * static_cast<std::uint32_t>(k);
    s[k] = make_uint4(w, w + 1, w + 2, w + 3);
  }
  __syncthreads();
  std::uint32_t acc = 0;
#pragma unroll 1
  for (int it = 0; it < iterations; ++it) {
    const uint4* p = s + ((it * 32) & 1023) + threadIdx.x;
#pragma unroll
    for (int u = 0; u < kSharedLoadsPerIter; ++u) acc += word_sum(p[u * kSharedBlock]);
  }
  atomicAdd(checksum, acc);
}

template <int U>
void write_pattern_u(void* buffer, std::size_t vectors, std::uint32_t seed, int grid, int block, cudaStream_t stream) {
  write_pattern_kernel<U><<<grid, block, 0, stream>>>(static_cast<uint4*>(buffer), vectors, seed);
}
template <int U>
void read_sum_u(const void* buffer, std::size_t vectors, std::uint32_t* checksum, int grid, int block,
                cudaStream_t stream) {
  read_sum_kernel<U><<<grid, block, 0, stream>>>(static_cast<const uint4*>(buffer), vectors, checksum);
}
template <int U>
void copy_u(const void* src, void* dst, std::size_t vectors, int grid, int block, cudaStream_t stream) {
  copy_kernel<U><<<grid, block, 0, stream>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst), vectors);
}

// Dispatches a run-time unroll factor to the 2/4/8 instantiations.
template <class F2, class F4, class F8>
void by_unroll(int unroll, F2 f2, F4 f4, F8 f8) {
  switch (unroll) {
    case 2:
      f2();
      break;
    case 4:
      f4();
      break;
    case 8:
      f8();
      break;
    default:
      throw std::invalid_argument("memory kernel unroll must be 2, 4 or 8, not " + std::to_string(unroll));
  }
}

}  // namespace

void launch_write_pattern(void* buffer, std::size_t vectors, std::uint32_t seed, int grid, int block, int unroll,
                          cudaStream_t stream) {
  by_unroll(
      unroll, [&] { write_pattern_u<2>(buffer, vectors, seed, grid, block, stream); },
      [&] { write_pattern_u<4>(buffer, vectors, seed, grid, block, stream); },
      [&] { write_pattern_u<8>(buffer, vectors, seed, grid, block, stream); });
  GPUSCOPE_CUDA_CALL(cudaGetLastError());
}

void launch_read_sum(const void* buffer, std::size_t vectors, std::uint32_t* checksum, int grid, int block, int unroll,
                     cudaStream_t stream) {
  by_unroll(
      unroll, [&] { read_sum_u<2>(buffer, vectors, checksum, grid, block, stream); },
      [&] { read_sum_u<4>(buffer, vectors, checksum, grid, block, stream); },
      [&] { read_sum_u<8>(buffer, vectors, checksum, grid, block, stream); });
  GPUSCOPE_CUDA_CALL(cudaGetLastError());
}

void launch_copy(const void* src, void* dst, std::size_t vectors, int grid, int block, int unroll,
                 cudaStream_t stream) {
  by_unroll(
      unroll, [&] { copy_u<2>(src, dst, vectors, grid, block, stream); },
      [&] { copy_u<4>(src, dst, vectors, grid, block, stream); },
      [&] { copy_u<8>(src, dst, vectors, grid, block, stream); });
  GPUSCOPE_CUDA_CALL(cudaGetLastError());
}

void launch_l2_read_sum(const void* buffer, std::size_t vectors, int passes, std::uint32_t* checksum, int grid,
                        int block, cudaStream_t stream) {
  l2_read_sum_kernel<<<grid, block, 0, stream>>>(static_cast<const uint4*>(buffer), vectors, passes, checksum);
  GPUSCOPE_CUDA_CALL(cudaGetLastError());
}

void launch_shared_read_sum(int iterations, std::uint32_t* checksum, int grid, cudaStream_t stream) {
  shared_read_sum_kernel<<<grid, kSharedBlock, 0, stream>>>(iterations, checksum);
  GPUSCOPE_CUDA_CALL(cudaGetLastError());
}

int memory_blocks_per_sm(MemoryKernel kernel, int unroll, int block) {
  int blocks = 0;
  auto occupancy = [&](auto fn) {
    GPUSCOPE_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, block, 0));
  };
  switch (kernel) {
    case MemoryKernel::kWritePattern:
      by_unroll(
          unroll, [&] { occupancy(write_pattern_kernel<2>); }, [&] { occupancy(write_pattern_kernel<4>); },
          [&] { occupancy(write_pattern_kernel<8>); });
      break;
    case MemoryKernel::kReadSum:
      by_unroll(
          unroll, [&] { occupancy(read_sum_kernel<2>); }, [&] { occupancy(read_sum_kernel<4>); },
          [&] { occupancy(read_sum_kernel<8>); });
      break;
    case MemoryKernel::kCopy:
      by_unroll(
          unroll, [&] { occupancy(copy_kernel<2>); }, [&] { occupancy(copy_kernel<4>); },
          [&] { occupancy(copy_kernel<8>); });
      break;
    case MemoryKernel::kL2ReadSum:
      occupancy(l2_read_sum_kernel);
      break;
  }
  return blocks;
}

int shared_read_blocks_per_sm() {
  int blocks = 0;
  GPUSCOPE_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, shared_read_sum_kernel, kSharedBlock, 0));
  return blocks;
}

}  // namespace gpuscope::peak::detail
