// The timing engine of include/gpuscope/bench.hpp. Host code only (CUDA runtime API).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <string>

#include "bench/clock_probe.hpp"
#include "bench/l2_flush.hpp"
#include "bench/nvml.hpp"
#include "core/sample_stats.hpp"
#include "core/stats.hpp"
#include "gpuscope/bench.hpp"

namespace gpuscope::bench {
namespace {

constexpr double kAutoBatchSampleS = 100e-6;  // auto batch: a sample lasts >= 100 µs
constexpr int kMaxAutoBatch = 10000;
constexpr double kThrottleFraction = 0.97;  // SM clock below 97 % of the start clock

// RAII owners for the engine's CUDA objects; destructors never throw.
struct Stream {
  cudaStream_t handle = nullptr;
  bool owned = false;
  explicit Stream(cudaStream_t given) : handle(given) {
    if (!handle) {
      GPUSCOPE_CUDA_CALL(cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking));
      owned = true;
    }
  }
  ~Stream() {
    if (owned) cudaStreamDestroy(handle);
  }
};

struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    GPUSCOPE_CUDA_CALL(cudaEventCreate(&start));
    GPUSCOPE_CUDA_CALL(cudaEventCreate(&stop));
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  // Seconds between the two events, after waiting for `stop`.
  double seconds() const {
    GPUSCOPE_CUDA_CALL(cudaEventSynchronize(stop));
    float ms = 0;
    GPUSCOPE_CUDA_CALL(cudaEventElapsedTime(&ms, start, stop));
    return static_cast<double>(ms) * 1e-3;
  }
};

struct Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};

// The L2 flush buffer of a device: 2 × L2, allocated on first use and kept for the
// process (cold mode's samples would otherwise pay an allocation each).
struct FlushBuffer {
  void* data = nullptr;
  std::size_t bytes = 0;         // the part read by the flush (2 × L2)
  unsigned int* sink = nullptr;  // one word after it (bench/l2_flush.hpp)
  int blocks = 1;                // 8 blocks of 256 threads per SM: one full wave
};

FlushBuffer flush_buffer(int device) {
  static std::mutex mutex;
  static std::map<int, FlushBuffer> buffers;
  std::lock_guard lock(mutex);
  FlushBuffer& b = buffers[device];
  if (!b.data) {
    int l2 = 0;
    GPUSCOPE_CUDA_CALL(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    int sms = 0;
    GPUSCOPE_CUDA_CALL(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    b.bytes = static_cast<std::size_t>(std::max(l2, 1 << 20)) * 2;
    GPUSCOPE_CUDA_CALL(cudaMalloc(&b.data, b.bytes + 16));
    GPUSCOPE_CUDA_CALL(cudaMemset(b.data, 0, b.bytes + 16));
    GPUSCOPE_CUDA_CALL(cudaDeviceSynchronize());  // the timing stream does not wait for the legacy stream
    b.sink = reinterpret_cast<unsigned int*>(static_cast<char*>(b.data) + b.bytes);
    b.blocks = std::max(sms, 1) * 8;
  }
  return b;
}

void check_options(const TimingOptions& o) {
  if (o.batch < 0) throw std::invalid_argument("batch must be >= 0 (0 = automatic)");
  if (o.warmup_launches < 1) throw std::invalid_argument("warmup_launches must be >= 1");
  if (!(o.warmup_s >= 0)) throw std::invalid_argument("warmup_s must be >= 0");
  // stop_rule() validates the stopping options; call it once on no samples to check them.
  (void)stats::stop_rule({}, 0.0, o.max_rel_stderr, o.budget_s, o.min_samples, o.max_samples);
}

void check_last_error(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) throw CudaError(status, what, __FILE__, __LINE__);
}

StopReason to_stop_reason(stats::StopRule rule) {
  switch (rule) {
    case stats::StopRule::kBudget:
      return StopReason::kBudget;
    case stats::StopRule::kMaxSamples:
      return StopReason::kMaxSamples;
    default:
      return StopReason::kConverged;
  }
}

}  // namespace

std::string_view mode_name(Mode mode) {
  switch (mode) {
    case Mode::kCold:
      return "cold";
    case Mode::kHot:
      return "hot";
    case Mode::kGraph:
      return "graph";
  }
  return "?";
}

Mode parse_mode(std::string_view text) {
  for (Mode m : {Mode::kCold, Mode::kHot, Mode::kGraph})
    if (mode_name(m) == text) return m;
  throw std::invalid_argument("unknown timing mode '" + std::string(text) + "' (valid: cold, hot, graph)");
}

std::string_view stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::kConverged:
      return stats::stop_rule_name(stats::StopRule::kConverged);
    case StopReason::kBudget:
      return stats::stop_rule_name(stats::StopRule::kBudget);
    case StopReason::kMaxSamples:
      return stats::stop_rule_name(stats::StopRule::kMaxSamples);
  }
  return "?";
}

CudaError::CudaError(cudaError_t status, std::string_view call, std::string_view file, int line)
    : std::runtime_error(std::string(call) + " failed at " + std::string(file) + ":" + std::to_string(line) + ": " +
                         cudaGetErrorString(status) + " (" + cudaGetErrorName(status) + ")"),
      m_status(status) {}

TimingResult time_gpu(const Enqueue& enqueue, const TimingOptions& o) {
  check_options(o);
  int device = 0;
  GPUSCOPE_CUDA_CALL(cudaGetDevice(&device));
  Stream stream(o.stream);
  EventPair events;
  const Nvml& nvml = Nvml::instance();

  // Warm-up: module load, JIT and library handle creation happen here, untimed; the
  // last warm-up call is timed once to choose the batch.
  using clock = std::chrono::steady_clock;
  const auto warmup_start = clock::now();
  for (int i = 0; i < o.warmup_launches - 1; ++i) enqueue(stream.handle);
  GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(stream.handle));
  while (std::chrono::duration<double>(clock::now() - warmup_start).count() < o.warmup_s) {
    enqueue(stream.handle);
    GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(stream.handle));
  }
  GPUSCOPE_CUDA_CALL(cudaEventRecord(events.start, stream.handle));
  enqueue(stream.handle);
  GPUSCOPE_CUDA_CALL(cudaEventRecord(events.stop, stream.handle));
  check_last_error("warm-up call");
  const double one_call_s = events.seconds();

  TimingResult r;
  r.mode = o.mode;
  r.batch = 1;
  if (o.mode != Mode::kCold) {
    r.batch = o.batch > 0 ? o.batch
                          : static_cast<int>(std::clamp(std::ceil(kAutoBatchSampleS / std::max(one_call_s, 1e-9)), 1.0,
                                                        static_cast<double>(kMaxAutoBatch)));
  }

  Graph graph;
  if (o.mode == Mode::kGraph) {
    GPUSCOPE_CUDA_CALL(cudaStreamBeginCapture(stream.handle, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < r.batch; ++i) enqueue(stream.handle);
    GPUSCOPE_CUDA_CALL(cudaStreamEndCapture(stream.handle, &graph.graph));
    GPUSCOPE_CUDA_CALL(cudaGraphInstantiate(&graph.exec, graph.graph, 0));
    GPUSCOPE_CUDA_CALL(cudaGraphLaunch(graph.exec, stream.handle));  // upload + warm replay
    GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(stream.handle));
  }
  FlushBuffer flush;
  if (o.mode == Mode::kCold) flush = flush_buffer(device);

  // With a working NVML the clock is read after every sample; without one it is
  // measured on the GPU before and after the run (bench/clock_probe.hpp).
  const bool watch_clock = nvml.available() && std::isfinite(nvml.sm_clock_mhz(device));
  r.sm_clock_mhz_before = watch_clock ? nvml.sm_clock_mhz(device) : probe_sm_clock_mhz(stream.handle);
  r.mem_clock_mhz = nvml.mem_clock_mhz(device);

  const auto t0 = clock::now();
  stats::StopRule rule = stats::StopRule::kContinue;
  while (rule == stats::StopRule::kContinue) {
    if (o.mode == Mode::kCold) enqueue_l2_flush_read(flush.data, flush.bytes, flush.sink, flush.blocks, stream.handle);
    auto enqueue_batch = [&] {
      if (o.mode == Mode::kGraph)
        GPUSCOPE_CUDA_CALL(cudaGraphLaunch(graph.exec, stream.handle));
      else
        for (int i = 0; i < r.batch; ++i) enqueue(stream.handle);
    };
    if (o.back_to_back && o.mode != Mode::kCold) enqueue_batch();  // keeps the GPU busy across the start event
    GPUSCOPE_CUDA_CALL(cudaEventRecord(events.start, stream.handle));
    enqueue_batch();
    GPUSCOPE_CUDA_CALL(cudaEventRecord(events.stop, stream.handle));
    check_last_error("timed call");
    r.samples_s.push_back(events.seconds() / r.batch);
    if (watch_clock && nvml.sm_clock_mhz(device) < kThrottleFraction * r.sm_clock_mhz_before) ++r.throttled_samples;
    r.elapsed_s = std::chrono::duration<double>(clock::now() - t0).count();
    rule = stats::stop_rule(r.samples_s, r.elapsed_s, o.max_rel_stderr, o.budget_s, o.min_samples, o.max_samples);
  }
  GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(stream.handle));
  r.sm_clock_mhz_after = watch_clock ? nvml.sm_clock_mhz(device) : probe_sm_clock_mhz(stream.handle);
  if (!watch_clock && r.sm_clock_mhz_after < kThrottleFraction * r.sm_clock_mhz_before)
    r.throttled_samples = static_cast<int>(r.samples_s.size());  // which ones is unknown
  r.stop = to_stop_reason(rule);

  r.min_s = *std::min_element(r.samples_s.begin(), r.samples_s.end());
  r.median_s = stats::median(r.samples_s);
  r.mean_s = stats::mean(r.samples_s);
  r.stddev_s = stats::stddev(r.samples_s);
  r.rel_stderr = stats::median_rel_stderr(r.samples_s);
  return r;
}

}  // namespace gpuscope::bench
