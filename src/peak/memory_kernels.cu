// Memory-bandwidth kernels of `gpuscope peak` (see kernels.hpp for the contracts).
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <string>

#include "gpuscope/bench.hpp"
#include "peak/kernels.hpp"

namespace gpuscope::peak::detail {
namespace {

constexpr std::uint32_t kPatternMultiplier = 2654435761u;  // Knuth's multiplicative hash

__device__ __forceinline__ std::uint32_t word_sum(const uint4& v) { return v.x + v.y + v.z + v.w; }

// Loads and stores with the cache hint H (peak/dram_configs.hpp, CacheHint).
template <CacheHint H>
__device__ __forceinline__ uint4 load(const uint4* p) {
  if constexpr (H == CacheHint::kNonCoherent) {
    return __ldg(p);
  } else if constexpr (H == CacheHint::kStreaming) {
    return __ldcs(p);
  } else if constexpr (H == CacheHint::kNoAllocate) {
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
  } else {
    return *p;
  }
}
template <CacheHint H>
__device__ __forceinline__ void store(uint4* p, const uint4& v) {
  if constexpr (H == CacheHint::kStreaming || H == CacheHint::kNoAllocate)
    __stcs(p, v);
  else
    *p = v;
}

// One atomic add per block (a warp reduction, then the block's warps): the one-shot grids
// have up to 2^18 blocks, and one add per thread or per warp to the same word would make
// the L2's atomic unit, not the DRAM, the limit.
__device__ __forceinline__ void block_add(std::uint32_t v, std::uint32_t* out) {
  __shared__ std::uint32_t warp_sums[kDramBlock / 32];
  v = __reduce_add_sync(0xffffffffu, v);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    std::uint32_t total = 0;
#pragma unroll
    for (int w = 0; w < kDramBlock / 32; ++w) total += warp_sums[w];
    atomicAdd(out, total);
  }
}

// Step s of a buffer is kDramBlock × U × W vectors; thread t's access u covers the W
// adjacent vectors at s·kDramBlock·U·W + (u·kDramBlock + t)·W, so a warp's U accesses are
// U coalesced runs of 512·W bytes, all in flight before the first is used. Blocks take
// steps blockIdx.x, blockIdx.x + gridDim.x, ... (one step each with the one-shot grid).
template <int W, int U>
__device__ __forceinline__ std::size_t access_index(std::size_t step, int u) {
  return step * (kDramBlock * U * W) + (static_cast<std::size_t>(u) * kDramBlock + threadIdx.x) * W;
}

// Calls f(index, u, w) for every vector of the thread's accesses in step `step`, unrolled
// (u and w are compile-time constants after inlining, so per-access arrays stay in registers).
template <int W, int U, class F>
__device__ __forceinline__ void for_each_access(std::size_t step, F&& f) {
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int w = 0; w < W; ++w) f(access_index<W, U>(step, u) + w, u, w);
}

template <int W, int U, CacheHint H>
__global__ void __launch_bounds__(kDramBlock)
    write_pattern_kernel(uint4* __restrict__ buffer, std::size_t steps, std::uint32_t seed) {
  for (std::size_t s = blockIdx.x; s < steps; s += gridDim.x)
    for_each_access<W, U>(s, [&](std::size_t i, int, int) {
      const std::uint32_t x = static_cast<std::uint32_t>(i) * 4u;
      store<H>(buffer + i, make_uint4(x * kPatternMultiplier + seed, (x + 1) * kPatternMultiplier + seed,
                                      (x + 2) * kPatternMultiplier + seed, (x + 3) * kPatternMultiplier + seed));
    });
}

template <int W, int U, CacheHint H>
__global__ void __launch_bounds__(kDramBlock)
    read_sum_kernel(const uint4* __restrict__ buffer, std::size_t steps, std::uint32_t* __restrict__ checksum) {
  std::uint32_t acc = 0;
  for (std::size_t s = blockIdx.x; s < steps; s += gridDim.x) {
    uint4 v[U][W];  // every load of the step issued before the first is used
    for_each_access<W, U>(s, [&](std::size_t i, int u, int w) { v[u][w] = load<H>(buffer + i); });
    for_each_access<W, U>(s, [&](std::size_t, int u, int w) { acc += word_sum(v[u][w]); });
  }
  block_add(acc, checksum);
}

template <int W, int U, CacheHint H>
__global__ void __launch_bounds__(kDramBlock)
    copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t steps) {
  for (std::size_t s = blockIdx.x; s < steps; s += gridDim.x) {
    uint4 v[U][W];
    for_each_access<W, U>(s, [&](std::size_t i, int u, int w) { v[u][w] = load<H>(src + i); });
    for_each_access<W, U>(s, [&](std::size_t i, int u, int w) { store<H>(dst + i, v[u][w]); });
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

template <int V>
using Int = std::integral_constant<int, V>;
template <CacheHint H>
using Hint = std::integral_constant<CacheHint, H>;

// Calls f(Int<W>, Int<U>, Hint<H>) with the configuration's compile-time parameters.
template <int W, int U, class F>
void by_hint(CacheHint h, F& f) {
  switch (h) {
    case CacheHint::kDefault:
      return f(Int<W>{}, Int<U>{}, Hint<CacheHint::kDefault>{});
    case CacheHint::kNonCoherent:
      return f(Int<W>{}, Int<U>{}, Hint<CacheHint::kNonCoherent>{});
    case CacheHint::kStreaming:
      return f(Int<W>{}, Int<U>{}, Hint<CacheHint::kStreaming>{});
    case CacheHint::kNoAllocate:
      return f(Int<W>{}, Int<U>{}, Hint<CacheHint::kNoAllocate>{});
  }
  throw std::invalid_argument("DRAM kernel: unknown cache hint");
}
template <int W, class F>
void by_unroll(int unroll, CacheHint h, F& f) {
  switch (unroll) {
    case 2:
      return by_hint<W, 2>(h, f);
    case 4:
      return by_hint<W, 4>(h, f);
    case 8:
      return by_hint<W, 8>(h, f);
    default:
      throw std::invalid_argument("DRAM kernel unroll must be 2, 4 or 8, not " + std::to_string(unroll));
  }
}
template <class F>
void by_config(const DramConfig& c, F&& f) {
  switch (c.width) {
    case 1:
      return by_unroll<1>(c.unroll, c.hint, f);
    case 2:
      return by_unroll<2>(c.unroll, c.hint, f);
    default:
      throw std::invalid_argument("DRAM kernel width must be 1 or 2 vectors, not " + std::to_string(c.width));
  }
}

std::size_t steps_of(const DramConfig& c, std::size_t vectors) {
  const std::size_t step = static_cast<std::size_t>(kDramBlock) * c.width * c.unroll;
  if (vectors % step != 0)
    throw std::invalid_argument("DRAM kernel: " + std::to_string(vectors) + " vectors is not a multiple of " +
                                std::to_string(step));
  return vectors / step;
}

}  // namespace

void launch_dram(const DramConfig& c, int sm_count, const void* src, void* dst, std::size_t vectors, std::uint32_t seed,
                 std::uint32_t* checksum, cudaStream_t stream) {
  const std::size_t steps = steps_of(c, vectors);
  const std::size_t grid =
      c.blocks_per_sm > 0 ? std::min<std::size_t>(steps, std::size_t(sm_count) * c.blocks_per_sm) : steps;
  const auto* in = static_cast<const uint4*>(src);
  auto* out = static_cast<uint4*>(dst);
  by_config(c, [&](auto w, auto u, auto h) {
    constexpr int W = decltype(w)::value, U = decltype(u)::value;
    constexpr CacheHint H = decltype(h)::value;
    switch (c.op) {
      case DramOp::kRead:
        read_sum_kernel<W, U, H><<<grid, kDramBlock, 0, stream>>>(in, steps, checksum);
        break;
      case DramOp::kWrite:
        write_pattern_kernel<W, U, H><<<grid, kDramBlock, 0, stream>>>(out, steps, seed);
        break;
      case DramOp::kCopy:
        copy_kernel<W, U, H><<<grid, kDramBlock, 0, stream>>>(in, out, steps);
        break;
    }
  });
  GPUSCOPE_CUDA_CALL(cudaGetLastError());
}

int dram_blocks_per_sm(const DramConfig& c) {
  int blocks = 0;
  by_config(c, [&](auto w, auto u, auto h) {
    constexpr int W = decltype(w)::value, U = decltype(u)::value;
    constexpr CacheHint H = decltype(h)::value;
    auto occupancy = [&](auto fn) {
      GPUSCOPE_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, kDramBlock, 0));
    };
    switch (c.op) {
      case DramOp::kRead:
        occupancy(read_sum_kernel<W, U, H>);
        break;
      case DramOp::kWrite:
        occupancy(write_pattern_kernel<W, U, H>);
        break;
      case DramOp::kCopy:
        occupancy(copy_kernel<W, U, H>);
        break;
    }
  });
  return blocks;
}

// The helpers' fill and sum (peak/context.hpp): 16-byte accesses, unroll 2, one-shot grid.
void launch_write_pattern(void* buffer, std::size_t vectors, std::uint32_t seed, cudaStream_t stream) {
  launch_dram(DramConfig{DramOp::kWrite, 1, 2, CacheHint::kDefault, 0}, 0, nullptr, buffer, vectors, seed, nullptr,
              stream);
}

void launch_read_sum(const void* buffer, std::size_t vectors, std::uint32_t* checksum, cudaStream_t stream) {
  launch_dram(DramConfig{DramOp::kRead, 1, 2, CacheHint::kDefault, 0}, 0, buffer, nullptr, vectors, 0, checksum,
              stream);
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

int l2_read_blocks_per_sm(int block) {
  int blocks = 0;
  GPUSCOPE_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, l2_read_sum_kernel, block, 0));
  return blocks;
}

int shared_read_blocks_per_sm() {
  int blocks = 0;
  GPUSCOPE_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, shared_read_sum_kernel, kSharedBlock, 0));
  return blocks;
}

}  // namespace gpuscope::peak::detail
