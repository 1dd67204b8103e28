#include "bench/clock_probe.hpp"
#include "gpuscope/bench.hpp"

namespace gpuscope::bench {
namespace {

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void clock_probe_kernel(unsigned long long spin_ns, unsigned long long* out) {
  const unsigned long long t0 = global_ns();
  const long long c0 = clock64();
  unsigned long long t1 = t0;
  while (t1 - t0 < spin_ns) t1 = global_ns();
  const long long c1 = clock64();
  if (threadIdx.x == 0) {
    out[0] = static_cast<unsigned long long>(c1 - c0);
    out[1] = t1 - t0;
  }
}

}  // namespace

double probe_sm_clock_mhz(cudaStream_t stream, double spin_ns) {
  unsigned long long* device_out = nullptr;
  GPUSCOPE_CUDA_CALL(cudaMalloc(&device_out, 2 * sizeof(unsigned long long)));
  unsigned long long host_out[2] = {0, 0};
  cudaError_t status = cudaSuccess;
  clock_probe_kernel<<<1, 32, 0, stream>>>(static_cast<unsigned long long>(spin_ns), device_out);
  status = cudaGetLastError();
  if (status == cudaSuccess)
    status = cudaMemcpyAsync(host_out, device_out, sizeof host_out, cudaMemcpyDeviceToHost, stream);
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  cudaFree(device_out);
  if (status != cudaSuccess) throw CudaError(status, "clock_probe_kernel", __FILE__, __LINE__);
  return host_out[1] ? static_cast<double>(host_out[0]) / static_cast<double>(host_out[1]) * 1e3 : 0.0;
}

}  // namespace gpuscope::bench
