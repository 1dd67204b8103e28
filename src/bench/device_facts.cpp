#include "bench/device_facts.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>

#include "bench/nvml.hpp"
#include "gpuscope/bench.hpp"

namespace gpuscope::bench {

DeviceFacts query_device_facts(int device) {
  cudaDeviceProp p{};
  GPUSCOPE_CUDA_CALL(cudaGetDeviceProperties(&p, device));
  DeviceFacts f;
  f.name = p.name;
  char uuid[64];
  const auto* u = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
  std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  f.uuid = uuid;
  f.cc_major = p.major;
  f.cc_minor = p.minor;
  f.sm_count = p.multiProcessorCount;
  f.global_memory_bytes = static_cast<std::int64_t>(p.totalGlobalMem);
  f.l2_bytes = p.l2CacheSize;
  f.shared_memory_per_sm_bytes = static_cast<std::int64_t>(p.sharedMemPerMultiprocessor);
  f.memory_bus_width_bits = p.memoryBusWidth;
  int khz = 0;
  GPUSCOPE_CUDA_CALL(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  if (khz > 0) f.max_sm_clock_mhz = khz / 1000.0;
  GPUSCOPE_CUDA_CALL(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device));
  if (khz > 0) f.max_mem_clock_mhz = khz / 1000.0;
  f.driver_version = Nvml::instance().driver_version();
  if (f.driver_version.empty()) {
    int v = 0;
    if (cudaDriverGetVersion(&v) == cudaSuccess) f.driver_version = std::to_string(v);
  }
  GPUSCOPE_CUDA_CALL(cudaRuntimeGetVersion(&f.cuda_runtime_version));
  return f;
}

std::string cuda_device_problem(int device) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls report their own
    return std::string("no usable CUDA GPU (cudaGetDeviceCount: ") + cudaGetErrorString(status) + ", " +
           cudaGetErrorName(status) + ")";
  }
  if (count == 0) return "no CUDA-capable GPU was found (cudaGetDeviceCount returned 0)";
  if (device < 0 || device >= count)
    return "device " + std::to_string(device) + " does not exist: " + std::to_string(count) + " GPU" +
           (count == 1 ? "" : "s") + " visible (CUDA_VISIBLE_DEVICES applies)";
  return "";
}

}  // namespace gpuscope::bench
