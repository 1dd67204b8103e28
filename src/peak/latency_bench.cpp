// LatencyBench: launch rate, launch-to-start latency, per-kernel cost inside a CUDA graph,
// and the launch + cudaStreamSynchronize round trip. All use the one-thread count kernel
// (or the signal kernel), so the device counter proves that every launch ran.
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/nvml.hpp"
#include "peak/benchmarks.hpp"

namespace gpuscope::peak::detail {
namespace {

using steady = std::chrono::steady_clock;

constexpr int kLaunchesPerSample = 2000;  // launch_rate: back-to-back launches per sample
constexpr int kGraphNodes = 1000;         // graph_kernel_cost: kernels per graph
constexpr int kMaxReps = 20000;
constexpr double kSignalTimeoutS = 2.0;

double seconds_since(steady::time_point t0) { return std::chrono::duration<double>(steady::now() - t0).count(); }

// Calls `rep` (returning one sample in seconds) after `warmup` untimed calls until the
// budget is spent and at least `min_reps` samples exist; the SM clock is read around it.
struct HostSamples {
  std::vector<double> samples_s;
  double sm_before = kUnknown, sm_after = kUnknown, mem = kUnknown;
};
template <class Rep>
HostSamples host_samples(const Context& ctx, int warmup, int min_reps, Rep rep) {
  const bench::Nvml& nvml = bench::Nvml::instance();
  for (int i = 0; i < warmup; ++i) (void)rep();
  HostSamples h;
  h.sm_before = nvml.sm_clock_mhz(ctx.device);
  const auto start = steady::now();
  while ((static_cast<int>(h.samples_s.size()) < min_reps || seconds_since(start) < ctx.budget_s) &&
         static_cast<int>(h.samples_s.size()) < kMaxReps)
    h.samples_s.push_back(rep());
  h.sm_after = nvml.sm_clock_mhz(ctx.device);
  h.mem = nvml.mem_clock_mhz(ctx.device);
  return h;
}

std::string count_detail(std::uint64_t got, std::uint64_t want) {
  return "device counter " + std::to_string(got) + ", launches " + std::to_string(want);
}

}  // namespace

LatencyBench::LatencyBench(const Context& ctx)
    : m_ctx(ctx), m_counter(sizeof(std::uint32_t)), m_flag(sizeof(std::uint32_t), cudaHostAllocMapped) {
  GPUSCOPE_CUDA_CALL(cudaMemset(m_counter.get(), 0, sizeof(std::uint32_t)));
}

std::uint32_t LatencyBench::counter_value() {
  std::uint32_t v = 0;
  GPUSCOPE_CUDA_CALL(cudaMemcpyAsync(&v, m_counter.get(), sizeof v, cudaMemcpyDeviceToHost, m_stream.get()));
  GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(m_stream.get()));
  return v;
}

Ceiling LatencyBench::launches_then_sync(std::string_view name, int per_sample, int warmup, int min_reps, bool as_rate,
                                         std::string method) {
  const cudaStream_t st = m_stream.get();
  auto* counter = m_counter.as<std::uint32_t>();
  const std::uint32_t before = counter_value();
  std::uint64_t launches = 0;
  const HostSamples h = host_samples(m_ctx, warmup, min_reps, [&] {
    const auto t0 = steady::now();
    for (int i = 0; i < per_sample; ++i) launch_count(counter, st);
    GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(st));
    launches += per_sample;
    return seconds_since(t0) / per_sample;
  });
  Ceiling c = ceiling_from_host_samples(name, h.samples_s, as_rate, h.sm_before, h.sm_after, h.mem, std::move(method));
  const std::uint32_t got = counter_value() - before;
  mark_verified(c, got == static_cast<std::uint32_t>(launches), count_detail(got, launches));
  return c;
}

Ceiling LatencyBench::launch_rate() {
  return launches_then_sync("launch_rate", kLaunchesPerSample, 2, m_ctx.quick ? 5 : 10, true,
                            std::to_string(kLaunchesPerSample) +
                                " back-to-back <<<1,1>>> launches on one stream, first launch call to "
                                "cudaStreamSynchronize return, per launch");
}

Ceiling LatencyBench::launch_latency() {
  const cudaStream_t st = m_stream.get();
  std::uint32_t* device_flag = nullptr;
  GPUSCOPE_CUDA_CALL(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flag), m_flag.get(), 0));
  volatile std::uint32_t* host_flag = m_flag.as<std::uint32_t>();
  *host_flag = 0;
  std::uint32_t value = 0;
  const HostSamples h = host_samples(m_ctx, 10, m_ctx.quick ? 50 : 200, [&] {
    ++value;
    GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(st));  // an idle stream
    const auto t0 = steady::now();
    launch_signal(device_flag, value, st);
    while (*host_flag != value) {
      if (seconds_since(t0) > kSignalTimeoutS)  // never seen: stop, do not wait 2 s per repetition
        throw std::runtime_error("the signal kernel's store to mapped pinned memory did not reach the host within " +
                                 std::to_string(kSignalTimeoutS) + " s");
    }
    return seconds_since(t0);
  });
  GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(st));
  Ceiling c = ceiling_from_host_samples(
      "launch_latency", h.samples_s, false, h.sm_before, h.sm_after, h.mem,
      "<<<1,1>>> kernel storing to mapped pinned memory, launch call on an idle stream until the host sees the store");
  mark_verified(c, *host_flag == value,
                "host saw " + std::to_string(*host_flag) + ", last value written " + std::to_string(value));
  return c;
}

Ceiling LatencyBench::graph_kernel_cost() {
  auto* counter = m_counter.as<std::uint32_t>();
  const std::uint32_t before = counter_value();
  // The engine calls the enqueue directly during warm-up and batch times while capturing
  // (those launches run only inside the graph): count calls to know what ran.
  std::uint64_t calls = 0;
  const bench::TimingResult t = bench::time_gpu(
      [&](cudaStream_t st) {
        ++calls;
        launch_count(counter, st);
      },
      m_ctx.timing(bench::Mode::kGraph, kGraphNodes));
  Ceiling c = ceiling_from_timing(
      "graph_kernel_cost", 1.0, t,
      "CUDA graph of " + std::to_string(kGraphNodes) + " <<<1,1>>> kernel nodes, graph launch to completion per node");
  c.measured = t.median_s;  // seconds per kernel node, not a rate
  // Ran: the direct calls (calls - batch captured) + batch × (samples + the engine's warm replay).
  const std::uint64_t want =
      calls - static_cast<std::uint64_t>(t.batch) + static_cast<std::uint64_t>(t.batch) * (t.samples_s.size() + 1);
  const std::uint32_t got = counter_value() - before;
  mark_verified(c, got == static_cast<std::uint32_t>(want), count_detail(got, want));
  return c;
}

Ceiling LatencyBench::stream_sync() {
  return launches_then_sync("stream_sync", 1, 10, m_ctx.quick ? 50 : 200, false,
                            "<<<1,1>>> launch + cudaStreamSynchronize on one stream, host wall time");
}

}  // namespace gpuscope::peak::detail
