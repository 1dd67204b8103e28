// The fill kernel of the suite's inputs (kernels.hpp, values from fill.hpp).
#include "bench/ops/device_common.cuh"
#include "bench/ops/fill.hpp"
#include "bench/ops/kernels.hpp"

namespace gpuscope::bench::ops::kernels {
namespace {

using namespace detail;

template <class T, bool kUniform>
__global__ void fill_kernel(T* dst, std::int64_t n, std::uint32_t seed, float scale) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = kUniform ? fill::value_uniform(static_cast<std::uint64_t>(i), seed)
                             : fill::value_exact(static_cast<std::uint64_t>(i), seed);
    dst[i] = from_f<T>(v * scale);
  }
}

}  // namespace

void fill(Fill kind, DType dtype, void* dst, std::int64_t n, std::uint32_t seed, float scale, cudaStream_t stream) {
  if (n <= 0) return;
  const int blocks = static_cast<int>(std::min<std::int64_t>((n + kBlock - 1) / kBlock, 65536));
  dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (kind == Fill::kUniform)
      fill_kernel<T, true><<<blocks, kBlock, 0, stream>>>(static_cast<T*>(dst), n, seed, scale);
    else
      fill_kernel<T, false><<<blocks, kBlock, 0, stream>>>(static_cast<T*>(dst), n, seed, scale);
  });
  check_launch("fill_kernel<<<>>>");
}

}  // namespace gpuscope::bench::ops::kernels
