// core/metric_attribution: what the GPU's sampled hardware counters (`gpuscope trace
// --gpu-metrics`, CUPTI PM sampling, core/gpu_metrics.hpp) say about each kernel. The
// samples are device-wide: one value per interval [start_ns, end_ns) for the whole GPU,
// whatever ran on it. A kernel gets the part of each sample that overlaps its execution.
// Shared by the gpu_metrics_sum report and the sampled columns of top and gpu_util; also
// the sampled metrics' counter tracks of the timeline (counter_value, GpuMetricCounterSource
// at the end: core/timeline.hpp's TimelineEvents has no visitor for them). Pure, no I/O.
//
// Per key (a kernel name's index, say) over all its kernels, for one metric:
//   kernel_ns      Σ (end - start) of its kernels
//   covered_ns     the part of that time inside at least one sample with a value: the
//                  metric is known there. A kernel in a gap between samples (or before the
//                  first) adds 0: its value is unknown, not 0.
//   weight_ns      Σ over (kernel, sample) of overlap ns. Equals covered_ns when samples do
//                  not overlap each other (PM sampling's are consecutive).
//   value_ns       Σ value × overlap.      mean() = value_ns / weight_ns: the time-weighted
//                                          mean for % and Hz metrics.
//   bytes          Σ value × overlap / (sample end - start): for bytes metrics (.sum, bytes
//                  moved during the sample) the bytes attributed, assuming an even rate
//                  inside the sample. rate() = bytes / weight_ns in bytes per ns = GB/s.
//   concurrent_ns  the part of kernel_ns during which another kernel of the list ran too.
// Concurrent kernels each get the whole overlapping share: the counters cannot be split
// between them, so attributed bytes of concurrent kernels may add up to more than the
// device moved (concurrent_ns says how much of a key's time that concerns).
//
// Input rules: any order; a sample with a NaN or infinite value (NULL in gpu_metrics: not
// evaluated) or end <= start is skipped; a kernel with end <= start counts as an instance
// of 0 ns. Times are integer ns (trace clock); differences saturate (core/saturating.hpp).
// Cost: O((samples + kernels) log (samples + kernels)) time: a sweep over the kernels'
// starts and ends (sorted once) and the samples (in start order) that keeps running
// integrals, so a kernel's share is the difference of two snapshots of them. Memory:
// O(kernels + samples running at once) for MetricAttribution, which takes the samples one
// at a time (a trace's millions of samples stream from SQL); attribute_metric() and
// summarize_metric() also hold a sorted copy of the samples given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace gpuscope::core {

/// One sample of one metric on one GPU: `value` over [start_ns, end_ns); NaN = not evaluated.
struct MetricSample {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  double value = 0;
};

/// One kernel execution [start_ns, end_ns) and the group it counts in (0 <= key < keys).
struct KernelInterval {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::size_t key = 0;
};

/// The overlap of sampled values with some time (a key's kernels, or a window).
struct MetricOverlap {
  std::int64_t covered_ns = 0;
  double weight_ns = 0;
  double value_ns = 0;
  double bytes = 0;
  /// value_ns / weight_ns: the time-weighted mean value; NaN when nothing was covered.
  [[nodiscard]] double mean() const;
  /// bytes / weight_ns, in bytes per ns = GB/s (bytes metrics); NaN when nothing was covered.
  [[nodiscard]] double rate() const;
  /// covered_ns / of_ns (0..1); NaN when of_ns <= 0.
  [[nodiscard]] double covered_share(std::int64_t of_ns) const;
};

/// One key's kernels and their share of a metric (definitions in the file comment).
struct KernelMetricShare {
  std::int64_t instances = 0;
  std::int64_t kernel_ns = 0;
  std::int64_t concurrent_ns = 0;
  MetricOverlap metric;
};

/// The sweep behind attribute_metric(), fed one sample at a time.
class MetricAttribution {
 public:
  /// `kernels` of one GPU, in any order (copied); per key 0..keys-1 (larger keys ignored).
  MetricAttribution(std::span<const KernelInterval> kernels, std::size_t keys);
  /// Adds one sample of the metric. Samples must come in start_ns order (ties in any order);
  /// one that starts before a sample already added is taken from there on (its start is
  /// clipped, its bytes per ns kept), which only a damaged trace needs.
  void add(const MetricSample& sample);
  /// The shares, once every sample has been added (call once; the sweep is finished).
  [[nodiscard]] std::vector<KernelMetricShare> finish();

 private:
  struct Integrals {
    std::int64_t covered_ns = 0;     // ∫ [a sample is running] dt
    std::int64_t concurrent_ns = 0;  // ∫ [two or more kernels are running] dt
    double weight_ns = 0;            // ∫ (samples running) dt
    double value_ns = 0;             // ∫ Σ running values dt
    double bytes = 0;                // ∫ Σ running values per ns dt
  };
  struct KernelEvent {
    std::int64_t t = 0;
    bool start = false;
    std::size_t kernel = 0;
  };
  struct Running {  // a sample that has started and not ended
    std::int64_t end_ns = 0;
    double value = 0, per_ns = 0;
    bool operator>(const Running& o) const { return end_ns > o.end_ns; }
  };
  void integrate_to(std::int64_t t);
  void advance_to(std::int64_t t);  // handles every kernel event and sample end at or before t

  std::vector<KernelInterval> m_kernels;
  std::vector<KernelEvent> m_events;  // kernel starts and ends, by time
  std::size_t m_next = 0;             // the next of m_events
  std::vector<Integrals> m_at_start;  // per kernel: the integrals when it started
  std::vector<Running> m_running;     // a min-heap on end_ns
  std::vector<KernelMetricShare> m_out;
  Integrals m_now;
  std::int64_t m_t = 0;  // the time m_now is at
  bool m_started = false;
  std::int64_t m_kernels_running = 0;
  double m_values = 0, m_values_per_ns = 0;  // Σ over m_running
};

/// Per key 0..keys-1, the share of `samples` (one metric, one GPU) of `kernels` (the same
/// GPU's). A kernel whose key is >= keys is ignored. Empty samples: every covered_ns 0,
/// instances, kernel_ns and concurrent_ns still counted.
[[nodiscard]] std::vector<KernelMetricShare> attribute_metric(std::span<const MetricSample> samples,
                                                              std::span<const KernelInterval> kernels,
                                                              std::size_t keys);

/// The device-wide overlap of `samples` with the window [from_ns, to_ns) (samples clipped
/// to it; same skip rules): its mean() is the time-weighted mean over the sampled part of
/// the window, bytes the bytes moved in it. An empty window (to_ns <= from_ns) gives zeros.
/// (For samples streamed in start order: MetricAttribution with the window as its one kernel.)
[[nodiscard]] MetricOverlap summarize_metric(std::span<const MetricSample> samples, std::int64_t from_ns,
                                             std::int64_t to_ns);

/// A sample's value as a counter track shows it: % as is ("%"), bytes moved in the sample
/// as GB/s over it (bytes per ns, "GB/s"), Hz as MHz ("MHz"), a count ('' unit) as a rate
/// ("/s"), any other unit as is. NaN for a NaN value or a sample of 0 ns that needs its
/// length.
struct CounterValue {
  double value = 0;
  std::string_view unit;
};
[[nodiscard]] CounterValue counter_value(std::string_view unit, double value, std::int64_t duration_ns);

/// One point of a sampled metric's counter track: at a sample's start, its value over the
/// sample (counter_value), on GPU gpu_index's row. `track` names the track, e.g.
/// "SM active % (device 0)".
struct GpuMetricCounterEvent {
  std::int64_t gpu_index = 0;
  std::int64_t ts_ns = 0;
  std::string_view track;
  double value = 0;
};

/// A source of those points, each track's in time order: a timeline source that has
/// sampled metrics implements it beside core::TimelineEvents (analyze::TraceTimeline), and
/// the Perfetto export asks for it. Errors: whatever the source throws.
class GpuMetricCounterSource {
 public:
  virtual ~GpuMetricCounterSource() = default;
  virtual void gpu_metric_counters(const std::function<void(const GpuMetricCounterEvent&)>& visit) = 0;
};

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
