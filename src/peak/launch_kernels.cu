// Launch-cost kernels of `gpuscope peak` (see kernels.hpp for the contracts).
#include "gpuscope/bench.hpp"
#include "peak/kernels.hpp"

namespace gpuscope::peak::detail {
namespace {

// Launched <<<1, 1>>> on one stream: launches are ordered, so the plain add cannot race.
__global__ void count_kernel(std::uint32_t* counter) { *counter += 1; }

__global__ void signal_kernel(std::uint32_t* flag, std::uint32_t value) {
  *static_cast<volatile std::uint32_t*>(flag) = value;
  __threadfence_system();
}

}  // namespace

void launch_count(std::uint32_t* counter, cudaStream_t stream) {
  count_kernel<<<1, 1, 0, stream>>>(counter);
  GPUSCOPE_CUDA_CALL(cudaGetLastError());
}

void launch_signal(std::uint32_t* flag, std::uint32_t value, cudaStream_t stream) {
  signal_kernel<<<1, 1, 0, stream>>>(flag, value);
  GPUSCOPE_CUDA_CALL(cudaGetLastError());
}

}  // namespace gpuscope::peak::detail
