// The library methods of the DRAM ceilings (see kernels.hpp for the contracts): what a
// program gets from CUDA's own C++ library instead of a hand-written kernel.
// cub::DeviceTransform picks its algorithm per architecture (on Hopper, bulk copies
// through shared memory for contiguous inputs); cub::DeviceReduce::Sum is the read.
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_transform.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <cstdint>

#include "gpuscope/bench.hpp"
#include "peak/kernels.hpp"

namespace gpuscope::peak::detail {
namespace {

struct Identity {
  __device__ std::uint32_t operator()(std::uint32_t x) const { return x; }
};

// Word w of the pattern (launch_dram's kWrite).
struct PatternWord {
  std::uint32_t seed;
  __device__ std::uint32_t operator()(std::uint64_t w) const {
    return static_cast<std::uint32_t>(w) * 2654435761u + seed;
  }
};

}  // namespace

void launch_cub_copy(const void* src, void* dst, std::size_t words, cudaStream_t stream) {
  GPUSCOPE_CUDA_CALL(cub::DeviceTransform::Transform(static_cast<const std::uint32_t*>(src),
                                                     static_cast<std::uint32_t*>(dst), static_cast<std::int64_t>(words),
                                                     Identity{}, stream));
}

void launch_cub_write_pattern(void* dst, std::size_t words, std::uint32_t seed, cudaStream_t stream) {
  GPUSCOPE_CUDA_CALL(cub::DeviceTransform::Transform(thrust::counting_iterator<std::uint64_t>(0),
                                                     static_cast<std::uint32_t*>(dst), static_cast<std::int64_t>(words),
                                                     PatternWord{seed}, stream));
}

void launch_cub_sum(const void* src, std::size_t words, std::uint32_t* sum, void* temp, std::size_t temp_bytes,
                    cudaStream_t stream) {
  GPUSCOPE_CUDA_CALL(cub::DeviceReduce::Sum(temp, temp_bytes, static_cast<const std::uint32_t*>(src), sum,
                                            static_cast<std::int64_t>(words), stream));
}

std::size_t cub_sum_temp_bytes(std::size_t words) {
  std::size_t bytes = 0;
  GPUSCOPE_CUDA_CALL(cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const std::uint32_t*>(nullptr),
                                            static_cast<std::uint32_t*>(nullptr), static_cast<std::int64_t>(words)));
  return bytes;
}

}  // namespace gpuscope::peak::detail
