// top: what `gpuscope stats TRACE` prints without --report — the five numbers that say
// where the time goes, the kernels that take it, and the diagnoses that fired, each with
// its evidence and what to try. Two Reports, since a Report has one table:
//
// "top" — one row for the whole trace (all GPUs together). Every number is the one the
// detailed report computes, from the same code:
//   Wall Time (ms)     the wall span (analyze/common/gpu_busy.hpp): first to last capture window
//   GPU Busy (%)       Σ per-GPU busy time / (wall × GPUs with activity) × 100, as
//                      trace_overview; on one GPU it is gpu_util's Busy (%)
//   SM Coverage (%)    Σ per-GPU ∫ occupied SMs dt / Σ (SM count × wall) × 100 over the GPUs
//                      whose kernels have launch facts — on one GPU gpu_util's SM Coverage
//                      (%); NULL when no kernel has launch facts
//   Launch-Bound (%)   launch_overhead's launch-bound share without gpuscope's own cost
//                      (LaunchBound::launching_share_untraced) × 100: of the time the GPU was
//                      idle, the share during which the CPU was inside launch calls, with the
//                      tracer's cost per launch (meta tracer_launch_cost_ns) taken out of each
//                      call; the traced share when the trace does not record the cost (0 when
//                      the GPU was never idle)
//   Sync-Blocked (%)   sync_wait's blocked time (union of synchronizing calls and sync
//                      records) / wall × 100
//   SM Active (%), Tensor Active (%)
//                      only in a trace with sampled GPU metrics (trace --gpu-metrics; after SM
//                      Coverage): the GPU's own counters sm__cycles_active and the tensor pipe's,
//                      time-weighted over the samples inside the wall span of the GPUs with
//                      activity (analyze/metrics/gpu_metrics_data.hpp); NULL where none has samples.
//                      An info note after the others says what they are and how much of the
//                      wall time the samples cover. A trace without samples: as before, byte
//                      for byte.
//   Percentages are NULL when the wall time is 0.
// Its notes: first the trace's data loss and collector messages (as trace_overview), then
// one info note saying what each percentage is a share of (Launch-Bound (%) of the GPU's idle
// time, with that idle time as a share of the wall), then one warning per diagnosis that fired, in the order below, or
// one info note "no diagnosis fired: ..." with the numbers; then one info note per diagnosis that holds only because of
// gpuscope's own cost ("not launch-bound once gpuscope's own cost (C ns per launch) is taken out: ..." / "not
// CPU-starved once ...") — those do not fire.
//
// gpuscope's own cost: the launch numbers of the diagnoses (idle share, launch-bound share,
// launching-while-idle time, graph saving) are launch_overhead's untraced ones
// (analyze/nsys/launch_reports.hpp): equal to the traced ones when the trace does not record the
// cost; when it is known their evidence starts "without gpuscope's own cost of C ns per
// launch, " (detail::untraced_lead). GPU Busy (%) in the row stays as traced.
//
// Diagnoses and their thresholds
//   launch-bound      launch_overhead's verdict, on the untraced numbers: GPU idle' ≥ 10 %
//                     of wall' and the CPU in launch calls during ≥ 50 % of idle'. Evidence:
//                     those shares, launching while idle', graph saving' bounded by idle'
//                     (no other diagnosis claims a graph saving).
//                     Try: CUDA graphs, torch.compile(mode="reduce-overhead"), fewer and
//                     larger kernels.
//   CPU-starved       busy' < kStarvedBusyPercent (50 %) and neither launch-bound nor
//                     sync-blocked, where busy' = Σ busy / (wall' × GPUs) and wall' = wall −
//                     LaunchBound::tracer_idle_ns (= GPU Busy when the cost is unknown). When
//                     it holds on the traced numbers (GPU Busy, the traced launch-bound test)
//                     but not on these, it does not fire. The CPU spends the gaps elsewhere
//                     (Python, framework dispatch, data loading). Evidence: idle share',
//                     launch-bound share', sync-blocked share (of the traced wall), the count
//                     of gaps where the GPU waited for the next kernel. Try: CUDA graphs /
//                     torch.compile(mode="reduce-overhead") to drop the per-operation CPU
//                     cost, a larger batch, faster data loading.
//   sync-blocked      sync_wait's verdict (detail::sync_blocked_verdict): blocked ≥ 20 % of the
//                     wall and the GPU idle ≥ 10 % of it. Evidence: the call with the most
//                     blocked time, the GPU's idle share. Try: remove .item(), .cpu(),
//                     torch.cuda.synchronize() from the loop.
//   low SM coverage   SM Coverage < kLowCoverageShareOfBusy (½) × GPU Busy: while busy, the
//                     kernels could occupy fewer than half of the SMs on average (grids
//                     smaller than the GPU). Try: larger batches, fused kernels, independent
//                     work on concurrent streams.
//   pageable copies   detail::pageable_verdict (memcpy_check): pageable host-device copies
//                     ≥ 1 % of the wall. Try: pin the host buffer.
//   serialized copies detail::serialized_verdict (memcpy_check): serialized host-device copy
//                     time ≥ 5 % of the wall (device copies never count). Try:
//                     cudaMemcpyAsync from pinned memory on its own stream.
//   exposed communication
//                     a trace with NCCL kernels: NCCL time with no compute kernel beside it on
//                     the same GPU ≥ kExposedCommShare (10 %) of the step time, all ranks
//                     together (their spans without steps; analyze/comm/comm_findings.hpp).
//                     Evidence: exposed and total communication, the hidden share, the rank
//                     with the most. Try: DDP gradient buckets, FSDP prefetch, fewer and larger
//                     collectives.
//   straggler         a rank that holds the others back (Σ of how much later it arrived at a
//                     collective than the next-to-last rank) by ≥ kStragglerShare (5 %) of the
//                     mean step time (stragglers). Evidence: the stragglers sentence — how often
//                     it came last, by how much, how long the others waited, from which step.
//                     Try: its data loading, extra work on one rank, uneven data, a slow GPU.
//
// "top_kernels" — top_kernels(db, kTopKernelCount) (analyze/nsys/nsys_reports.hpp): Time (%),
// Total Time (ns), Instances, Avg (ns), Name of the 10 kernel names with the most time.
//
// Empty capture (no kernel, memcpy or memset) → both Reports have their columns, no rows
// and the note "no GPU activity in the capture range".
// Errors: store::DatabaseError if the database lacks the schema's tables/views.
#pragma once

#include <vector>

#include "analyze/nsys/gpu_util_report.hpp"
#include "analyze/nsys/nsys_reports.hpp"
#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

inline constexpr int kTopKernelCount = 10;
inline constexpr double kStarvedBusyPercent = 50.0;

/// {"top", "top_kernels"} (see the file comment). options name the kernels (--base, --mangled).
[[nodiscard]] std::vector<Report> top(store::Database& db, const ReportOptions& options = {});

}  // namespace gpuscope::analyze
