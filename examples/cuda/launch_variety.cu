// launch_variety: CPU time per kernel launch for launches that differ the way a framework's do:
// one kernel or 64 distinct kernels in turn, 8 bytes or 1 KiB of parameters, one thread or 1,024
// blocks of 256 threads. Each variant is timed in blocks of 200 launch calls (the call only; a
// cudaDeviceSynchronize after each block, untimed), 40 blocks, variants interleaved, after 2,000
// warm-up launches each. One more, one_small_idle_gpu, launches one kernel onto an idle GPU each
// time (a cudaDeviceSynchronize before each launch, untimed; the launch call alone is timed), as
// most launches of a CPU-bound training step find the GPU: a block's figure is the mean of its
// 200 calls. validation/launch_variety.py runs it untraced and under gpuscope trace,
// alternating, to see what tracing adds to each kind (docs/performance.md).
// Prints "RESULT VARIANT min=NS median=NS mean=NS" (ns per launch) per variant, and checks that
// every launch ran: the device counter must equal the sum the launches added (exit 1 otherwise).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace {

struct Big {
  int v[256];  // 1 KiB of kernel parameters
};

template <int K>
__global__ void k_small(unsigned long long* c) {
  if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(c, 1ull);
}
template <int K>
__global__ void k_big(unsigned long long* c, Big b) {
  if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(c, static_cast<unsigned long long>(b.v[K % 256]));
}

using Launch = void (*)(unsigned long long*);
template <int... K>
std::vector<Launch> smalls(std::integer_sequence<int, K...>) {
  return {[](unsigned long long* c) { k_small<K><<<1, 1>>>(c); }...};
}
template <int... K>
std::vector<Launch> bigs(std::integer_sequence<int, K...>) {
  return {[](unsigned long long* c) {
    Big b{};
    b.v[K % 256] = 1;
    k_big<K><<<1, 1>>>(c, b);
  }...};
}
template <int... K>
std::vector<Launch> grids(std::integer_sequence<int, K...>) {
  return {[](unsigned long long* c) { k_small<K><<<1024, 256>>>(c); }...};
}

constexpr int kBlocks = 40;
constexpr int kPerBlock = 200;
constexpr int kWarmup = 2000;

}  // namespace

int main() {
  unsigned long long* counter = nullptr;
  if (cudaMalloc(&counter, sizeof *counter) != cudaSuccess || cudaMemset(counter, 0, sizeof *counter) != cudaSuccess) {
    std::fprintf(stderr, "launch_variety: no CUDA device\n");
    return 2;
  }
  const std::vector<std::pair<std::string, std::vector<Launch>>> variants = {
      {"one_small", smalls(std::make_integer_sequence<int, 1>{})},
      {"64_small", smalls(std::make_integer_sequence<int, 64>{})},
      {"one_1KiB", bigs(std::make_integer_sequence<int, 1>{})},
      {"64_1KiB", bigs(std::make_integer_sequence<int, 64>{})},
      {"64_grid1024", grids(std::make_integer_sequence<int, 64>{})}};
  unsigned long long launched = 0;
  for (const auto& [name, f] : variants)
    for (int i = 0; i < kWarmup; ++i, ++launched) f[i % f.size()](counter);
  cudaDeviceSynchronize();
  std::vector<std::vector<double>> ns(variants.size() + 1);
  for (int b = 0; b < kBlocks; ++b) {
    double idle_ns = 0;
    for (int i = 0; i < kPerBlock; ++i, ++launched) {
      cudaDeviceSynchronize();
      const auto t0 = std::chrono::steady_clock::now();
      k_small<0><<<1, 1>>>(counter);
      idle_ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    }
    ns[variants.size()].push_back(idle_ns / kPerBlock);
    for (std::size_t j = 0; j < variants.size(); ++j) {
      const auto& f = variants[j].second;
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < kPerBlock; ++i) f[i % f.size()](counter);
      const auto t1 = std::chrono::steady_clock::now();
      launched += kPerBlock;
      ns[j].push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kPerBlock);
      cudaDeviceSynchronize();
    }
  }
  unsigned long long seen = 0;
  cudaMemcpy(&seen, counter, sizeof seen, cudaMemcpyDeviceToHost);
  for (std::size_t j = 0; j < ns.size(); ++j) {
    std::vector<double> v = ns[j];
    std::sort(v.begin(), v.end());
    double mean = 0;
    for (double x : v) mean += x / v.size();
    const char* name = j < variants.size() ? variants[j].first.c_str() : "one_small_idle_gpu";
    std::printf("RESULT %s min=%.0f median=%.0f mean=%.0f\n", name, v.front(), v[v.size() / 2], mean);
  }
  if (cudaGetLastError() != cudaSuccess || seen != launched) {
    std::fprintf(stderr, "launch_variety: %llu of %llu launches ran\n", seen, launched);
    return 1;
  }
  return 0;
}
