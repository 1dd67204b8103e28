// mean four ways (kernels.hpp): atomicAdd per element; shared-memory tree + second pass;
// warp shuffles with 16-byte loads and a last-block finish; CUB DeviceReduce.
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

#include "bench/ops/device_common.cuh"
#include "bench/ops/kernels.hpp"

namespace gpuscope::bench::ops::kernels {
namespace {

using namespace detail;

constexpr int kMaxPartials = 4096;

template <class T>
__global__ void mean_atomic_kernel(const T* x, std::int64_t n, float* sum) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(sum, to_f(x[i]));
}

// Divides in f64 so the mean is the correctly rounded f32 of (f32 sum) / n for any n.
__global__ void divide_kernel(const float* sum, std::int64_t n, float* mean) {
  *mean = static_cast<float>(static_cast<double>(*sum) / static_cast<double>(n));
}

// Pass 1 of two_pass: the classic shared-memory tree (blockDim.x == kBlock).
template <class T>
__global__ void partial_sums_tree(const T* x, std::int64_t n, float* partials) {
  __shared__ float s[kBlock];
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  float acc = 0.0f;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) acc += to_f(x[i]);
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = s[0];
}

// Pass 2: one block sums the partials.
__global__ void finish_partials(const float* partials, int count, std::int64_t n, float* mean) {
  float acc = 0.0f;
  for (int i = threadIdx.x; i < count; i += blockDim.x) acc += partials[i];
  acc = block_sum(acc);
  if (threadIdx.x == 0) *mean = static_cast<float>(static_cast<double>(acc) / static_cast<double>(n));
}

template <class T>
__global__ void mean_shuffle_kernel(const T* __restrict__ x, std::int64_t n, float* partials, unsigned int* counter,
                                    float* mean) {
  using V = Vec<T>;
  const std::int64_t nvec = n / V::kN;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  const std::int64_t first = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (std::int64_t i = first; i < nvec; i += stride) {
    const V v = reinterpret_cast<const V*>(x)[i];
#pragma unroll
    for (int k = 0; k < V::kN; ++k) acc += to_f(v.v[k]);
  }
  for (std::int64_t i = nvec * V::kN + first; i < n; i += stride) acc += to_f(x[i]);
  acc = block_sum(acc);

  __shared__ bool last_block;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    __threadfence();  // the partial is visible to every block before the counter moves
    last_block = atomicInc(counter, gridDim.x - 1) == gridDim.x - 1;  // wraps to 0: ready for the next call
  }
  __syncthreads();
  if (!last_block) return;
  __threadfence();
  float total = 0.0f;
  for (unsigned int i = threadIdx.x; i < gridDim.x; i += blockDim.x) total += static_cast<volatile float*>(partials)[i];
  total = block_sum(total);
  if (threadIdx.x == 0) *mean = static_cast<float>(static_cast<double>(total) / static_cast<double>(n));
}

template <class T>
struct ToFloat {
  __host__ __device__ float operator()(const T& v) const { return static_cast<float>(v); }
};

template <class T>
cudaError_t cub_sum(void* temp, std::size_t& temp_bytes, const void* x, std::int64_t n, float* sum,
                    cudaStream_t stream) {
  return cub::DeviceReduce::TransformReduce(temp, temp_bytes, static_cast<const T*>(x), sum, n,
                                            ::cuda::std::plus<float>{}, ToFloat<T>{}, 0.0f, stream);
}

}  // namespace

int mean_partial_blocks(int sm_count) { return std::min(std::max(sm_count, 1) * kBlocksPerSm, kMaxPartials); }

void mean_atomic(DType dtype, const void* x, std::int64_t n, float* sum, float* mean, cudaStream_t stream) {
  GPUSCOPE_CUDA_CALL(cudaMemsetAsync(sum, 0, sizeof(float), stream));
  const std::int64_t blocks = (n + kBlock - 1) / kBlock;
  if (blocks > 0x7fffffff) throw std::invalid_argument("mean atomic: n too large for one grid");
  dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (blocks > 0)
      mean_atomic_kernel<T><<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(static_cast<const T*>(x), n, sum);
  });
  check_launch("mean_atomic_kernel<<<>>>");
  divide_kernel<<<1, 1, 0, stream>>>(sum, n, mean);
  check_launch("divide_kernel<<<>>>");
}

void mean_two_pass(DType dtype, const void* x, std::int64_t n, float* partials, int blocks, float* mean,
                   cudaStream_t stream) {
  blocks = std::clamp(blocks, 1, kMaxPartials);
  dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    partial_sums_tree<T><<<blocks, kBlock, 0, stream>>>(static_cast<const T*>(x), n, partials);
  });
  check_launch("partial_sums_tree<<<>>>");
  finish_partials<<<1, 1024, 0, stream>>>(partials, blocks, n, mean);
  check_launch("finish_partials<<<>>>");
}

void mean_warp_shuffle(DType dtype, const void* x, std::int64_t n, float* partials, int blocks, unsigned int* counter,
                       float* mean, cudaStream_t stream) {
  blocks = std::clamp(blocks, 1, kMaxPartials);
  dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // No more blocks than there are vectors to read: idle blocks would only add to the finish.
    const std::int64_t vectors = (n + Vec<T>::kN - 1) / Vec<T>::kN;
    const int grid = static_cast<int>(std::clamp<std::int64_t>((vectors + kBlock - 1) / kBlock, 1, blocks));
    mean_shuffle_kernel<T><<<grid, kBlock, 0, stream>>>(static_cast<const T*>(x), n, partials, counter, mean);
  });
  check_launch("mean_shuffle_kernel<<<>>>");
}

std::size_t mean_cub_temp_bytes(DType dtype, std::int64_t n) {
  std::size_t bytes = 0;
  dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    GPUSCOPE_CUDA_CALL(cub_sum<T>(nullptr, bytes, nullptr, n, nullptr, nullptr));
  });
  return bytes;
}

void mean_cub(DType dtype, const void* x, std::int64_t n, void* temp, std::size_t temp_bytes, float* sum, float* mean,
              cudaStream_t stream) {
  dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    GPUSCOPE_CUDA_CALL(cub_sum<T>(temp, temp_bytes, x, n, sum, stream));
  });
  divide_kernel<<<1, 1, 0, stream>>>(sum, n, mean);
  check_launch("divide_kernel<<<>>>");
}

}  // namespace gpuscope::bench::ops::kernels
