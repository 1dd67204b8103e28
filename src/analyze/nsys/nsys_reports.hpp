// nsys_reports: the reports of `gpuscope stats`, named and shaped as `nsys stats` names them.
//
// Every report groups events by a key and gives, per group: the total, the count, and
// the mean (Avg), median (Med), Min, Max and unbiased sample standard deviation (StdDev)
// of one value per event — a duration in ns, or a size in MB (1 MB = 1e6 bytes, as nsys).
// Rows are sorted by the total, descending (ties by key, ascending).
//
//   cuda_api_sum           Time (%), Total Time (ns), Num Calls, Avg (ns), Med (ns), Min (ns),
//                          Max (ns), StdDev (ns), Name            — one row per API function
//   cuda_gpu_kern_sum      Time (%), Total Time (ns), Instances, Avg .. StdDev (ns), Name
//                          — one row per kernel name (ReportOptions::base: short name;
//                          ::mangled: mangled name; base wins if both are set)
//   cuda_gpu_mem_time_sum  Time (%), Total Time (ns), Count, Avg .. StdDev (ns), Operation
//                          — "[CUDA memcpy Host-to-Device]" etc. and "[CUDA memset]"
//   cuda_gpu_mem_size_sum  Total (MB), Count, Avg .. StdDev (MB), Operation
//   nvtx_sum               Time (%), Total Time (ns), Instances, Avg .. StdDev (ns), Style, Range
//                          — closed ranges only (marks and never-closed ranges excluded);
//                          Range is "domain:text" for a non-default domain
//
// `gpuscope stats` without --report runs only `top` (analyze/nsys/top_report.hpp: the five
// numbers, the top kernels, the diagnoses that fired). Everything else runs on request
// (`gpuscope stats -r NAME,...`): the five reports above, nvtx_gpu_proj_sum
// (analyze/nsys/nvtx_gpu_proj.hpp), the diagnoses gpu_util, launch_overhead, sync_wait,
// memcpy_check (gpu_util_report.hpp, launch_reports.hpp, memcpy_check.hpp), and:
//   cuda_gpu_sum           Time (%), Total Time (ns), Instances, Avg .. StdDev (ns), Category,
//                          Operation — kernels (Category "CUDA_KERNEL", Operation the kernel
//                          name as cuda_gpu_kern_sum) and memory operations ("MEMORY_OPER",
//                          Operation as cuda_gpu_mem_time_sum) in one table; Time (%) is of
//                          the sum over both categories
//   cuda_gpu_trace         one row per kernel, memcpy and memset, sorted by start (ties:
//                          kernels, memcpys, memsets, then row id): Start (ns), Duration (ns),
//                          CorrId, GrdX, GrdY, GrdZ, BlkX, BlkY, BlkZ, Reg/Trd, StcSMem (bytes),
//                          DymSMem (bytes), Bytes (bytes), Throughput (GB/s = bytes / ns; NULL
//                          for a zero duration), SrcMemKd, DstMemKd, Device, Ctx, Strm, Name.
//                          Start is absolute on the trace clock (the schema's ns timestamps;
//                          nsys prints time since its session start instead). Cells that do
//                          not apply are NULL: launch facts for memory operations, Bytes,
//                          Throughput and memory kinds for kernels, DstMemKd for memsets
//                          (whose memory kind is SrcMemKd, as nsys). Memory kinds are the
//                          schema's ('pageable', 'device', ...). Name: kernel name (per
//                          ReportOptions) or "[CUDA memcpy Host-to-Device]" / "[CUDA memset]"
//   cuda_api_trace         one row per CUDA API call, sorted by start (ties by row id):
//                          Start (ns, absolute as above), Duration (ns), Name, Result (the
//                          returned cudaError_t/CUresult), CorrID, Pid, Tid
//   The two trace reports hold every row in memory: they count their rows first and
//   throw TraceTooLargeError (analyze/common/event_budget.hpp) when those would pass the memory
//   budget; with ReportOptions::first_rows they read only the first N rows (SQL LIMIT)
//   and say "the first N of M ... (--top)" in a note.
//
// Cells: Total Time, Min, Max in ns are integers; Avg, Med, StdDev and every MB cell are
// reals. Time (%) = the group's total / the sum of all groups' totals × 100 (a sum, so
// overlapping events each count in full); NULL if that sum is 0. StdDev of a group of
// one is NULL (undefined; nsys prints 0).
//
// No events → a Report with the columns, no rows and a note "no ... in the capture range".
//
// Every report `gpuscope stats` can run, with its description, is listed once in
// analyze/report_registry.cpp (run_report(), report_names(), all_report_names()).
//
// Errors: store::DatabaseError if the database lacks the schema's tables/views.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/common/report_options.hpp"
#include "analyze/common/trace_sql.hpp"  // kernel_name_sql, group_values_by_key
#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

[[nodiscard]] Report cuda_api_sum(store::Database& db);
[[nodiscard]] Report cuda_gpu_kern_sum(store::Database& db, const ReportOptions& options = {});
[[nodiscard]] Report cuda_gpu_mem_time_sum(store::Database& db);
[[nodiscard]] Report cuda_gpu_mem_size_sum(store::Database& db);
[[nodiscard]] Report nvtx_sum(store::Database& db);
[[nodiscard]] Report cuda_gpu_sum(store::Database& db, const ReportOptions& options = {});
[[nodiscard]] Report cuda_gpu_trace(store::Database& db, const ReportOptions& options = {});
[[nodiscard]] Report cuda_api_trace(store::Database& db, const ReportOptions& options = {});

/// "top_kernels": the first `top_n` rows of cuda_gpu_kern_sum (same order, same numbers;
/// top_n < 1 is treated as 1) with its columns Time (%), Total Time (ns), Instances,
/// Avg (ns), Name. Time (%) stays of ALL kernels' time, so the shown rows sum to ≤ 100.
/// Notes: cuda_gpu_kern_sum's (the "no CUDA kernels ..." note when empty); when rows were
/// cut, "showing the top N of M kernel names; the other K take T ns of kernel time".
/// Used by `top` and by trace_summary.
[[nodiscard]] Report top_kernels(store::Database& db, int top_n, const ReportOptions& options = {});

}  // namespace gpuscope::analyze
