// trace_summary: the reports `gpuscope trace` prints when the run ends.
//
// Returns, in order:
//   1. "trace_overview" (always): one row — Wall Time (ms), GPU Busy Time (ms),
//      GPU Busy (%), Whole-Run Wall Time (ms), Kernels, Memcpys, Memsets, Processes, GPUs.
//      Wall Time, GPU Busy and the counts judge the judged window (analyze/timeline/
//      judged_window.hpp: the steady state, else from the first GPU work on; as stats'
//      top and gpu_util), its note last among the notes; Whole-Run Wall Time is the whole
//      trace's. Its notes carry everything known lost or doubtful, loudest first:
//        - data_loss rows: severity 'data_loss' → NoteLevel::kDataLoss,
//          'warning' → kWarning, 'info' → kInfo (store::parse_loss_severity,
//          store/data_loss_kinds.hpp; any other text → kWarning);
//        - processes with ended_cleanly = 0 → kDataLoss;
//        - collector messages: 'error'/'warning' → kWarning, 'info' → kInfo;
//        - no kernel/memcpy/memset at all → kWarning "no GPU activity in the capture range".
//   2. "gpu_utilization": one row per physical GPU, on the judged window — only when it used
//      more than one.
//   3. "cuda_gpu_kern_sum": top_kernels(db, top_n) (nsys_reports.hpp: the first top_n rows of
//      cuda_gpu_kern_sum, columns Time (%), Total Time (ns), Instances, Avg (ns), Name) — only
//      if there are kernels; the whole run, as stats' cuda_gpu_kern_sum.
//   4. "cuda_gpu_mem_sum": memcpys per copy kind and memsets — only if there are any; the whole run.
//
// Definitions
//   Whole-run wall time: from the first to the last capture window (capture_windows); without
//     windows, from the earliest process start to the latest process end; without
//     those, from the first to the last event. Wall time: the same of the judged window's
//     copy of the trace (its events, not clipped).
//   GPU busy time: per physical GPU, the length of the union of its kernel, memcpy
//     and memset intervals (concurrent work on several streams is counted once),
//     summed over GPUs. GPU Busy (%) = busy / (wall × GPUs with activity) × 100;
//     a NULL cell (not NaN) when the wall time is 0.
//   Kernel Time (%): a kernel name's total time / the total time of all kernels
//     (a sum, so overlapping kernels each count in full), × 100 (cuda_gpu_kern_sum's).
//   Throughput (GB/s): bytes / total time in ns (1 GB = 1e9 bytes); NULL if the time is 0.
//   Total (MB): 1 MB = 1e6 bytes, as nsys.
//
// Errors: throws store::DatabaseError if the database lacks the schema's tables.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

/// The end-of-trace summary (see the file comment). top_n < 1 is treated as 1. whole_run: the
/// overview judges the whole process, not the judged window.
[[nodiscard]] std::vector<Report> trace_summary(store::Database& db, int top_n = 10, bool whole_run = false);

namespace detail {
/// Appends the notes of trace_overview on what is known lost or doubtful (data_loss rows,
/// abnormal process ends, collector messages), loudest first, as described above.
void add_trace_notes(store::Database& db, Report& report);
}  // namespace detail

/// The nsys name of a memcpy kind from the schema's copy_kind ("HtoD" →
/// "[CUDA memcpy Host-to-Device]"); unknown kinds → "[CUDA memcpy Unknown]".
[[nodiscard]] std::string memcpy_operation_name(std::string_view copy_kind);

}  // namespace gpuscope::analyze
