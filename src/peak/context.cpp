#include "peak/context.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

#include "core/stats.hpp"
#include "peak/device_specs.hpp"
#include "peak/kernels.hpp"

namespace gpuscope::peak::detail {

PinnedBuffer::PinnedBuffer(std::size_t bytes, unsigned flags) : m_bytes(bytes) {
  GPUSCOPE_CUDA_CALL(cudaHostAlloc(&m_ptr, bytes, flags));
}
PinnedBuffer::~PinnedBuffer() {
  if (m_ptr != nullptr) (void)cudaFreeHost(m_ptr);
}

Stream::Stream() { GPUSCOPE_CUDA_CALL(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking)); }
Stream::~Stream() { (void)cudaStreamDestroy(m_stream); }

SyncEvent::SyncEvent() { GPUSCOPE_CUDA_CALL(cudaEventCreateWithFlags(&m_event, cudaEventDisableTiming)); }
SyncEvent::~SyncEvent() { (void)cudaEventDestroy(m_event); }

bench::TimingOptions Context::timing(bench::Mode mode, int batch, double share) const {
  bench::TimingOptions o;
  o.mode = mode;
  o.batch = batch;
  o.budget_s = budget_s * share;
  o.min_samples = quick ? 5 : 10;
  // Hot timings measure the steady state: an untimed call keeps the GPU (or copy engine)
  // busy across the start event, so no launch gap sits inside a sample (a few µs are
  // 1-2 % of a DRAM pass). Graph timings keep the launch: graph_kernel_cost counts it.
  o.back_to_back = mode == bench::Mode::kHot;
  return o;
}

bench::TimingOptions Context::coarse_timing(bool first) {
  bench::TimingOptions o;
  o.mode = bench::Mode::kHot;
  o.batch = 1;
  o.warmup_launches = 1;
  o.warmup_s = first ? 0.05 : 0.0;
  o.min_samples = 3;
  o.max_samples = 3;
  o.budget_s = 1.0;
  o.back_to_back = true;
  return o;
}

std::optional<Ceiling> run_sweep(const Context& ctx, std::vector<Trial>& trials, const SweepPlan& plan,
                                 const std::function<void(std::size_t, cudaStream_t)>& enqueue,
                                 const std::function<double(std::size_t)>& work,
                                 const std::function<Ceiling(std::size_t, const bench::TimingResult&)>& finish) {
  const CoarseStats stats = run_coarse(
      trials,
      [&](std::size_t i) {
        const bench::TimingResult t =
            bench::time_gpu([&](cudaStream_t s) { enqueue(i, s); }, Context::coarse_timing(i == 0));
        return t.median_s > 0 ? work(i) / t.median_s : kUnknown;
      },
      [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); },
      plan.coarse_budget_s);
  return run_fine(
      trials, select_finalists(trials, plan.finalists, plan.within),
      [&](std::size_t i) {
        return finish(i, bench::time_gpu([&](cudaStream_t s) { enqueue(i, s); },
                                         ctx.timing(bench::Mode::kHot, 0, plan.fine_share)));
      },
      stats, plan.scale, plan.unit);
}

void Context::warn(std::string text) const {
  if (warnings != nullptr) warnings->push_back(std::move(text));
}

namespace {

double relative_spread(const std::vector<double>& samples) {
  if (samples.empty()) return kUnknown;
  const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  const double med = stats::median(samples);
  return med > 0 ? (*hi - *lo) / med : kUnknown;
}

bool known(double v) { return std::isfinite(v) && v > 0; }

// A clock the engine or NVML could not read comes back as NaN (or 0): store NaN.
double clock_or_unknown(double mhz) { return known(mhz) ? mhz : kUnknown; }

bool clock_fell(double before, double after) { return known(before) && known(after) && after < 0.97 * before; }

}  // namespace

Ceiling ceiling_from_timing(std::string_view name, double work_per_call, const bench::TimingResult& t,
                            std::string method) {
  Ceiling c;
  c.name = std::string(name);
  c.measured = t.median_s > 0 ? work_per_call / t.median_s : kUnknown;
  c.samples = static_cast<int>(t.samples_s.size());
  c.rel_spread = relative_spread(t.samples_s);
  c.sm_clock_mhz_begin = clock_or_unknown(t.sm_clock_mhz_before);
  c.sm_clock_mhz_end = clock_or_unknown(t.sm_clock_mhz_after);
  c.mem_clock_mhz = clock_or_unknown(t.mem_clock_mhz);
  c.throttled = t.throttled_samples > 0 || clock_fell(t.sm_clock_mhz_before, t.sm_clock_mhz_after);
  c.method = std::move(method) + "; " + std::string(bench::mode_name(t.mode)) + " mode, batch " +
             std::to_string(t.batch) + ", " + std::to_string(c.samples) + " samples (" +
             std::string(bench::stop_reason_name(t.stop)) + ")";
  return c;
}

Ceiling ceiling_from_host_samples(std::string_view name, std::vector<double> samples_s, bool value_is_rate,
                                  double sm_clock_before, double sm_clock_after, double mem_clock, std::string method) {
  Ceiling c;
  c.name = std::string(name);
  const double med = stats::median(samples_s);
  c.measured = value_is_rate ? (med > 0 ? 1.0 / med : kUnknown) : med;
  c.samples = static_cast<int>(samples_s.size());
  c.rel_spread = relative_spread(samples_s);
  c.sm_clock_mhz_begin = clock_or_unknown(sm_clock_before);
  c.sm_clock_mhz_end = clock_or_unknown(sm_clock_after);
  c.mem_clock_mhz = clock_or_unknown(mem_clock);
  c.throttled = clock_fell(sm_clock_before, sm_clock_after);
  c.method = std::move(method) + "; host steady_clock, median of " + std::to_string(c.samples) + " repetitions";
  return c;
}

void add_reference_values(Ceiling& c, const DeviceFacts& facts) {
  double sm = kUnknown;
  if (std::isfinite(c.sm_clock_mhz_begin) && std::isfinite(c.sm_clock_mhz_end))
    sm = (c.sm_clock_mhz_begin + c.sm_clock_mhz_end) / 2;
  else if (std::isfinite(c.sm_clock_mhz_end))
    sm = c.sm_clock_mhz_end;
  double mem = std::isfinite(c.mem_clock_mhz) ? c.mem_clock_mhz : kUnknown;
  std::string fallback;
  if (!std::isfinite(sm)) {
    sm = facts.max_sm_clock_mhz;
    fallback = "SM";
  }
  if (!std::isfinite(mem)) {
    mem = facts.max_mem_clock_mhz;
    fallback += fallback.empty() ? "memory" : " and memory";
  }
  c.theoretical = theoretical_value(c.name, facts, sm, mem);
  c.datasheet = datasheet_value(c.name, facts);
  if (std::isfinite(c.theoretical) && !fallback.empty())
    c.method += "; theoretical at the maximum " + fallback + " clock (NVML gave no current clock)";
}

void fill_pattern_device(void* buffer, std::size_t vectors, std::uint32_t seed, cudaStream_t stream) {
  if (vectors % kPatternGranule != 0) throw std::invalid_argument("fill_pattern_device: vectors not a multiple of 512");
  launch_write_pattern(buffer, vectors, seed, stream);
}

std::uint32_t device_word_sum(const void* buffer, std::size_t vectors, const DeviceBuffer& scratch,
                              cudaStream_t stream) {
  if (vectors % kPatternGranule != 0) throw std::invalid_argument("device_word_sum: vectors not a multiple of 512");
  return run_for_sum(scratch, stream, [&](std::uint32_t* sum) { launch_read_sum(buffer, vectors, sum, stream); });
}

std::uint32_t run_for_sum(const DeviceBuffer& scratch, cudaStream_t stream,
                          const std::function<void(std::uint32_t* sum)>& launch) {
  GPUSCOPE_CUDA_CALL(cudaMemsetAsync(scratch.get(), 0, sizeof(std::uint32_t), stream));
  launch(scratch.as<std::uint32_t>());
  std::uint32_t sum = 0;
  GPUSCOPE_CUDA_CALL(cudaMemcpyAsync(&sum, scratch.get(), sizeof sum, cudaMemcpyDeviceToHost, stream));
  GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(stream));
  return sum;
}

void mark_verified(Ceiling& c, bool ok, std::string_view what) {
  c.verified = ok;
  if (!ok) c.method += "; CHECKSUM MISMATCH (" + std::string(what) + ")";
}

std::string format_bytes(double bytes) {
  char buf[64];
  if (bytes >= 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  else if (bytes >= 1024.0 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024));
  else
    std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  return buf;
}

}  // namespace gpuscope::peak::detail
