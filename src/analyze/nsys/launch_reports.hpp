// launch_reports: two diagnosis reports of `gpuscope stats` — is the run launch-bound
// (the GPU waits for the CPU to enqueue work), and where does the CPU block on the GPU.
//
// launch_overhead — one row per kernel short name (nsys --base; falls back to the
// demangled name), over kernels that have a launch call: the API call of the same
// pid and correlation_id. Kernels without one are left out and counted in a warning.
//   Launches                   kernels of that name with a launch call
//   CPU Launch Time avg (ns)   mean of (launch call end_ns − start_ns)
//   GPU Time avg (ns)          mean of (kernel end_ns − start_ns)
//   Queue Delay avg/median (ns) of (kernel start_ns − launch call end_ns). Not clamped:
//                              it is negative when the kernel started before the launch
//                              call returned (common for short queues).
//   Tracer Cost avg (ns)       of CPU Launch Time avg, gpuscope's own tracing cost: meta
//                              tracer_launch_cost_ns (analyze/common/tracer_share.hpp), the same for
//                              every launch; NULL when the trace does not record it.
//   Launch/GPU                 CPU Launch Time avg / GPU Time avg; NULL if the latter is 0.
// Rows sorted by total GPU time, descending (ties by name). Whole-run notes:
//   Wall W: [first, last] capture window; without windows the processes' span; without
//     those the span of all kernels, copies, memsets and API calls.
//   Busy B: union of all kernel, memcpy and memset intervals (all GPUs together).
//   Launching L: union of the intervals of launch calls (as above), on any CPU thread.
//   Idle = |W| − |B ∩ W|;  launching while idle = |L ∩ W| − |L ∩ B ∩ W|  (exact interval
//   arithmetic on disjoint sorted unions).
//   Launch-bound share = launching while idle / idle.
//   Graph saving (ns) ≈ Σ over consecutive kernels p → n on the same (pid, device, stream),
//     ordered by start, both with launch calls, where launch_end(n) > end(p) (the GPU
//     had finished p before the CPU had enqueued n) of max(0, start(n) − end(p)).
//     An upper estimate of what replaying the sequence as one CUDA graph could save.
//   gpuscope's own cost: c = meta tracer_launch_cost_ns rounded to whole ns (0 when
//     unknown; then every *_untraced number equals the traced one). Each launch call
//     [s, e] is shortened to [s, max(s, e − c)]; L' = union of the shortened calls.
//     Tracer idle T = |L ∩ W \ B| − |L' ∩ W \ B|: the part of launching while idle that
//     is the tracer's. With --pytorch=ops/modules, P = the PyTorch observer's cost on the
//     CPU's critical path beyond T: critical_overhead_ns over every launch (c), other recorded
//     API call (tracer_api_cost_ns), operator call (meta tracer_torch_op_cost_ns) and module
//     call (tracer_torch_module_cost_ns) starting in W, minus T, at most
//     idle − T − |L' ∩ W \ B| (0 when those costs are unknown). The GPU would have waited
//     that much less:
//       wall' = wall − T − P,  idle' = idle − T − P,  launching while idle' = |L' ∩ W \ B|
//       (= launching while idle − T),  idle share' = idle' / wall',
//       launch-bound share' = launching while idle' / idle',
//       graph saving' = Σ over the same gaps of max(0, gap − c); claimed only when the
//       run is launch-bound, and then at most idle' (graph_saving_bound_ns).
//   Verdict, from the untraced (') numbers: "launch-bound" when idle' ≥ 10 % of wall' and
//     the CPU was launching during ≥ 50 % of idle'; otherwise "not launch-bound" (when c is
//     known the evidence starts "without gpuscope's own cost of C ns per launch, "). When the
//     same test on the traced numbers says launch-bound but the untraced one does not, the
//     run would look launch-bound only because of gpuscope's own cost: an info note says so
//     and no warning fires.
//   Notes on gpuscope's own cost: known → how much of launching while idle is the
//     tracer's (T, T / launching while idle, c, meta tracer_cost_method); unknown → "gpuscope's
//     own cost per launch is unknown for this trace (recorded before calibration); launch
//     times include it". The graph-saving note: when launch-bound, the saving bounded by idle'
//     (graph saving' and the traced one when c is known); otherwise only the gaps' count and
//     length, and that no saving is claimed since the run is not launch-bound.
//
// sync_wait — one row per synchronizing call or record kind:
//   API calls named cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize,
//   cudaStreamWaitEvent, cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize, and
//   blocking copies (cudaMemcpy* / cuMemcpy* without "Async" in the name); plus syncs
//   records, one row per sync_type, named "[sync] <sync_type>".
//   Columns: Name, Calls, Total Blocked (ns), Avg (ns), Max (ns), Blocked (%) = total /
//   wall × 100 (NULL if the wall is 0). Sorted by Total Blocked, descending.
//   An API call and its syncs record describe the same wait, so the note's total blocked
//   time is the length of the union of all these intervals (any thread), not the row sum.
//   Idle: wall − |all GPUs' kernels, copies and memsets ∩ wall| (the traced idle time).
//   Verdict "sync-blocked" (sync_blocked_verdict): that union ≥ 20 % of the wall time and
//   the GPU idle ≥ 10 % of it — blocking while the GPU works costs nothing; otherwise an
//   info note "not sync-blocked: ..." with both shares.
//
// No rows → the columns, no rows and a first note "no ... in the capture range".
// Errors: store::DatabaseError if the database lacks the schema's tables/views.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/common/python_sites.hpp"
#include "analyze/nsys/nsys_reports.hpp"
#include "analyze/nsys/verdict.hpp"
#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

[[nodiscard]] Report launch_overhead(store::Database& db);
[[nodiscard]] Report sync_wait(store::Database& db);

namespace detail {

/// The whole-run numbers behind launch_overhead's notes and verdict (definitions above);
/// shares are 0 when their denominator is 0. Also used by `top` and `gpu_util`.
/// The plain fields are as traced; *_untraced ones have gpuscope's own cost taken out.
struct LaunchBound {
  std::int64_t wall_ns = 0;
  std::int64_t idle_ns = 0;
  std::int64_t launching_idle_ns = 0;
  std::int64_t graph_saving_ns = 0;
  std::int64_t graph_gaps = 0;    // gaps counted in graph_saving_ns
  std::int64_t launch_calls = 0;  // distinct launch calls (pid, correlation_id) in L
  double idle_share = 0.0;        // idle / wall
  double launching_share = 0.0;   // launch-bound share: launching while idle / idle

  double tracer_launch_cost_ns = 0.0;           // c as recorded (not rounded); 0 when unknown
  bool tracer_cost_known = false;               // meta tracer_launch_cost_ns holds a valid cost
  std::int64_t tracer_idle_ns = 0;              // T: the tracer's part of launching_idle_ns
  std::int64_t torch_tracer_idle_ns = 0;        // P: the PyTorch observer's cost the GPU waited for
  std::int64_t wall_ns_untraced = 0;            // wall − T − P
  std::int64_t idle_ns_untraced = 0;            // idle − T − P
  std::int64_t launching_idle_ns_untraced = 0;  // |L' ∩ W \ B| = launching while idle − T
  std::int64_t graph_saving_ns_untraced = 0;    // Σ max(0, gap − c)
  double idle_share_untraced = 0.0;             // idle' / wall'
  double launching_share_untraced = 0.0;        // launching while idle' / idle'

  std::int64_t graph_saving_bound_ns = 0;  // min(graph saving', idle'): what a graph could remove

  bool launch_bound = false;                   // the verdict, from the untraced numbers
  bool launch_bound_only_with_tracer = false;  // traced numbers say launch-bound, untraced not
};
[[nodiscard]] LaunchBound launch_bound(store::Database& db);

/// The launch-bound diagnosis on these numbers (launch_overhead's verdict and top's): fires
/// when lb.launch_bound; the evidence gives idle' (of the wall time), the launch-bound share'
/// (of that idle time), launching while idle' and, only when it fires, the graph saving
/// bounded by idle' (graph_saving_bound_ns).
[[nodiscard]] Verdict launch_bound_verdict(const LaunchBound& lb);

/// Leads evidence given in untraced numbers: "without gpuscope's own cost of C ns per
/// launch, " when the cost is known; "" when it is not (then they are the traced ones).
[[nodiscard]] std::string untraced_lead(const LaunchBound& lb);

/// The numbers behind sync_wait: its rows (grouped by name, sorted by total) and the
/// union of the blocked intervals; share is 0 when the wall time is 0.
struct SyncBlocked {
  std::vector<ValueGroup> calls;  // key[0] is the row's Name
  std::int64_t wall_ns = 0;
  std::int64_t blocked_ns = 0;
  std::int64_t idle_ns = 0;  // wall − |all GPUs' busy ∩ wall| (as launch_overhead's traced idle)
  double share = 0.0;        // blocked / wall
  double idle_share = 0.0;   // idle / wall
  bool sync_bound = false;   // the verdict: share ≥ 20 % and idle_share ≥ 10 %
  // With Python call sites (gpuscope trace --python-callsites): the user's lines that made
  // these calls, by time blocked (at most 3; common/python_sites.hpp); empty without them.
  std::vector<PySiteTotal> sites;
};
[[nodiscard]] SyncBlocked sync_blocked(store::Database& db);

/// The sync-blocked diagnosis (sync_wait's verdict and top's): the CPU blocked on the GPU
/// ≥ 20 % of the wall time while the GPU was idle ≥ 10 % of it. Blocking while the GPU is
/// busy costs nothing, so a busy GPU never makes it fire.
[[nodiscard]] Verdict sync_blocked_verdict(const SyncBlocked& sb);

}  // namespace detail

}  // namespace gpuscope::analyze
