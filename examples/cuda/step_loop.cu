// step_loop: a C++ loop of repeated kernels that times itself, iteration by iteration: the
// C++ program of the steady-state check (validation/steady_check.py, tests/gpu/test_steady_state.py).
//
//   step_loop [--iterations N] [--warmup W] [--elements E] [--reps R] [--clock FILE]
//
// Each iteration fills a buffer of E floats (default 4M), runs R (default 8000) FMAs per element
// on it, zeroes a float (cudaMemsetAsync), sums the buffer into it (atomicAdd per block) and
// copies the sum to the host with a blocking cudaMemcpy (as a training step's loss.item()): 3
// kernels, a memset and a memcpy, about 1 ms on an H100.
// The first W iterations (default 3) are a warm-up that differs, as cuDNN's autotuning does:
// before the FMA kernel they time it at each of 5 block sizes (its 5 template instances, each
// another kernel name, timed with CUDA events) and keep the fastest; iteration 0 also allocates
// its buffers.
// After each iteration (its sum on the host) the program reads its clocks: the wall time of the
// iteration (std::chrono::steady_clock, from the end of the previous one) and the end on
// CLOCK_REALTIME (gpuscope's trace clock). With --clock FILE (or the environment variable
// GPUSCOPE_STEADY_CLOCK), one JSON line per iteration:
//   {"kind": "step", "i": I, "ms": MS, "end_ns": NS}
// and before the loop one line {"kind": "start", "end_ns": NS} (the start of iteration 0).
// Last line on stdout: RESULT iterations=N warmup=W median_ms=M first_ms=F sum_ok=1
// Exit status: 0 when every sum is right, 1 when one is not, 2 on a usage or CUDA error.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iterator>
#include <vector>

#include "example_check.cuh"

__global__ void fill(float* x, long long n, float v) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    x[i] = v;
}

// x = x * a + b repeated (a = 1, b = 0 at run time, so the compiler cannot drop the loop): the
// values stay exact, the time grows with reps.
template <int kBlock>
__global__ void __launch_bounds__(kBlock) fma_loop(float* x, long long n, int reps, float a, float b) {
  for (long long i = blockIdx.x * static_cast<long long>(kBlock) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * kBlock) {
    float v = x[i];
    for (int r = 0; r < reps; ++r) v = fmaf(v, a, b);
    x[i] = v;
  }
}

__global__ void reduce_sum(const float* x, long long n, float* out) {
  __shared__ float part[256];
  float s = 0.0f;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    s += x[i];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, part[0]);
}

namespace {

constexpr int kBlocks = 1024;
constexpr int kReduceThreads = 256;  // part[] above
// The FMA kernel's candidate block sizes, each its own template instance (another kernel name).
using FmaKernel = void (*)(float*, long long, int, float, float);
constexpr int kCandidates[] = {64, 128, 256, 512, 1024};
constexpr FmaKernel kFmaKernels[] = {fma_loop<64>, fma_loop<128>, fma_loop<256>, fma_loop<512>, fma_loop<1024>};

// Candidate c of kCandidates over x.
void launch_fma(int c, float* x, long long n, int reps) {
  kFmaKernels[c]<<<kBlocks, kCandidates[c]>>>(x, n, reps, 1.0f, 0.0f);
  GPUSCOPE_EXAMPLE_CHECK_LAUNCH();
}

// The fastest candidate (index into kCandidates) of the FMA kernel, each timed once with CUDA
// events (the warm-up's "autotuning").
int tune(float* x, long long n, int reps) {
  cudaEvent_t a, b;
  GPUSCOPE_EXAMPLE_CHECK(cudaEventCreate(&a));
  GPUSCOPE_EXAMPLE_CHECK(cudaEventCreate(&b));
  int best = 0;
  float best_ms = 1e30f;
  for (int c = 0; c < static_cast<int>(std::size(kCandidates)); ++c) {
    GPUSCOPE_EXAMPLE_CHECK(cudaEventRecord(a));
    launch_fma(c, x, n, reps);
    GPUSCOPE_EXAMPLE_CHECK(cudaEventRecord(b));
    GPUSCOPE_EXAMPLE_CHECK(cudaEventSynchronize(b));
    float ms = 0.0f;
    GPUSCOPE_EXAMPLE_CHECK(cudaEventElapsedTime(&ms, a, b));
    if (ms < best_ms) best_ms = ms, best = c;
  }
  GPUSCOPE_EXAMPLE_CHECK(cudaEventDestroy(a));
  GPUSCOPE_EXAMPLE_CHECK(cudaEventDestroy(b));
  return best;
}

long long realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

int usage() {
  std::fprintf(stderr, "usage: step_loop [--iterations N] [--warmup W] [--elements E] [--reps R] [--clock FILE]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using gpuscope::examples::parse_count;
  long long iterations = 40, warmup = 3, elements = 1LL << 22, reps = 8000;
  const char* clock_path = std::getenv("GPUSCOPE_STEADY_CLOCK");
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--iterations") == 0 && has_value) {
      iterations = parse_count(argv[++i], "N");
    } else if (std::strcmp(argv[i], "--warmup") == 0 && has_value) {
      warmup = parse_count(argv[++i], "W");
    } else if (std::strcmp(argv[i], "--elements") == 0 && has_value) {
      elements = parse_count(argv[++i], "E");
    } else if (std::strcmp(argv[i], "--reps") == 0 && has_value) {
      reps = parse_count(argv[++i], "R");
    } else if (std::strcmp(argv[i], "--clock") == 0 && has_value) {
      clock_path = argv[++i];
    } else {
      return usage();
    }
  }
  if (iterations < 1 || elements < 1 || warmup > iterations) {
    std::fprintf(stderr, "step_loop: need N >= 1, E >= 1 and W <= N\n");
    return 2;
  }
  std::FILE* clock_file = nullptr;
  if (clock_path && *clock_path) {
    clock_file = std::fopen(clock_path, "w");
    if (!clock_file) {
      std::fprintf(stderr, "step_loop: cannot write the clock file %s\n", clock_path);
      return 2;
    }
  }

  GPUSCOPE_EXAMPLE_CHECK(cudaFree(nullptr));  // the context, before the clock starts
  float* x = nullptr;
  float* sum = nullptr;
  int best = 2;  // kCandidates[2] = 256 until tuned
  bool sums_ok = true;
  std::vector<double> ms;
  if (clock_file) std::fprintf(clock_file, "{\"kind\": \"start\", \"end_ns\": %lld}\n", realtime_ns());
  auto last = std::chrono::steady_clock::now();
  for (long long it = 0; it < iterations; ++it) {
    if (it == 0) {
      GPUSCOPE_EXAMPLE_CHECK(cudaMalloc(&x, elements * sizeof(float)));
      GPUSCOPE_EXAMPLE_CHECK(cudaMalloc(&sum, sizeof(float)));
    }
    fill<<<kBlocks, 256>>>(x, elements, 1.0f);
    GPUSCOPE_EXAMPLE_CHECK_LAUNCH();
    if (it < warmup) best = tune(x, elements, static_cast<int>(reps));
    launch_fma(best, x, elements, static_cast<int>(reps));
    GPUSCOPE_EXAMPLE_CHECK(cudaMemsetAsync(sum, 0, sizeof(float)));
    reduce_sum<<<kBlocks, kReduceThreads>>>(x, elements, sum);
    GPUSCOPE_EXAMPLE_CHECK_LAUNCH();
    float host = 0.0f;
    GPUSCOPE_EXAMPLE_CHECK(cudaMemcpy(&host, sum, sizeof(float), cudaMemcpyDeviceToHost));
    const auto now = std::chrono::steady_clock::now();
    const long long end_ns = realtime_ns();
    ms.push_back(std::chrono::duration<double, std::milli>(now - last).count());
    last = now;
    // Every element is 1: the sum is exact in float up to 2^24 elements, close above.
    if (std::fabs(host - static_cast<double>(elements)) > 1e-3 * static_cast<double>(elements)) sums_ok = false;
    if (clock_file)
      std::fprintf(clock_file, "{\"kind\": \"step\", \"i\": %lld, \"ms\": %.6f, \"end_ns\": %lld}\n", it, ms.back(),
                   end_ns);
  }
  if (clock_file) std::fclose(clock_file);
  GPUSCOPE_EXAMPLE_CHECK(cudaFree(x));
  GPUSCOPE_EXAMPLE_CHECK(cudaFree(sum));

  std::vector<double> steady(ms.begin() + warmup, ms.end());
  if (steady.empty()) steady = ms;
  std::sort(steady.begin(), steady.end());
  const double median = steady[steady.size() / 2];
  std::printf(
      "step_loop: %lld iterations of 5 GPU operations (block %d chosen), first %.3f ms, median after %lld warm-up %.3f "
      "ms\n",
      iterations, kCandidates[best], ms.front(), warmup, median);
  std::printf("RESULT iterations=%lld warmup=%lld median_ms=%.4f first_ms=%.4f sum_ok=%d\n", iterations, warmup, median,
              ms.front(), sums_ok ? 1 : 0);
  if (!sums_ok) {
    std::fprintf(stderr, "step_loop: a sum differs from %lld\n", elements);
    return 1;
  }
  return 0;
}
