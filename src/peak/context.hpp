// Internal to src/peak: what every benchmark of `gpuscope peak` shares — the device, its
// facts, the run's budget, RAII holders for CUDA memory, and the one place that turns a
// timing (bench::TimingResult) into a Ceiling.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/machine_profile.hpp"
#include "bench/ops/device_buffer.hpp"
#include "gpuscope/bench.hpp"
#include "peak/sweep.hpp"

namespace gpuscope::peak::detail {

/// cudaMalloc'd bytes, freed on destruction (bench/ops/device_buffer.hpp).
using DeviceBuffer = bench::ops::DeviceBuffer;

/// Page-locked host bytes (cudaHostAlloc with `flags`), freed on destruction.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(std::size_t bytes, unsigned flags);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  [[nodiscard]] void* get() const { return m_ptr; }
  template <class T>
  [[nodiscard]] T* as() const {
    return static_cast<T*>(m_ptr);
  }
  [[nodiscard]] std::size_t bytes() const { return m_bytes; }

 private:
  void* m_ptr = nullptr;
  std::size_t m_bytes = 0;
};

/// A non-blocking stream, destroyed on destruction.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  [[nodiscard]] cudaStream_t get() const { return m_stream; }

 private:
  cudaStream_t m_stream = nullptr;
};

/// A cudaEventDisableTiming event (for fork/join between streams).
class SyncEvent {
 public:
  SyncEvent();
  ~SyncEvent();
  SyncEvent(const SyncEvent&) = delete;
  SyncEvent& operator=(const SyncEvent&) = delete;
  [[nodiscard]] cudaEvent_t get() const { return m_event; }

 private:
  cudaEvent_t m_event = nullptr;
};

struct Context {
  int device = 0;
  DeviceFacts facts;
  bool quick = false;
  double budget_s = 0.5;  // sampling budget of one timed measurement
  std::vector<std::string>* warnings = nullptr;
  std::vector<PeerLink>* peer_links = nullptr;  // the p2p ceiling writes every pair here

  /// Timing options of this run: `mode`, `batch` (0 = auto), the run's budget × `share`;
  /// back_to_back for kHot (the steady state of a stream of calls).
  [[nodiscard]] bench::TimingOptions timing(bench::Mode mode, int batch = 0, double share = 1.0) const;
  /// The coarse stage of a sweep (peak/sweep.hpp): hot mode, batch 1, back to back, 3
  /// samples after one untimed call; `first` (the first trial of a sweep) adds 50 ms of
  /// warm-up so the GPU leaves its idle clocks.
  [[nodiscard]] static bench::TimingOptions coarse_timing(bool first);
  void warn(std::string text) const;
};

/// How one ceiling's sweep (peak/sweep.hpp) spends its time: the coarse budget, the
/// finalists (at most `finalists`, within `within` of the best coarse value, plus every
/// method's best), each timed with Context::timing(kHot, 0, fine_share); values shown as
/// value × scale in `unit` in the method line.
struct SweepPlan {
  double coarse_budget_s;
  std::size_t finalists;
  double within;
  double fine_share;
  double scale;
  std::string_view unit;
};

/// A whole sweep on the GPU: trial i is `enqueue(i, stream)` moving or computing work(i)
/// units per call; coarse timings with Context::coarse_timing (the first trial warmed up)
/// until the plan's budget is spent on the steady clock; the finalists timed in full and
/// turned into checked Ceilings by finish(i, timing); returns run_fine's winner, or nullopt.
[[nodiscard]] std::optional<Ceiling> run_sweep(
    const Context& ctx, std::vector<Trial>& trials, const SweepPlan& plan,
    const std::function<void(std::size_t, cudaStream_t)>& enqueue, const std::function<double(std::size_t)>& work,
    const std::function<Ceiling(std::size_t, const bench::TimingResult&)>& finish);

/// A Ceiling from a timing: measured = work_per_call / median (work in the catalog's
/// counted unit: bytes, FLOP, OP), samples, rel_spread = (max - min) / median of the
/// samples, clocks, throttled (any throttled sample, or the SM clock read after the run
/// below 97 % of the one read before it). theoretical/datasheet/verified are left to
/// the caller.
[[nodiscard]] Ceiling ceiling_from_timing(std::string_view name, double work_per_call, const bench::TimingResult& t,
                                          std::string method);

/// A Ceiling from host-timed samples (seconds per repetition): measured = the median
/// itself (value_is_rate false) or 1 / median (true); clocks read around the loop.
[[nodiscard]] Ceiling ceiling_from_host_samples(std::string_view name, std::vector<double> samples_s,
                                                bool value_is_rate, double sm_clock_before, double sm_clock_after,
                                                double mem_clock, std::string method);

/// Fills c.theoretical and c.datasheet (peak/device_specs.hpp) at the clock c observed:
/// the mean of its SM clocks read before and after, or the device's maximum when NVML
/// gave none (the method then says so).
void add_reference_values(Ceiling& c, const DeviceFacts& facts);

/// Buffers handled by the two helpers below are a multiple of this many 16-byte vectors
/// (8 KiB): one block of 256 threads per 512 vectors, 2 vectors per thread.
inline constexpr std::size_t kPatternGranule = 512;

/// Writes the pattern of launch_write_pattern (peak/checksums.hpp: pattern_word) into
/// `vectors` 16-byte vectors at device address `buffer`. Enqueues only.
void fill_pattern_device(void* buffer, std::size_t vectors, std::uint32_t seed, cudaStream_t stream);

/// Zeroes the device word `scratch`, enqueues `launch(sum)` (a kernel that adds into the
/// word `sum`), and returns the word; synchronizes `stream`. How every checksum is read.
[[nodiscard]] std::uint32_t run_for_sum(const DeviceBuffer& scratch, cudaStream_t stream,
                                        const std::function<void(std::uint32_t* sum)>& launch);

/// Σ of the 32-bit words (mod 2^32) of `vectors` 16-byte vectors at device address
/// `buffer`, added on the GPU by launch_read_sum into `scratch` (>= 4 bytes of device
/// memory); synchronizes `stream`. Checks the work of copies and writes.
[[nodiscard]] std::uint32_t device_word_sum(const void* buffer, std::size_t vectors, const DeviceBuffer& scratch,
                                            cudaStream_t stream);

/// c.verified = ok; otherwise "; CHECKSUM MISMATCH (what)" is appended to c.method.
void mark_verified(Ceiling& c, bool ok, std::string_view what);

/// "400.0 MiB", "16.0 KiB".
[[nodiscard]] std::string format_bytes(double bytes);

}  // namespace gpuscope::peak::detail
