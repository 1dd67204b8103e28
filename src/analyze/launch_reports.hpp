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
//   Verdict: "launch-bound" when idle ≥ 10 % of the wall time and the CPU was launching
//     during ≥ 50 % of the idle time; otherwise "not launch-bound".
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
//   Verdict: "sync-bound" when that union is ≥ 20 % of the wall time.
//
// No rows → the columns, no rows and a first note "no ... in the capture range".
// Errors: store::DatabaseError if the database lacks the schema's tables/views.
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/nsys_reports.hpp"
#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

[[nodiscard]] Report launch_overhead(store::Database& db);
[[nodiscard]] Report sync_wait(store::Database& db);

namespace detail {

/// The whole-run numbers behind launch_overhead's notes and verdict (definitions above);
/// shares are 0 when their denominator is 0. Also used by the `top` report.
struct LaunchBound {
  std::int64_t wall_ns = 0;
  std::int64_t idle_ns = 0;
  std::int64_t launching_idle_ns = 0;
  std::int64_t graph_saving_ns = 0;
  std::int64_t graph_gaps = 0;   // gaps counted in graph_saving_ns
  double idle_share = 0.0;       // idle / wall
  double launching_share = 0.0;  // launch-bound share: launching while idle / idle
  bool launch_bound = false;     // the verdict
};
[[nodiscard]] LaunchBound launch_bound(store::Database& db);

/// The numbers behind sync_wait: its rows (grouped by name, sorted by total) and the
/// union of the blocked intervals; share is 0 when the wall time is 0.
struct SyncBlocked {
  std::vector<ValueGroup> calls;  // key[0] is the row's Name
  std::int64_t wall_ns = 0;
  std::int64_t blocked_ns = 0;
  double share = 0.0;        // blocked / wall
  bool sync_bound = false;   // the verdict
};
[[nodiscard]] SyncBlocked sync_blocked(store::Database& db);

}  // namespace detail

}  // namespace gpuscope::analyze
