// Elementwise kernels of the suite: vector_add three ways, square three ways, relu, copy
// (kernels.hpp). Arithmetic in f32; f16/bf16 are converted on load and rounded on store.
#include "bench/ops/device_common.cuh"
#include "bench/ops/kernels.hpp"

namespace gpuscope::bench::ops::kernels {
namespace {

using namespace detail;

struct AddOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct MulOp {
  __device__ float operator()(float a, float b) const { return a * b; }
};
struct SquareOp {
  __device__ float operator()(float v) const { return v * v; }
};
struct PowOp {
  float p;  // a run-time exponent: the compiler cannot turn powf(v, p) into v * v
  __device__ float operator()(float v) const { return powf(v, p); }
};
struct ReluOp {
  __device__ float operator()(float v) const { return fmaxf(v, 0.0f); }
};

// The tutorial's first kernel: one thread does everything.
template <class T>
__global__ void add_serial(const T* x, const T* y, T* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = from_f<T>(to_f(x[i]) + to_f(y[i]));
}

template <class T>
__global__ void add_per_element(const T* x, const T* y, T* out, std::int64_t n) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) out[i] = from_f<T>(to_f(x[i]) + to_f(y[i]));
}

// Grid-stride loop over 16-byte vectors, then the n % (16 / sizeof(T)) tail elements.
template <class T, class Op>
__global__ void binary_vec(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out, std::int64_t n,
                           Op op) {
  using V = Vec<T>;
  const std::int64_t nvec = n / V::kN;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  const std::int64_t first = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (std::int64_t i = first; i < nvec; i += stride) {
    const V va = reinterpret_cast<const V*>(a)[i];
    const V vb = reinterpret_cast<const V*>(b)[i];
    V r;
#pragma unroll
    for (int k = 0; k < V::kN; ++k) r.v[k] = from_f<T>(op(to_f(va.v[k]), to_f(vb.v[k])));
    reinterpret_cast<V*>(out)[i] = r;
  }
  for (std::int64_t i = nvec * V::kN + first; i < n; i += stride) out[i] = from_f<T>(op(to_f(a[i]), to_f(b[i])));
}

template <class T, class Op>
__global__ void unary_vec(const T* __restrict__ x, T* __restrict__ y, std::int64_t n, Op op) {
  using V = Vec<T>;
  const std::int64_t nvec = n / V::kN;
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  const std::int64_t first = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (std::int64_t i = first; i < nvec; i += stride) {
    const V vx = reinterpret_cast<const V*>(x)[i];
    V r;
#pragma unroll
    for (int k = 0; k < V::kN; ++k) r.v[k] = from_f<T>(op(to_f(vx.v[k])));
    reinterpret_cast<V*>(y)[i] = r;
  }
  for (std::int64_t i = nvec * V::kN + first; i < n; i += stride) y[i] = from_f<T>(op(to_f(x[i])));
}

// Four independent 16-byte loads in flight per thread before the stores.
__global__ void copy_vec(const uint4* __restrict__ src, uint4* __restrict__ dst, std::int64_t nvec,
                         const unsigned char* __restrict__ src_tail, unsigned char* __restrict__ dst_tail, int tail) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < nvec; i += 4 * stride) {
    const uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < nvec; i += stride) dst[i] = src[i];
  if (blockIdx.x == 0 && static_cast<int>(threadIdx.x) < tail) dst_tail[threadIdx.x] = src_tail[threadIdx.x];
}

template <class T>
int vec_blocks(std::int64_t n, int sm_count) {
  return grid_stride_blocks((n + Vec<T>::kN - 1) / Vec<T>::kN, sm_count);
}

}  // namespace

void vector_add(AddKind kind, DType dtype, const void* x, const void* y, void* out, std::int64_t n, int sm_count,
                cudaStream_t stream) {
  if (n <= 0) return;
  dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = static_cast<const T*>(x);
    const T* b = static_cast<const T*>(y);
    T* c = static_cast<T*>(out);
    switch (kind) {
      case AddKind::kSerial:
        add_serial<T><<<1, 1, 0, stream>>>(a, b, c, n);
        break;
      case AddKind::kPerElement: {
        const std::int64_t blocks = (n + kBlock - 1) / kBlock;
        if (blocks > 0x7fffffff) throw std::invalid_argument("vector_add per_element: n too large for one grid");
        add_per_element<T><<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(a, b, c, n);
        break;
      }
      case AddKind::kGridStrideVec4:
        binary_vec<T, AddOp><<<vec_blocks<T>(n, sm_count), kBlock, 0, stream>>>(a, b, c, n, AddOp{});
        break;
    }
  });
  check_launch("vector_add<<<>>>");
}

void square(SquareKind kind, DType dtype, const void* x, void* y, std::int64_t n, int sm_count, cudaStream_t stream) {
  if (n <= 0) return;
  dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = static_cast<const T*>(x);
    T* out = static_cast<T*>(y);
    const int blocks = vec_blocks<T>(n, sm_count);
    switch (kind) {
      case SquareKind::kMul:
        binary_vec<T, MulOp><<<blocks, kBlock, 0, stream>>>(in, in, out, n, MulOp{});
        break;
      case SquareKind::kPow:
        unary_vec<T, PowOp><<<blocks, kBlock, 0, stream>>>(in, out, n, PowOp{2.0f});
        break;
      case SquareKind::kFused:
        unary_vec<T, SquareOp><<<blocks, kBlock, 0, stream>>>(in, out, n, SquareOp{});
        break;
    }
  });
  check_launch("square<<<>>>");
}

void relu(DType dtype, const void* x, void* y, std::int64_t n, int sm_count, cudaStream_t stream) {
  if (n <= 0) return;
  dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    unary_vec<T, ReluOp>
        <<<vec_blocks<T>(n, sm_count), kBlock, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), n, ReluOp{});
  });
  check_launch("relu<<<>>>");
}

void copy(const void* src, void* dst, std::int64_t bytes, int sm_count, cudaStream_t stream) {
  if (bytes <= 0) return;
  const std::int64_t nvec = bytes / 16;
  const int tail = static_cast<int>(bytes % 16);
  const int blocks = grid_stride_blocks((nvec + 3) / 4, sm_count);
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  copy_vec<<<blocks, kBlock, 0, stream>>>(reinterpret_cast<const uint4*>(s), reinterpret_cast<uint4*>(d), nvec,
                                          s + nvec * 16, d + nvec * 16, tail);
  check_launch("copy_vec<<<>>>");
}

}  // namespace gpuscope::bench::ops::kernels
