// gpu_metrics_sum: what did the GPU's hardware counters see while each kernel ran? A report
// of `gpuscope stats` (-r gpu_metrics_sum) on a trace recorded with `gpuscope trace
// --gpu-metrics` (CUPTI PM sampling: the gpu_metrics tables, analyze/metrics/gpu_metrics_data.hpp).
//
// The samples are device-wide (one value per interval, about 100 µs at 10 kHz, for the whole
// GPU); each kernel gets the part of each sample that overlaps its execution
// (core/metric_attribution.hpp): concurrent kernels each get the whole overlapping share,
// and a kernel shorter than a sample gets the sample's mix of whatever ran in it.
//
// One row per kernel name (named as cuda_gpu_kern_sum: demangled, --base, --mangled), all
// GPUs together, sorted by Total Time descending (then name). Columns, those of metrics
// not sampled left out:
//   Instances, Total Time (ns)   as cuda_gpu_kern_sum
//   Sampled (%)                  share of the kernels' time inside a sample with a value (of
//                                SM active; of the first metric below sampled otherwise):
//                                the rest fell between samples, where values are unknown
//   SM Active (%)                sm__cycles_active: cycles with a warp on an SM (not occupancy)
//   Warps Active (%)             sm__warps_active: achieved occupancy
//   Tensor Active (%)            tensor-core pipe busy
//   FMA Pipe (%), FP64 Pipe (%)  FP32 FMA / FP64 pipe use (optional metrics)
//       the five: time-weighted means over the covered time (Σ value × overlap / Σ overlap)
//   DRAM Read (GB/s), DRAM Write (GB/s)   attributed bytes / covered ns of each metric
//   DRAM (GB/s)                  read + write (when both are sampled)
//   DRAM of Ceiling (%)          DRAM (GB/s) over the DRAM copy ceiling (read + write bytes)
//                                that `gpuscope peak` measured and cached for the GPU's UUID
//                                (store::load_cached_profile, as `gpuscope kernels` finds
//                                it), time-weighted over GPUs; NULL without a profile
//   DRAM Bytes (bytes)           per instance: DRAM Read + Write rates × Total Time /
//                                Instances, the sampled rate carried over the kernels' whole
//                                time (= the attributed bytes per instance when Sampled is
//                                100 %); NULL when nothing was sampled
//   L2 (GB/s)                    lts__t_bytes: attributed bytes / covered ns
//   Concurrent (%)               share of the kernels' time another kernel ran on its GPU
//   Name
// Notes: first one line per GPU sampled — samples, interval, chip, and the device-wide
// time-weighted SM active, tensor active, DRAM GB/s (and % of the ceiling) and mean SM clock
// over the wall span (analyze/common/gpu_busy.hpp) —, then what the numbers are (device-wide
// samples shared by concurrent kernels, SM active vs occupancy, short kernels get the
// sample's mix, gaps), the ceiling's source, and samples lost (data_loss
// gpu_metrics_overflow).
// Without samples (a trace recorded without --gpu-metrics): the columns Instances, Total
// Time, Sampled, Concurrent and Name, no rows, and a note saying how to record them.
// Errors: store::DatabaseError; TraceTooLargeError past the memory budget (one entry per
// kernel is held while a GPU's samples stream by).
#pragma once

#include "analyze/common/report_options.hpp"
#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

/// The gpu_metrics_sum report (see the file comment).
[[nodiscard]] Report gpu_metrics_sum(store::Database& db, const ReportOptions& options = {});

}  // namespace gpuscope::analyze
