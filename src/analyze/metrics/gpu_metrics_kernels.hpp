// What gpu_metrics_sum (gpu_metrics_report.hpp) gathers before it writes a row: every kernel
// by GPU and name, the share of each sampled metric each kernel name gets
// (core/metric_attribution.hpp, per GPU: the samples of each metric stream by once), summed
// over the GPUs per name, and each sampled GPU's DRAM ceiling.
//
//   kernel_metric_sums  the kernels of v_kernels named as options say (cuda_gpu_kern_sum's
//                       names), attributed per GPU; one KernelNameSums per name, in order of
//                       first appearance. A name's DRAM rate of ceiling is each GPU's rate over
//                       its own ceiling, weighted by the time the DRAM samples cover.
//   DramCeiling         gpuscope peak's DRAM copy ceiling (read + write bytes, B/s) of the GPU's
//                       UUID (the session's, else a traced process's device row), from the
//                       cached machine profile (store::load_cached_profile); NaN without one,
//                       `problem` for a broken profile.
// Memory: one interval per kernel while a GPU's samples stream by (event budget checked first).
// Errors: store::DatabaseError; TraceTooLargeError past the memory budget.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/common/report_options.hpp"
#include "analyze/metrics/gpu_metrics_data.hpp"
#include "core/metric_attribution.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze::detail {

// One kernel name's sums over its kernels on every GPU.
struct KernelNameSums {
  std::int64_t instances = 0, kernel_ns = 0, concurrent_ns = 0, sampled_ns = 0;
  std::map<std::string_view, MetricOverlap> metrics;
  double ceiling_share_ns = 0, ceiling_weight_ns = 0;  // Σ (DRAM rate / ceiling) × ns, Σ ns
  bool ceiling_missing = false;                        // a GPU with DRAM samples had no ceiling
  /// The sums of `name`, empty when not sampled.
  [[nodiscard]] MetricOverlap metric(std::string_view name) const {
    const auto it = metrics.find(name);
    return it == metrics.end() ? MetricOverlap{} : it->second;
  }
};

// A GPU's DRAM copy ceiling, B/s, from `gpuscope peak`'s cached profile of its UUID.
struct DramCeiling {
  std::string uuid;
  double bytes_per_s = std::numeric_limits<double>::quiet_NaN();
  std::string problem;  // a broken cached profile
};

struct KernelMetricSums {
  std::vector<std::string> names;                // kernel names, by key
  std::vector<KernelNameSums> sums;              // per key
  std::map<std::int64_t, DramCeiling> ceilings;  // by GPU index, for sampled GPUs
};

[[nodiscard]] KernelMetricSums kernel_metric_sums(store::Database& db, const GpuIndexMap& gpus, const SampledMetrics& m,
                                                  const ReportOptions& options);

}  // namespace gpuscope::analyze::detail
