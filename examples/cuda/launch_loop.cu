// launch_loop: a launch-bound loop for overhead measurements and capture-range tests.
//
//   launch_loop [N] [--profiler-range A B] [--warmup-ms M] [--stop-file PATH]
//
// Launches a tiny <<<1,32>>> kernel N times (default 20000); each launch adds 1 to a
// device counter, and the final counter must equal N. The loop plus a final
// cudaDeviceSynchronize is timed with std::chrono (the kernel is loaded beforehand with
// cudaFuncGetAttributes, so lazy module loading is not timed).
// With --profiler-range A B, cudaProfilerStart() is called just before launch A and
// cudaProfilerStop() just after launch B (0-based, inclusive: B - A + 1 launches inside),
// each preceded by a cudaDeviceSynchronize so no other launch is in flight at the edges.
// With --warmup-ms M, untimed launches run for M milliseconds first (so CPU and GPU clocks
// settle; they count towards the counter and are reported as warmup_launches).
// With --stop-file PATH, the loop also ends early once PATH exists (checked every 4096 launches
// with stat, about 1 us per check): a test that needs the program only while it works on it
// (session windows) ends it without a signal; launches= then says how many were made.
// Last line: RESULT launches=N us_per_launch=X counter=N [profiled_launches=B-A+1]
// Exit status: 0 if the counter is right, 1 if not, 2 on a usage or CUDA error.
#include <cuda_profiler_api.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "example_check.cuh"

__global__ void tick(unsigned long long* counter) {
  if (threadIdx.x == 0) atomicAdd(counter, 1ULL);
}

namespace {

int usage() {
  std::fprintf(stderr, "usage: launch_loop [N] [--profiler-range A B] [--warmup-ms M] [--stop-file PATH]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using gpuscope::examples::parse_count;
  long long n = 20000;
  long long range_a = -1, range_b = -1;
  long long warmup_ms = 0;
  const char* stop_file = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--profiler-range") == 0) {
      if (i + 2 >= argc) return usage();
      range_a = parse_count(argv[i + 1], "A");
      range_b = parse_count(argv[i + 2], "B");
      i += 2;
    } else if (std::strcmp(argv[i], "--warmup-ms") == 0) {
      if (i + 1 >= argc) return usage();
      warmup_ms = parse_count(argv[++i], "M");
    } else if (std::strcmp(argv[i], "--stop-file") == 0) {
      if (i + 1 >= argc) return usage();
      stop_file = argv[++i];
    } else if (argv[i][0] == '-') {
      return usage();
    } else {
      n = parse_count(argv[i], "N");
    }
  }
  const bool profiler_range = range_a >= 0;
  if (profiler_range && (range_b < range_a || range_b >= n)) {
    std::fprintf(stderr, "--profiler-range needs 0 <= A <= B < N (got %lld %lld, N=%lld)\n", range_a, range_b, n);
    return 2;
  }

  unsigned long long* counter = nullptr;
  GPUSCOPE_EXAMPLE_CHECK(cudaMalloc(&counter, sizeof(*counter)));
  GPUSCOPE_EXAMPLE_CHECK(cudaMemset(counter, 0, sizeof(*counter)));
  cudaFuncAttributes attributes{};
  GPUSCOPE_EXAMPLE_CHECK(cudaFuncGetAttributes(&attributes, tick));  // loads the kernel
  GPUSCOPE_EXAMPLE_CHECK(cudaDeviceSynchronize());

  long long warmup = 0;
  const auto warm_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(warmup_ms);
  while (warmup_ms > 0 && std::chrono::steady_clock::now() < warm_end) {
    for (int j = 0; j < 100; ++j) tick<<<1, 32>>>(counter);
    GPUSCOPE_EXAMPLE_CHECK_LAUNCH();
    warmup += 100;
  }
  GPUSCOPE_EXAMPLE_CHECK(cudaDeviceSynchronize());

  const auto start = std::chrono::steady_clock::now();
  for (long long i = 0; i < n; ++i) {
    struct stat st {};
    if (stop_file != nullptr && (i & 4095) == 0 && i > 0 && stat(stop_file, &st) == 0) {
      n = i;  // asked to stop: the launches made so far are the run
      break;
    }
    if (profiler_range && i == range_a) {
      GPUSCOPE_EXAMPLE_CHECK(cudaDeviceSynchronize());
      GPUSCOPE_EXAMPLE_CHECK(cudaProfilerStart());
    }
    tick<<<1, 32>>>(counter);
    GPUSCOPE_EXAMPLE_CHECK_LAUNCH();
    if (profiler_range && i == range_b) {
      GPUSCOPE_EXAMPLE_CHECK(cudaDeviceSynchronize());
      GPUSCOPE_EXAMPLE_CHECK(cudaProfilerStop());
    }
  }
  GPUSCOPE_EXAMPLE_CHECK(cudaDeviceSynchronize());
  const auto stop = std::chrono::steady_clock::now();

  unsigned long long host_counter = 0;
  GPUSCOPE_EXAMPLE_CHECK(cudaMemcpy(&host_counter, counter, sizeof(host_counter), cudaMemcpyDeviceToHost));
  GPUSCOPE_EXAMPLE_CHECK(cudaFree(counter));

  const double us = std::chrono::duration<double, std::micro>(stop - start).count();
  const double us_per_launch = n > 0 ? us / static_cast<double>(n) : 0.0;
  std::printf("RESULT launches=%lld us_per_launch=%.3f counter=%llu", n, us_per_launch, host_counter);
  if (profiler_range) std::printf(" profiled_launches=%lld", range_b - range_a + 1);
  if (warmup > 0) std::printf(" warmup_launches=%lld", warmup);
  std::printf("\n");
  if (host_counter != static_cast<unsigned long long>(n + warmup)) {
    std::fprintf(stderr, "launch_loop: counter is %llu, expected %lld\n", host_counter, n + warmup);
    return 1;
  }
  return 0;
}
