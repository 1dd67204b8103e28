// cupti_floor: what CUPTI itself costs per kernel launch, measured inside one process.
//
// Separate processes on the GPU machine differ by up to 2x in launch rate, more than the
// overhead targets (docs/performance.md), so this program compares configurations inside one
// process, interleaved: each round enables one configuration, times blocks of 200 <<<1,1>>>
// launches (host wall time, steady_clock, ns per launch), disables it, and moves to the next.
// It uses CUPTI directly, not gpuscope's collector, so the figures are a floor that any
// CUPTI-based tracer (gpuscope, nsys, Kineto) pays for the same records:
//   none            CUPTI subscribed, nothing enabled
//   kernel          CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL records only
//   cb              a callback on cudaLaunchKernel (runtime domain) that does nothing
//   kernel+cb       both: kernel records and the launch call they correlate with
//   kernel+cb+ts    as kernel+cb, the callback reading CLOCK_REALTIME on enter and exit and
//                   storing (correlation id, start, end) in an array, as a tracer must
//   +drv            also the callback on the driver's cuLaunchKernel, which a runtime launch
//                   calls inside itself (a tracer needs it for programs that launch through
//                   the driver: Triton, JAX, cuDNN)
//   +kinds          also MEMCPY, MEMSET and OVERHEAD records (what gpuscope's default adds;
//                   none of them occur in this loop)
//
// A second table times streams of 5000 launches up to their final cudaDeviceSynchronize (what
// launch_loop times) and reads, from the kernel records, how long each kernel took on the GPU
// and how far apart back-to-back kernels started.
//
// Phases before the interleaved table, in order: no CUPTI at all; subscribed with no activity
// kind ever enabled (alone and with the launch callback); and after the table, CUPTI detached
// with cuptiFinalize.
//
// Verifies its own work: the kernel increments a device counter once per launch and the
// CONCURRENT_KERNEL records delivered must equal the launches made while that kind was on.
// Usage: cupti_floor [ROUNDS=20] [BLOCKS=10]; prints a markdown table and RESULT lines.
#include <cupti.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace {

constexpr int kCallsPerBlock = 200;
// A long stream of launches timed up to its final cudaDeviceSynchronize, as launch_loop does:
// when the GPU takes longer per kernel than the host takes per launch, the launch queue fills
// and the host waits, so this measures the slower of the two.
constexpr int kStreamLaunches = 5000;
constexpr size_t kBufferBytes = 8u << 20;

__global__ void bump(unsigned* counter) { atomicAdd(counter, 1u); }

std::atomic<unsigned long long> g_kernel_records{0};
// GPU side: every kernel record's start and end (ns), tagged with the configuration that was on.
struct GpuSpan {
  int config;
  uint64_t start, end;
};
std::vector<GpuSpan> g_spans;
int g_config = 0;
std::atomic<unsigned long long> g_dropped{0};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      ++g_kernel_records;
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      g_spans.push_back({g_config, k->start, k->end});
    }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) g_dropped += dropped;
  std::free(buffer);
}

struct CallRecord {
  uint32_t correlation;
  uint64_t start, end;
};
std::vector<CallRecord> g_calls;
size_t g_next_call = 0;
bool g_timestamps = false;
uint64_t g_pending_start = 0;

uint64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Times the outermost call only: a runtime launch's nested cuLaunchKernel is part of it.
thread_local unsigned t_depth = 0;
void CUPTIAPI on_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
  if (!g_timestamps) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite == CUPTI_API_ENTER) {
    if (t_depth++ == 0) g_pending_start = realtime_ns();
  } else if (t_depth > 0 && --t_depth == 0 && g_next_call < g_calls.size()) {
    g_calls[g_next_call++] = {info->correlationId, g_pending_start, realtime_ns()};
  }
}

void check_cupti(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  std::fprintf(stderr, "cupti_floor: %s: %s\n", what, text ? text : "unknown CUPTI error");
  std::exit(2);
}

void check_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "cupti_floor: %s: %s\n", what, cudaGetErrorString(e));
  std::exit(2);
}

struct Config {
  const char* name;
  bool kernel, callback, timestamps, driver, kinds;
  std::vector<double> blocks;   // ns per launch, one per block of kCallsPerBlock (launch calls only)
  std::vector<double> streams;  // ns per launch, one per stream of kStreamLaunches, the final sync included
  unsigned long long launches_with_kernel_records = 0;
};

constexpr CUpti_ActivityKind kOtherKinds[] = {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                                              CUPTI_ACTIVITY_KIND_OVERHEAD};

void toggle(const Config& c, CUpti_SubscriberHandle subscriber, bool on) {
  if (c.kernel) {
    check_cupti(on ? cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
                   : cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
                "toggle kernel records");
  }
  if (c.kinds)
    for (CUpti_ActivityKind k : kOtherKinds)
      check_cupti(on ? cuptiActivityEnable(k) : cuptiActivityDisable(k), "toggle memcpy/memset/overhead records");
  if (c.callback)
    check_cupti(cuptiEnableCallback(on, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000),
                "toggle runtime callback");
  if (c.driver)
    check_cupti(cuptiEnableCallback(on, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel),
                "toggle driver callback");
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
  const int blocks = argc > 2 ? std::atoi(argv[2]) : 10;
  if (rounds < 1 || blocks < 1) {
    std::fprintf(stderr, "usage: cupti_floor [ROUNDS>=1] [BLOCKS>=1]\n");
    return 2;
  }
  unsigned* counter = nullptr;
  check_cuda(cudaMalloc(&counter, sizeof *counter), "cudaMalloc");
  check_cuda(cudaMemset(counter, 0, sizeof *counter), "cudaMemset");

  g_calls.resize(static_cast<size_t>(rounds) * 3 *
                 (static_cast<size_t>(blocks) * kCallsPerBlock + 50 + kStreamLaunches));
  g_spans.reserve(static_cast<size_t>(rounds) * 6 *
                  (static_cast<size_t>(blocks) * kCallsPerBlock + 50 + kStreamLaunches));

  std::vector<Config> configs = {{"none", false, false, false, false, false},
                                 {"kernel", true, false, false, false, false},
                                 {"cb", false, true, false, false, false},
                                 {"kernel+cb", true, true, false, false, false},
                                 {"kernel+cb+ts", true, true, true, false, false},
                                 {"kernel+cb+ts+drv", true, true, true, true, false},
                                 {"kernel+cb+ts+drv+kinds", true, true, true, true, true}};
  using Clock = std::chrono::steady_clock;
  unsigned long long launches = 0;
  auto launch = [&](int n) {
    for (int i = 0; i < n; ++i) bump<<<1, 1>>>(counter);
    launches += static_cast<unsigned long long>(n);
  };
  launch(2000);  // warm-up: module load, first-launch costs
  check_cuda(cudaDeviceSynchronize(), "warm-up");

  // One measurement of the configuration that is on: short blocks, then a long stream.
  auto measure = [&](Config& c) {
    launch(50);
    check_cuda(cudaDeviceSynchronize(), "block warm-up");
    for (int b = 0; b < blocks; ++b) {
      const auto t0 = Clock::now();
      launch(kCallsPerBlock);
      const auto t1 = Clock::now();
      c.blocks.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kCallsPerBlock);
      check_cuda(cudaDeviceSynchronize(), "block");
    }
    const auto s0 = Clock::now();
    launch(kStreamLaunches);
    check_cuda(cudaDeviceSynchronize(), "stream");
    c.streams.push_back(std::chrono::duration<double, std::nano>(Clock::now() - s0).count() / kStreamLaunches);
  };
  // Before CUPTI is touched at all: the same loops, not interleaved (CUPTI cannot be unloaded).
  Config before{"no CUPTI (before subscribing)", false, false, false, false, false};
  for (int r = 0; r < rounds; ++r) measure(before);

  CUpti_SubscriberHandle subscriber{};
  check_cupti(cuptiSubscribe(&subscriber, on_callback, nullptr), "cuptiSubscribe");
  check_cupti(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
  // Subscribed, no activity kind enabled yet: nothing, and the launch callback alone, interleaved.
  Config never{"subscribed, no activity kind ever enabled", false, false, false, false, false};
  Config never_cb{"launch callback, no activity kind ever enabled", false, true, false, false, false};
  for (int r = 0; r < rounds; ++r) {
    measure(never);
    toggle(never_cb, subscriber, true);
    measure(never_cb);
    toggle(never_cb, subscriber, false);
  }
  for (int r = 0; r < rounds; ++r) {
    for (Config& c : configs) {
      g_config = static_cast<int>(&c - configs.data());
      toggle(c, subscriber, true);
      g_timestamps = c.timestamps;
      measure(c);
      if (c.kernel)
        c.launches_with_kernel_records +=
            50ull + static_cast<unsigned long long>(blocks) * kCallsPerBlock + kStreamLaunches;
      g_timestamps = false;
      toggle(c, subscriber, false);
      check_cupti(cuptiActivityFlushAll(1), "flush");
    }
  }
  check_cupti(cuptiActivityFlushAll(1), "final flush");
  // CUPTI detached (what gpuscope does after the last capture window): does the launch
  // path get its speed back?
  check_cupti(cuptiUnsubscribe(subscriber), "cuptiUnsubscribe");
  check_cupti(cuptiFinalize(), "cuptiFinalize");
  Config after{"after cuptiFinalize", false, false, false, false, false};
  for (int r = 0; r < rounds; ++r) measure(after);
  unsigned device_count = 0;
  check_cuda(cudaMemcpy(&device_count, counter, sizeof device_count, cudaMemcpyDeviceToHost), "read counter");

  unsigned long long expected_records = 0;
  for (const Config& c : configs) expected_records += c.launches_with_kernel_records;
  const bool ok =
      device_count == static_cast<unsigned>(launches) && g_kernel_records == expected_records && g_dropped == 0;
  std::printf("cupti_floor: %d rounds x %d blocks x %d <<<1,1>>> launches per configuration, interleaved\n", rounds,
              blocks, kCallsPerBlock);
  std::printf(
      "check: kernel ran %u of %llu launches; %llu CONCURRENT_KERNEL records of %llu expected; "
      "%llu dropped; %zu launch calls timed: %s\n",
      device_count, launches, static_cast<unsigned long long>(g_kernel_records), expected_records,
      static_cast<unsigned long long>(g_dropped), g_next_call, ok ? "ok" : "MISMATCH");
  std::printf(
      "\nPhases in order (not interleaved with the table below):\n\n| phase | fastest block (ns/launch) | "
      "median block (ns/launch) | stream + sync (ns/launch, median) |\n|---|---:|---:|---:|\n");
  for (const Config* c : {&before, &never, &never_cb, &after})
    std::printf("| %s | %.0f | %.0f | %.0f |\n", c->name, *std::min_element(c->blocks.begin(), c->blocks.end()),
                median(c->blocks), median(c->streams));
  std::printf("\nInterleaved, after the first activity kind was enabled:\n");
  const double base_min = *std::min_element(configs[0].blocks.begin(), configs[0].blocks.end());
  const double base_med = median(configs[0].blocks);
  std::printf("\n| configuration | fastest block (ns/launch) | added | median block (ns/launch) | added |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  for (const Config& c : configs) {
    const double mn = *std::min_element(c.blocks.begin(), c.blocks.end());
    const double md = median(c.blocks);
    std::printf("| %s | %.0f | %+.0f ns (%+.1f %%) | %.0f | %+.0f ns (%+.1f %%) |\n", c.name, mn, mn - base_min,
                100.0 * (mn - base_min) / base_min, md, md - base_med, 100.0 * (md - base_med) / base_med);
  }
  // GPU side, from the kernel records: how long each kernel ran, and the spacing of the
  // starts of kernels that ran back to back (gap < 20 us) = the GPU's time per kernel.
  std::printf(
      "\n| configuration | stream of %d launches + sync (ns/launch, median) | added | GPU kernel duration "
      "(ns, median) | GPU start-to-start, back to back (ns, median) |\n|---|---:|---:|---:|---:|\n",
      kStreamLaunches);
  const double base_stream = median(configs[0].streams);
  std::sort(g_spans.begin(), g_spans.end(), [](const GpuSpan& a, const GpuSpan& b) { return a.start < b.start; });
  for (size_t i = 0; i < configs.size(); ++i) {
    std::vector<double> durations, gaps;
    const GpuSpan* prev = nullptr;
    for (const GpuSpan& sp : g_spans) {
      if (sp.config != static_cast<int>(i)) continue;
      durations.push_back(static_cast<double>(sp.end - sp.start));
      if (prev != nullptr && sp.start - prev->start < 20000)
        gaps.push_back(static_cast<double>(sp.start - prev->start));
      prev = &sp;
    }
    const double st = median(configs[i].streams);
    if (durations.empty()) {
      std::printf("| %s | %.0f | %+.0f ns (%+.1f %%) | - | - |\n", configs[i].name, st, st - base_stream,
                  100.0 * (st - base_stream) / base_stream);
    } else {
      std::printf("| %s | %.0f | %+.0f ns (%+.1f %%) | %.0f | %.0f |\n", configs[i].name, st, st - base_stream,
                  100.0 * (st - base_stream) / base_stream, median(durations), median(gaps));
    }
  }
  for (const Config& c : configs)
    std::printf("RESULT config=%s min_ns=%.1f median_ns=%.1f stream_median_ns=%.1f\n", c.name,
                *std::min_element(c.blocks.begin(), c.blocks.end()), median(c.blocks), median(c.streams));
  return ok ? 0 : 1;
}
