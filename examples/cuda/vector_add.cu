// vector_add: the tutorial's first example, instrumented for gpuscope tests.
//
//   vector_add [N]        N floats (default 1<<20)
//
// Phase "serial":   add<<<1,1>>> over cudaMallocManaged memory (one thread does all).
// Phase "parallel": grid-stride add<<<blocks,256>>> over cudaMalloc memory, with
//                   explicit cudaMemcpy of x and y to the device and y back.
// Both compute y = x + y with x = 1, y = 2 and check every element equals 3.
// NVTX ranges: "vector_add" (depth 0) containing "serial" and "parallel" (depth 1);
// the main thread is named "main". The last line is machine-readable:
//   RESULT launches=2 h2d_bytes=... d2h_bytes=... n=... max_error=... checksum=...
// Exit status: 0 if both results are right, 1 if not, 2 on a CUDA error.
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "example_check.cuh"

// y[i] = x[i] + y[i]; grid-stride, so any launch shape covers all n. (Kernels stay out
// of the anonymous namespace so traces show plain names such as "add(...)".)
__global__ void add(long long n, const float* x, float* y) {
  long long index = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  long long stride = static_cast<long long>(blockDim.x) * gridDim.x;
  for (long long i = index; i < n; i += stride) y[i] = x[i] + y[i];
}

namespace {

float max_error(const float* y, long long n) {
  float err = 0.0f;
  for (long long i = 0; i < n; ++i) err = std::fmax(err, std::fabs(y[i] - 3.0f));
  return err;
}

}  // namespace

int main(int argc, char** argv) {
  long long n = 1LL << 20;
  if (argc > 1) n = gpuscope::examples::parse_count(argv[1], "N");
  if (n <= 0) {
    std::fprintf(stderr, "N must be positive\n");
    return 2;
  }
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  long long launches = 0;
  unsigned long long h2d_bytes = 0, d2h_bytes = 0;

  nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), "main");
  nvtxRangePushA("vector_add");

  // Serial phase: one thread, unified memory.
  nvtxRangePushA("serial");
  float *mx = nullptr, *my = nullptr;
  GPUSCOPE_EXAMPLE_CHECK(cudaMallocManaged(&mx, bytes));
  GPUSCOPE_EXAMPLE_CHECK(cudaMallocManaged(&my, bytes));
  for (long long i = 0; i < n; ++i) {
    mx[i] = 1.0f;
    my[i] = 2.0f;
  }
  add<<<1, 1>>>(n, mx, my);
  GPUSCOPE_EXAMPLE_CHECK_LAUNCH();
  ++launches;
  GPUSCOPE_EXAMPLE_CHECK(cudaDeviceSynchronize());
  const float serial_error = max_error(my, n);
  GPUSCOPE_EXAMPLE_CHECK(cudaFree(mx));
  GPUSCOPE_EXAMPLE_CHECK(cudaFree(my));
  nvtxRangePop();

  // Parallel phase: many threads, device memory, explicit copies.
  nvtxRangePushA("parallel");
  std::vector<float> hx(static_cast<size_t>(n), 1.0f), hy(static_cast<size_t>(n), 2.0f);
  float *dx = nullptr, *dy = nullptr;
  GPUSCOPE_EXAMPLE_CHECK(cudaMalloc(&dx, bytes));
  GPUSCOPE_EXAMPLE_CHECK(cudaMalloc(&dy, bytes));
  GPUSCOPE_EXAMPLE_CHECK(cudaMemcpy(dx, hx.data(), bytes, cudaMemcpyHostToDevice));
  GPUSCOPE_EXAMPLE_CHECK(cudaMemcpy(dy, hy.data(), bytes, cudaMemcpyHostToDevice));
  h2d_bytes += 2 * bytes;
  const int block = 256;
  const long long blocks = (n + block - 1) / block;
  add<<<static_cast<unsigned>(blocks), block>>>(n, dx, dy);
  GPUSCOPE_EXAMPLE_CHECK_LAUNCH();
  ++launches;
  GPUSCOPE_EXAMPLE_CHECK(cudaMemcpy(hy.data(), dy, bytes, cudaMemcpyDeviceToHost));
  d2h_bytes += bytes;
  const float parallel_error = max_error(hy.data(), n);
  double checksum = 0.0;
  for (float v : hy) checksum += v;
  GPUSCOPE_EXAMPLE_CHECK(cudaFree(dx));
  GPUSCOPE_EXAMPLE_CHECK(cudaFree(dy));
  nvtxRangePop();

  nvtxRangePop();  // vector_add

  const float err = std::fmax(serial_error, parallel_error);
  std::printf("serial max error: %g\nparallel max error: %g\n", serial_error, parallel_error);
  std::printf("RESULT launches=%lld h2d_bytes=%llu d2h_bytes=%llu n=%lld max_error=%g checksum=%.1f\n", launches,
              h2d_bytes, d2h_bytes, n, err, checksum);
  if (err != 0.0f) {
    std::fprintf(stderr, "vector_add: wrong result (max error %g)\n", err);
    return 1;
  }
  return 0;
}
