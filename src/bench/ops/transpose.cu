// Matrix transpose three ways (kernels.hpp): the steps of M. Harris, "An Efficient Matrix
// Transpose in CUDA C/C++" (NVIDIA developer blog, 2013). Blocks of 32 × 8 threads move
// 32 × 32 tiles, 4 elements per thread, in every variant; only the staging differs.
#include "bench/ops/device_common.cuh"
#include "bench/ops/kernels.hpp"

namespace gpuscope::bench::ops::kernels {
namespace {

using namespace detail;

constexpr int kTile = 32, kRowsPerPass = 8;

template <class T>
__global__ void transpose_naive(const T* __restrict__ in, T* __restrict__ out, std::int64_t rows, std::int64_t cols) {
  const std::int64_t c = std::int64_t{blockIdx.x} * kTile + threadIdx.x;
  const std::int64_t r0 = std::int64_t{blockIdx.y} * kTile;
  if (c >= cols) return;
  for (int j = threadIdx.y; j < kTile; j += kRowsPerPass) {
    const std::int64_t r = r0 + j;
    if (r < rows) out[c * rows + r] = in[r * cols + c];  // write stride: `rows` elements
  }
}

template <class T, int kPad>
__global__ void transpose_shared(const T* __restrict__ in, T* __restrict__ out, std::int64_t rows, std::int64_t cols) {
  __shared__ T tile[kTile][kTile + kPad];
  const std::int64_t c0 = std::int64_t{blockIdx.x} * kTile, r0 = std::int64_t{blockIdx.y} * kTile;
  for (int j = threadIdx.y; j < kTile; j += kRowsPerPass) {
    const std::int64_t r = r0 + j, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[j][threadIdx.x] = in[r * cols + c];
  }
  __syncthreads();
  // Output row c0 + j holds input column c0 + j; its element r0 + threadIdx.x comes from
  // tile[threadIdx.x][j]: a column of the tile (32 different banks only with the padding).
  for (int j = threadIdx.y; j < kTile; j += kRowsPerPass) {
    const std::int64_t oc = c0 + j, orow = r0 + threadIdx.x;
    if (oc < cols && orow < rows) out[oc * rows + orow] = tile[threadIdx.x][j];
  }
}

}  // namespace

void transpose(TransposeKind kind, DType dtype, const void* in, void* out, std::int64_t rows, std::int64_t cols,
               cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (rows > kTransposeMaxRows || (cols + kTile - 1) / kTile > 0x7fffffff)
    throw std::invalid_argument("transpose: at most " + std::to_string(kTransposeMaxRows) + " rows");
  const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile), static_cast<unsigned>((rows + kTile - 1) / kTile));
  const dim3 block(kTile, kRowsPerPass);
  dispatch(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = static_cast<const T*>(in);
    T* b = static_cast<T*>(out);
    switch (kind) {
      case TransposeKind::kNaive:
        transpose_naive<T><<<grid, block, 0, stream>>>(a, b, rows, cols);
        break;
      case TransposeKind::kTiledUnpadded:
        transpose_shared<T, 0><<<grid, block, 0, stream>>>(a, b, rows, cols);
        break;
      case TransposeKind::kTiled:
        transpose_shared<T, 1><<<grid, block, 0, stream>>>(a, b, rows, cols);
        break;
    }
  });
  check_launch("transpose<<<>>>");
}

}  // namespace gpuscope::bench::ops::kernels
