// Internal: the sampled GPU metrics of a trace (`gpuscope trace --gpu-metrics`: tables
// gpu_metrics, gpu_metric_names, gpu_metrics_sessions; docs/trace-schema.md) as the
// gpu_metrics_sum report, the sampled columns of top and gpu_util, and the timeline's
// counter tracks read them.
//
// GPUs: gpu_metrics.device_id is the traced processes' ordinal of the GPU sampled. The GPU
// index (analyze/common/gpu_index.hpp, as gpu_util and the timeline number GPUs) is found through
// the session's UUID in devices; without a match, through a process that used that
// ordinal; else the ordinal itself.
// Samples are read per (device, metric) in start order from the gpu_metrics_device index,
// one row at a time (a trace holds millions: 10 kHz × metrics × seconds).
//
// A trace recorded before --gpu-metrics (no tables) or without it (no rows): empty().
// Errors: store::DatabaseError.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/common/gpu_index.hpp"
#include "core/gpu_metrics.hpp"
#include "core/metric_attribution.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze::detail {

// The metrics the reports name (core/gpu_metrics.hpp).
using core::gpu_metric::kDramRead;
using core::gpu_metric::kDramWrite;
using core::gpu_metric::kFmaPipe;
using core::gpu_metric::kFp64Pipe;
using core::gpu_metric::kL2Bytes;
using core::gpu_metric::kSmActive;
using core::gpu_metric::kSmClock;
using core::gpu_metric::kTensorActive;
using core::gpu_metric::kWarpsActive;

/// One gpu_metric_names row.
struct SampledMetric {
  std::int64_t id = 0;
  std::string name, label, unit;
};

/// One GPU sampled.
struct SampledGpu {
  std::int64_t device_id = 0;            // gpu_metrics.device_id
  std::int64_t gpu = 0;                  // GPU index
  std::string chip, device_name, uuid;   // "" if unknown
  std::int64_t interval_ns = 0;          // 0 without a session row
  std::int64_t samples = 0;              // distinct sample times with rows
  std::vector<std::int64_t> metric_ids;  // metrics with rows on it, ascending
};

struct SampledMetrics {
  std::vector<SampledMetric> metrics;  // the gpu_metric_names rows, by id
  std::vector<SampledGpu> gpus;        // GPUs with samples, by GPU index
  [[nodiscard]] bool empty() const { return gpus.empty(); }
  /// The metric called `name`, or nullptr.
  [[nodiscard]] const SampledMetric* find(std::string_view name) const;
  [[nodiscard]] const SampledMetric* by_id(std::int64_t id) const;
  /// Whether some GPU has samples of `name`.
  [[nodiscard]] bool has(std::string_view name) const;
};

/// Whether the trace has the tables and at least one sample (one indexed lookup).
[[nodiscard]] bool has_gpu_metrics(store::Database& db);

/// The metrics and GPUs sampled (see the file comment).
[[nodiscard]] SampledMetrics sampled_metrics(store::Database& db, const GpuIndexMap& gpus);

/// Visits every sample of `metric_id` on `device_id` in start order (NULL value: NaN);
/// with a window, only those overlapping [from_ns, to_ns).
void each_sample(store::Database& db, std::int64_t device_id, std::int64_t metric_id,
                 const std::function<void(const MetricSample&)>& visit,
                 std::optional<std::pair<std::int64_t, std::int64_t>> window = std::nullopt);

/// The earliest start and the latest start of a sample with a value (the timeline's counter
/// points), by index seeks per device and metric; nullopt without any.
[[nodiscard]] std::optional<std::pair<std::int64_t, std::int64_t>> sample_starts(store::Database& db,
                                                                                 const SampledMetrics& m);

/// Metric `name`'s overlap with [from_ns, to_ns) per sampled GPU index that has it.
[[nodiscard]] std::map<std::int64_t, MetricOverlap> overlap_per_gpu(store::Database& db, const SampledMetrics& m,
                                                                    std::string_view name, std::int64_t from_ns,
                                                                    std::int64_t to_ns);

/// The sampled SM active and tensor active of the wall span per GPU index, for top and
/// gpu_util (cached: analysis_cache.hpp). present: the trace has samples at all.
struct SampledActivity {
  bool present = false;
  std::map<std::int64_t, MetricOverlap> sm_active, tensor_active;
};
[[nodiscard]] const SampledActivity& sampled_activity(store::Database& db);

/// The note top and gpu_util add with their sampled columns: what SM Active (%) and Tensor
/// Active (%) are, beside Busy and SM Coverage, and how much of the wall time the samples
/// cover (`covered_share`: 0..1, NaN when unknown).
[[nodiscard]] std::string sampled_columns_note(double covered_share);

}  // namespace gpuscope::analyze::detail
