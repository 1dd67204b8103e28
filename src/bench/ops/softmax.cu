// Row-wise softmax two ways (kernels.hpp), one block per row, f32 arithmetic.
// naive: max pass, sum-of-exp pass, write pass — reads the row 3 times.
// online: max and normalizer in one pass, rescaling the running sum whenever the running
// max grows (M. Milakov, N. Gimelshein, "Online normalizer calculation for softmax",
// arXiv:1805.02867, 2018, algorithm 3), then the write pass — reads the row twice.
#include "bench/ops/device_common.cuh"
#include "bench/ops/kernels.hpp"

namespace gpuscope::bench::ops::kernels {
namespace {

using namespace detail;

template <class T>
__global__ void softmax_naive(const T* __restrict__ x, T* __restrict__ y, std::int64_t cols) {
  const T* row = x + std::int64_t{blockIdx.x} * cols;
  T* out = y + std::int64_t{blockIdx.x} * cols;
  float m = -INFINITY;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, to_f(row[c]));
  m = block_max(m);
  float s = 0.0f;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += expf(to_f(row[c]) - m);
  s = block_sum(s);
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) out[c] = from_f<T>(expf(to_f(row[c]) - m) / s);
}

// (m, d): running max and sum of exp(x - m). Merging handles the empty state (-inf, 0).
struct MaxSum {
  float m, d;
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b) {
  const float m = fmaxf(a.m, b.m);
  if (m == -INFINITY) return {m, 0.0f};
  return {m, a.d * expf(a.m - m) + b.d * expf(b.m - m)};
}

__device__ __forceinline__ MaxSum block_merge(MaxSum v) {
  __shared__ MaxSum warp_vals[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int offset = 16; offset > 0; offset /= 2)
    v = merge(v, MaxSum{__shfl_down_sync(0xffffffffu, v.m, offset), __shfl_down_sync(0xffffffffu, v.d, offset)});
  if (lane == 0) warp_vals[warp] = v;
  __syncthreads();
  v = lane < warps ? warp_vals[lane] : MaxSum{-INFINITY, 0.0f};
  for (int offset = 16; offset > 0; offset /= 2)
    v = merge(v, MaxSum{__shfl_down_sync(0xffffffffu, v.m, offset), __shfl_down_sync(0xffffffffu, v.d, offset)});
  return MaxSum{__shfl_sync(0xffffffffu, v.m, 0), __shfl_sync(0xffffffffu, v.d, 0)};
}

template <class T>
__global__ void softmax_online(const T* __restrict__ x, T* __restrict__ y, std::int64_t cols) {
  const T* row = x + std::int64_t{blockIdx.x} * cols;
  T* out = y + std::int64_t{blockIdx.x} * cols;
  MaxSum acc{-INFINITY, 0.0f};
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = to_f(row[c]);
    if (v > acc.m) {
      acc.d = acc.d * expf(acc.m - v) + 1.0f;  // expf(-inf) = 0 on the first element
      acc.m = v;
    } else {
      acc.d += expf(v - acc.m);
    }
  }
  acc = block_merge(acc);
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) out[c] = from_f<T>(expf(to_f(row[c]) - acc.m) / acc.d);
}

}  // namespace

int softmax_block_threads(std::int64_t cols) {
  int threads = 32;
  while (threads < 256 && threads < cols) threads *= 2;
  return threads;
}

void softmax(SoftmaxKind kind, DType dtype, const void* x, void* y, std::int64_t rows, std::int64_t cols,
             cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (rows > 0x7fffffff) throw std::invalid_argument("softmax: more than 2^31 - 1 rows");
  const int threads = softmax_block_threads(cols);
  const auto grid = static_cast<unsigned>(rows);
  dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = static_cast<const T*>(x);
    T* out = static_cast<T*>(y);
    if (kind == SoftmaxKind::kNaive)
      softmax_naive<T><<<grid, threads, 0, stream>>>(in, out, cols);
    else
      softmax_online<T><<<grid, threads, 0, stream>>>(in, out, cols);
  });
  check_launch("softmax<<<>>>");
}

}  // namespace gpuscope::bench::ops::kernels
