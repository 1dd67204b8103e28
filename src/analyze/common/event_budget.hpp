// event_budget: how many rows a report may hold in memory, decided before it reads them.
//
// Reports read the trace through SQL, but some keep one entry per event: a per-event
// report's rows (cuda_gpu_trace, cuda_api_trace), the kernels joined to their launch
// calls (launch_overhead, top), every kernel's span (gpu_util), every GPU operation
// (nvtx_gpu_proj_sum). Each of these counts its rows first (COUNT(*): no allocation) and
// calls check_event_budget(); when rows × bytes per row would pass the budget it throws
// TraceTooLargeError, whose message says how many rows, the memory they would take and
// what to do instead, so a big trace is refused with advice rather than growing until
// the out-of-memory killer ends the run.
//
// The budget: 1 GB (10^9 bytes) of report data, or the size in the environment variable
// GPUSCOPE_MEMORY_BUDGET ("4GiB", "2^32", "500000000"; a value that does not parse is
// refused by name). Bytes per row: each caller's figure, measured as peak RSS per row on
// a 10M-event trace and rounded up (docs/performance.md, "Big traces").
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuscope::analyze {

/// A report would hold more rows than the memory budget allows; what() is the user's
/// message (rows, estimated bytes, the budget, what to do).
class TraceTooLargeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The budget in bytes: GPUSCOPE_MEMORY_BUDGET if set (std::invalid_argument naming the
/// variable when it does not parse as a size), else 10^9.
[[nodiscard]] std::int64_t memory_budget_bytes();

/// What a report is about to hold, for check_event_budget().
struct EventRows {
  std::string_view report;  // "cuda_gpu_trace"
  std::string_view what;    // "kernels, memcpys and memsets" (one row each)
  std::int64_t rows = 0;    // counted with COUNT(*)
  std::int64_t bytes_per_row = 0;
  std::string_view advice;  // report-specific ways out, put before the general ones
};

/// Throws TraceTooLargeError when rows × bytes_per_row > memory_budget_bytes().
void check_event_budget(const EventRows& rows);

}  // namespace gpuscope::analyze
