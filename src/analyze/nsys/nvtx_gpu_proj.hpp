// nvtx_gpu_proj_sum: the GPU time of the work launched inside each NVTX range — what a
// PyTorch user wants per training step or per layer. Named and shaped as the nsys report of
// that name; a report of `gpuscope stats` (-r nvtx_gpu_proj_sum).
//
// Which GPU operations belong to a range instance
//   A GPU operation (kernel, memcpy or memset) belongs to a range instance when its launching
//   API call — the api_calls row of the same pid and correlation_id (if several rows share
//   them, the one that starts first) — starts inside the range on the range's thread:
//   same pid and tid, and range start_ns ≤ call start_ns < range end_ns.
//   Ranges nest: an operation counts in every enclosing range. A CUDA graph launch is one
//   API call, so all the kernels of the graph (which carry its correlation_id) belong to the
//   ranges around that cudaGraphLaunch. Operations whose launch call is not in the trace
//   belong to no range (counted in an info note).
//   Ranges considered: closed PushPop and StartEnd ranges (no marks, no never-closed
//   ranges) that end on the thread they started on (end_tid = tid, or NULL), as nsys does;
//   an instance counts only if at least one GPU operation belongs to it (as nsys: "each
//   NVTX range contains one or more GPU operations").
//
// Projected time of an instance: the length of the union of its operations' [start_ns,
//   end_ns) intervals — the GPU time during which at least one of them ran. Concurrent
//   operations on several streams count once; idle gaps between them do not count. (nsys
//   projects onto the span from the first operation's start to the last one's end, which
//   includes the gaps; the union is what the GPU really spent.)
//
// One row per (Range, Style) — Range as nvtx_sum names it ("domain:text" for a non-default
// domain) — sorted by Total Proj Time descending (ties: Range, then Style, ascending):
//   Range, Style
//   Total Proj Time (ns)    Σ over instances of the projected time
//   Total Range Time (ns)   Σ over instances of (end_ns − start_ns)
//   Range Instances         instances with at least one GPU operation
//   Proj Avg, Proj Med (ns, reals), Proj Min, Proj Max (ns, integers), Proj StdDev (ns, real):
//                           of the per-instance projected time; StdDev of one instance is
//                           NULL (undefined), as in nsys_reports.hpp
//   Total GPU Ops           kernels + memcpys + memsets belonging to the instances
//   Avg GPU Ops             Total GPU Ops / Range Instances
//   Total Kernel Time (ns)  Σ (end_ns − start_ns) of the kernels among them: a sum, so
//                           concurrent kernels each count in full and it can exceed Total
//                           Proj Time
//
// No rows → the columns and a note: "no GPU activity in the capture range" when the trace has
// no kernel, memcpy or memset, else "no NVTX ranges with GPU operations in the capture range".
// Errors: store::DatabaseError if the database lacks the schema's tables/views.
#pragma once

#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

[[nodiscard]] Report nvtx_gpu_proj_sum(store::Database& db);

}  // namespace gpuscope::analyze
