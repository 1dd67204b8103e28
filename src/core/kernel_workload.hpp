// kernel_workload: the Compute Workload Analysis and Warp State Statistics of one kernel
// launch (`gpuscope kernels --set compute | warps | detailed`), from its counters to
// numbers and rankings; the words about them live in analyze/kernel_explain. Pure
// functions (core/: no I/O, no text for people beyond the fixed labels below).
//
// Inputs: metric name → value (core/kernel_metric_sets.hpp's names, in their own units).
//
// Compute workload (Nsight Compute's ComputeWorkloadAnalysis section, sm_90 names):
//   executed IPC elapsed / active   sm__inst_executed.avg.per_cycle_{elapsed,active}
//   issued IPC active               sm__inst_issued.avg.per_cycle_active
//   SM busy                         sm__instruction_throughput.avg.pct_of_peak_sustained_active (%)
//   issue slots busy                sm__inst_issued.avg.pct_of_peak_sustained_active (%)
//   each pipe's utilization = the larger of its two percentages that were collected:
//     sm__inst_executed_pipe_<pipe>.avg.pct_of_peak_sustained_active (instructions vs the
//     pipe's peak rate) and sm__pipe_<pipe>_cycles_active.avg.pct_of_peak_sustained_active
//     (cycles the pipe was busy: a pipe taking several cycles per instruction, as FP64 on
//     some chips, is busy longer than its instruction count says). Pipes, in Nsight
//     Compute's order: fma, alu, lsu, tma, adu, cbu, tex, uniform, xu, fp64, tensor,
//     shared (cycles only). The busiest pipe is the first after a stable sort by
//     utilization, highest first.
//
// Warp states (Nsight Compute's WarpStateStats section):
//   warp cycles per issued instruction  smsp__average_warp_latency_per_inst_issued.ratio
//   per stall reason                    smsp__average_warps_issue_stalled_<r>_per_issue_active.ratio
//     (warps in that state per issue-active cycle = cycles per issued instruction spent in
//     that state; the reasons add up to the total, "selected" being the issue cycle itself)
//   share of a reason = its cycles / warp cycles per issued instruction × 100 (when the
//   total is known and > 0, else of the sum of the reasons).
//   Reasons are ranked by cycles, highest first; "selected" is listed but never ranked
//   as a stall (it is the useful cycle). issue active = smsp__issue_active.avg.per_cycle_active
//   (≥ kIssueBusy: the schedulers issue almost every cycle, so stalls are hidden).
// Source: Nsight Compute Kernel Profiling Guide, "Warp Scheduler" and "Metrics Decoder"
// (stall reasons), and its WarpStateStats rule ("only focus on stalls if the schedulers
// fail to issue every cycle").
#pragma once

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/machine_profile.hpp"

namespace gpuscope::core::kernels {

/// Metric name → value (the same alias as core/kernel_derive.hpp's).
using MetricValues = std::map<std::string, double, std::less<>>;

inline constexpr double kIssueBusy = 0.8;  // issued instructions per scheduler per cycle: stalls hidden

/// One pipe's utilization.
struct PipeUse {
  std::string pipe;   // "fma", "alu", "lsu", "tma", "adu", "cbu", "tex", "uniform", "xu", "fp64", "tensor", "shared"
  std::string label;  // "FMA", "ALU", "LSU", "TMA", "ADU", "CBU", "TEX", "Uniform", "XU", "FP64", "tensor", "shared"
  double inst_pct = kUnknown;    // sm__inst_executed_pipe_<pipe>..., % of peak (NaN: not collected)
  double cycles_pct = kUnknown;  // sm__pipe_<pipe>_cycles_active..., % of active cycles (NaN: not collected)
  double pct = kUnknown;         // the larger of the two known ones
};

struct ComputeWorkload {
  double ipc_elapsed = kUnknown;  // warp instructions per cycle per SM
  double ipc_active = kUnknown;
  double issued_ipc_active = kUnknown;
  double sm_busy_pct = kUnknown;
  double issue_slots_busy_pct = kUnknown;
  std::vector<PipeUse> pipes;  // collected pipes, busiest first
  /// Any of the metrics above was collected.
  [[nodiscard]] bool collected() const {
    return !pipes.empty() || std::isfinite(ipc_active) || std::isfinite(sm_busy_pct);
  }
};

/// One stall reason.
struct StallReason {
  std::string reason;           // "long_scoreboard", "barrier", ... (the metric's <reason>)
  std::string label;            // "long scoreboard", "barrier", "MIO throttle", ...
  double cycles = kUnknown;     // cycles per issued instruction
  double share_pct = kUnknown;  // of the warp cycles per issued instruction
};

struct WarpStates {
  double cycles_per_issued = kUnknown;  // smsp__average_warp_latency_per_inst_issued.ratio
  double issue_active = kUnknown;       // smsp__issue_active.avg.per_cycle_active
  double eligible_warps = kUnknown;     // smsp__warps_eligible.avg.per_cycle_active
  std::vector<StallReason> stalls;      // collected reasons except "selected", most cycles first
  double selected_cycles = kUnknown;    // the "selected" state (the issue cycle)
  [[nodiscard]] bool collected() const { return !stalls.empty() || std::isfinite(cycles_per_issued); }
};

/// The stall reasons gpuscope reads, in Nsight Compute's order ("selected" last).
[[nodiscard]] const std::vector<std::string_view>& stall_reasons();
/// The pipes gpuscope reads, in Nsight Compute's order.
[[nodiscard]] const std::vector<std::string_view>& pipe_names();
/// "long scoreboard", "MIO throttle", ... for a reason; the reason itself when unknown.
[[nodiscard]] std::string stall_label(std::string_view reason);
/// "FMA", "ALU", ... for a pipe; the pipe itself when unknown.
[[nodiscard]] std::string pipe_label(std::string_view pipe);

/// The compute workload of one launch (see the file comment). Nothing collected → every
/// field NaN and no pipes.
[[nodiscard]] ComputeWorkload compute_workload(const MetricValues& values);

/// The warp states of one launch (see the file comment).
[[nodiscard]] WarpStates warp_states(const MetricValues& values);

}  // namespace gpuscope::core::kernels
