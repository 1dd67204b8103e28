#include "bench/l2_flush.hpp"

#include <cstdint>

#include "gpuscope/bench.hpp"

namespace gpuscope::bench {
namespace {

__global__ void flush_read(const uint4* __restrict__ data, std::int64_t nvec, unsigned int* sink) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  unsigned int acc = 0;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < nvec; i += stride) {
    const uint4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9E3779B9u) *sink = acc;  // never true for the zeroed buffer; keeps the loads
}

}  // namespace

void enqueue_l2_flush_read(const void* data, std::size_t bytes, unsigned int* sink, int blocks, cudaStream_t stream) {
  const auto nvec = static_cast<std::int64_t>(bytes / sizeof(uint4));
  const int grid = blocks > 0 ? blocks : 1;
  flush_read<<<grid, 256, 0, stream>>>(static_cast<const uint4*>(data), nvec, sink);
  GPUSCOPE_CUDA_CALL(cudaGetLastError());
}

}  // namespace gpuscope::bench
