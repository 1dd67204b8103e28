// kernel_metric_sets: the named hardware-counter sets of `gpuscope kernels --set NAME`,
// and what each metric means, in one place (docs/metrics.md's tables are generated from
// this file and checked against it by a test).
//
// Every name is an Nsight Compute / CUPTI Range Profiler metric name, spelled exactly as
// `ncu --metrics` takes it: base name + rollup (".sum", ".avg", ".pct", ...) + optional
// submetric (".pct_of_peak_sustained_active", ...). Sources: Nsight Compute "Kernel
// Profiling Guide" (metrics structure, sections) and the passes measured on GH100 with
// the CUPTI host API (shared/CUPTI_NOTES.md, "Range Profiler").
//
// Sets (each lists its full metric list; the list is what the collector asks for):
//   quick      6 hardware metrics, 1 pass on GH100: duration, DRAM/L2/L1 bytes, achieved
//              occupancy. Enough for bytes/s against the memory ceilings.
//   roofline   quick + CUDA-core FLOP instruction counts (SASS-instrumented: one more pass)
//              + tensor-pipe instructions + Hopper wgmma (hgmma) op counts.
//   sol        duration + the Speed-of-Light throughput percentages (SM, compute-memory,
//              DRAM, L2, L1); many passes (sm__throughput alone is 8 on GH100).
//   memory     duration, DRAM bytes, cache hit rates, global sectors per request, shared
//              memory bank conflicts.
//   occupancy  duration, achieved vs theoretical occupancy, eligible warps.
//   compute    Compute Workload Analysis: executed/issued IPC, SM busy, issue slots busy, and
//              each pipe's utilization (instructions and active cycles, % of peak).
//   warps      Warp State Statistics: warp cycles per issued instruction and the cycles of
//              each stall reason (smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio).
//   detailed   the union of all the sets above (as Nsight Compute's --set detailed).
// Metric names of compute and warps: the sm_90 (GH100) names of Nsight Compute's
// ComputeWorkloadAnalysis and WarpStateStats sections, checked against the CUPTI host
// API's metric list for GH100 (`gpuscope kernels --list-metrics FILTER --chip GH100`).
//
// Pure data (core/): no I/O; every view points at static storage (valid for the program).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/report.hpp"

namespace gpuscope::core::kernels {

/// One metric: its exact name, the unit of its value, a one-sentence meaning a beginner
/// understands, and where it comes from (hardware unit, Nsight Compute section).
struct MetricInfo {
  std::string_view name;         // e.g. "dram__bytes_read.sum"
  std::string_view unit;         // "ns", "bytes", "%", "thread instructions", ...
  std::string_view description;  // one sentence
  std::string_view source;       // hardware unit — Nsight Compute section
};

/// A named set of metrics, as `--set NAME` selects it.
struct MetricSet {
  std::string_view name;                // "quick", "roofline", "sol", "memory", "occupancy", "compute", ...
  std::string_view summary;             // one sentence: what the set answers, and its cost
  std::span<const MetricInfo> metrics;  // the full list, in collection order, no duplicates
};

/// All sets, in the order quick, roofline, sol, memory, occupancy, compute, warps, detailed.
[[nodiscard]] std::span<const MetricSet> metric_sets();

/// The set called `name` (exact, case-sensitive), or nullptr.
[[nodiscard]] const MetricSet* find_metric_set(std::string_view name);

/// The full flattened metric names of `set`, in order, without duplicates.
[[nodiscard]] std::vector<std::string> set_metric_names(const MetricSet& set);

/// The description of a metric that appears in any set, or nullptr.
[[nodiscard]] const MetricInfo* find_metric_info(std::string_view name);

/// The set as a Report ("metric_set_NAME", title "--set NAME: summary"), one row per
/// metric: Metric, Unit, Meaning, Source, Header (metric_header). docs/metrics.md embeds every set's report as
/// markdown (a unit test checks it is current).
[[nodiscard]] Report metric_set_report(const MetricSet& set);

/// The short column header of a metric in the table and markdown of `gpuscope kernels`
/// ("DRAM Read" for dram__bytes_read.sum, "SM Thr" for sm__throughput.avg.pct_of_peak_sustained_elapsed,
/// "Pipe FMA" for sm__inst_executed_pipe_fma..., "Stall long_scoreboard" for a stall reason);
/// the metric name itself for a metric it does not know. csv and json keep the metric names.
[[nodiscard]] std::string metric_header(std::string_view metric);

/// Metric names the derivations (core/kernel_derive) read, for reuse by callers.
namespace metric {
inline constexpr std::string_view k_duration = "gpu__time_duration.sum";
inline constexpr std::string_view k_dram_read = "dram__bytes_read.sum";
inline constexpr std::string_view k_dram_write = "dram__bytes_write.sum";
inline constexpr std::string_view k_l2_bytes = "lts__t_bytes.sum";
inline constexpr std::string_view k_l1_bytes = "l1tex__t_bytes.sum";
inline constexpr std::string_view k_achieved_occupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
inline constexpr std::string_view k_active_warps = "sm__warps_active.avg.per_cycle_active";
inline constexpr std::string_view k_theoretical_occupancy = "sm__maximum_warps_per_active_cycle_pct";
inline constexpr std::string_view k_eligible_warps = "smsp__warps_eligible.avg.per_cycle_active";

inline constexpr std::string_view k_ffma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
inline constexpr std::string_view k_fadd = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum";
inline constexpr std::string_view k_fmul = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum";
inline constexpr std::string_view k_dfma = "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum";
inline constexpr std::string_view k_dadd = "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum";
inline constexpr std::string_view k_dmul = "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum";
inline constexpr std::string_view k_hfma = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum";
inline constexpr std::string_view k_hadd = "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum";
inline constexpr std::string_view k_hmul = "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum";
inline constexpr std::string_view k_tensor_inst = "sm__inst_executed_pipe_tensor.sum";
inline constexpr std::string_view k_hgmma_fp16 = "sm__ops_path_tensor_op_hgmma_src_fp16.sum";
inline constexpr std::string_view k_hgmma_bf16 = "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum";
inline constexpr std::string_view k_hgmma_tf32 = "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum";
inline constexpr std::string_view k_hgmma_fp8 = "sm__ops_path_tensor_src_fp8.sum";

inline constexpr std::string_view k_sm_throughput = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view k_compute_memory_throughput =
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view k_dram_throughput = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view k_l2_throughput = "lts__throughput.avg.pct_of_peak_sustained_elapsed";
inline constexpr std::string_view k_l1_throughput = "l1tex__throughput.avg.pct_of_peak_sustained_elapsed";

inline constexpr std::string_view k_ipc_elapsed = "sm__inst_executed.avg.per_cycle_elapsed";
inline constexpr std::string_view k_ipc_active = "sm__inst_executed.avg.per_cycle_active";
inline constexpr std::string_view k_issued_ipc = "sm__inst_issued.avg.per_cycle_active";
inline constexpr std::string_view k_sm_busy = "sm__instruction_throughput.avg.pct_of_peak_sustained_active";
inline constexpr std::string_view k_issue_slots = "sm__inst_issued.avg.pct_of_peak_sustained_active";
// Per pipe: "sm__inst_executed_pipe_<pipe>" + k_pipe_suffix and "sm__pipe_<pipe>_cycles_active" + k_pipe_suffix.
inline constexpr std::string_view k_pipe_inst_prefix = "sm__inst_executed_pipe_";
inline constexpr std::string_view k_pipe_cycles_prefix = "sm__pipe_";
inline constexpr std::string_view k_pipe_suffix = ".avg.pct_of_peak_sustained_active";
inline constexpr std::string_view k_warp_cycles_per_issue = "smsp__average_warp_latency_per_inst_issued.ratio";
inline constexpr std::string_view k_issue_active = "smsp__issue_active.avg.per_cycle_active";
// Per stall reason: k_stall_prefix + "<reason>" + k_stall_suffix.
// (Nsight Compute's WarpStateStats names: warps in that state per issue-active cycle, i.e. cycles
// per issued instruction. Not smsp__average_warp_latency_issue_stalled_<reason>.ratio: that is
// cycles per warp over its lifetime, not per instruction.)
inline constexpr std::string_view k_stall_prefix = "smsp__average_warps_issue_stalled_";
inline constexpr std::string_view k_stall_suffix = "_per_issue_active.ratio";
}  // namespace metric

}  // namespace gpuscope::core::kernels

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
