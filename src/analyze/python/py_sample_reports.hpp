// The reports over the periodic Python samples of `gpuscope trace --python-sampling[=RATE]`
// (py_samples: one row per Python thread per tick, naming the thread's stack in py_stacks).
// Both are judged reports (timeline/judged_window.hpp): `gpuscope stats` runs them on the judged
// window (--whole-run: the whole process) and adds the note that says which window.
//
// py_sum — where the Python threads spent their time. One row per (pid, tid, frame), a frame
// being "file:line function" (PySite::where(); the same line's py_frames rows count as one):
//   Self Samples   samples whose innermost frame is this frame              (samples)
//   Self           Self Samples / the thread's samples × 100                (%)
//   Total Samples  samples with this frame anywhere in the stack, once each (samples)
//   Total          Total Samples / the thread's samples × 100               (%)
//   Self Time, Total Time   samples × the thread's sampling period      (ms)
//     period = the median interval between consecutive samples of the thread (ns); NULL for a
//     thread with fewer than 2 samples
//   Self On CPU    Self Samples taken while the thread was on a CPU / Self Samples × 100 (%);
//                  NULL when Self Samples is 0
// Rows by Total, then Self, largest first; at most kPySumFramesPerThread per thread (a note
// counts the rest). The thread's samples include those with no Python frame (py_stack_id NULL,
// or a stack the trace does not define); a note counts them per thread.
//
// gpu_idle_py — which Python line the GPU waited on. Per process, the window is the trace's wall
// span (analyze/common/gpu_busy.hpp: the judged window on the judged copy) and the busy time the
// union of the busy intervals of the GPUs the process used (gpu_busy.hpp's busy_per_gpu, the
// numbers gpu_util prints); the idle gaps are the rest of the window, its start and end
// included, so idle = wall − busy = 100 % − gpu_util's Busy %. A sample is in a gap when
// gap start ≤ ts_ns < gap end. Each gap's length is charged to the samples one thread took in
// it: gap ns / that thread's samples in the gap (so a thread's charges sum to the idle time
// it was sampled in). One row per (pid, tid, frame):
//   Called From   the caller chain of the stack charged most with this frame (at most 2 frames)
//   Self Idle Time   idle ns charged to samples whose innermost frame is this frame  (ms)
//   Self Idle        Self Idle Time / the process's GPU idle time × 100              (%)
//   Samples          those samples                                                   (samples)
//   Total Idle Time  idle ns charged to samples with this frame anywhere in the stack (ms)
//   Total Idle       Total Idle Time / the process's GPU idle time × 100             (%)
// plus one row "(no Python frame)" per thread for samples without one. Rows by Total Idle, then
// Self Idle, largest first; at most kPySumFramesPerThread per thread. The first note per process
// is the headline: "GPU idle 33 % of the wall time (10 ms of 30 ms); 100 % of that idle time was
// sampled in data.py:123 load ← train.py:57 <module> (thread 1234)".
//
// Neither report is an error without samples: a trace with no py_samples table or no rows gives
// no rows and a note that says to trace with --python-sampling. Errors: store::DatabaseError from
// reading `db`; analyze::EventBudgetError (event_budget.hpp) from the GPU busy time.
#pragma once

#include <cstddef>

#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

/// Rows per thread that py_sum and gpu_idle_py print (frames beyond are counted in a note).
inline constexpr std::size_t kPySumFramesPerThread = 25;

/// `gpuscope stats -r py_sum` (see the file comment).
[[nodiscard]] Report py_sum(store::Database& db);

/// `gpuscope stats -r gpu_idle_py` (see the file comment).
[[nodiscard]] Report gpu_idle_py(store::Database& db);

}  // namespace gpuscope::analyze
