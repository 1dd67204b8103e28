// trace_copy: an in-memory copy of a trace that keeps only the rows a filter lets through.
// The filter is data (a time window, a process, a set of (pid, device_id) pairs, a set of
// per-process intervals); which rows it keeps in each table is decided here, from the
// table's columns in store/schema.hpp, and done in SQL (INSERT ... SELECT from the source
// attached read-only, helper tables in the copy's temp schema). What to filter on — which
// NVTX ranges, which physical GPU, the time relative to the trace start — is decided by the
// caller (analyze/common/trace_filter.hpp, `gpuscope stats --filter-nvtx/--from/--to/--process/
// --device`).
//
// A row is kept when every filter that is set keeps it (AND):
//
//   from_ns / to_ns   [a, b] on the trace clock (ns, absolute; an unset end is unbounded).
//     Rows with start_ns and end_ns (gpu_metrics too): kept when they overlap (start ≤ b and
//     end ≥ a), whole, not clipped. nvtx_events: a mark (end_ns NULL, style 'Mark') at its start, an unclosed
//     range never ends. messages and memory_events (ts_ns) and kernel_profiles (launch_ns):
//     a ≤ t ≤ b. (memory_events.in_use_bytes keeps the levels computed on the whole trace.)
//     capture_windows and processes: kept when they overlap, and clipped to [a, b].
//   pid               rows of that process; rows whose pid is NULL (whole-trace data_loss)
//                     are kept.
//   devices           (pid, device_id) pairs: kernels, memcpys, memsets, kernel_profiles,
//                     memory_events and devices rows on one of them; api_calls and syncs of their processes
//                     except those whose (pid, correlation_id) launched a kernel, copy or
//                     memset on another device; other rows of their processes (and NULL pid).
//                     An empty set keeps no row that has a pid. gpu_metrics and
//                     gpu_metrics_sessions (no pid): the GPUs whose session UUID is the
//                     devices.uuid of one of the pairs (a GPU no traced process saw: none).
//   ranges            per-process intervals [start_ns, end_ns] (merged here when they
//                     overlap; "inside" = inside their union):
//     api_calls: start ≥ an interval's start and end ≤ its end, on any thread of the process.
//     nvtx_events: the same, with a mark's or an unclosed range's start as its end.
//     kernels, memcpys, memsets, kernel_profiles: their launching API call (same pid and
//       correlation_id) is kept by this rule, wherever they run in time.
//     syncs: their API call is kept, or they lie inside themselves.
//     memory_events: their API call is kept, or their ts_ns is inside an interval.
//     overheads: they overlap an interval; messages: their ts_ns is inside one.
//     gpu_metrics: they overlap an interval of any process (a GPU's counters count every
//       process on it).
//     capture_windows: none copied (give `capture_windows`).
//   kernel_metrics follow their kernel_profiles row.
// Copied whole: meta, strings, and every table not named above (threads, data_loss by pid,
// gpu_metric_names; gpu_metrics_sessions but for a device filter: their samples and
// first_ns/last_ns stay as imported).
//
// capture_windows, when set, are inserted as they are (after the copied ones, if any).
// widen_spans: after copying, the earliest capture_windows and processes start is moved
// back, and the latest end forward, to cover the kept kernels, memcpys, memsets, api_calls
// and syncs (never narrowed), so a report's wall time holds the busy time of what it counts.
//
// The copy has the schema's tables, views and indexes (indexes built after the rows), and
// no helper table left. A source lacking a table of the schema (a trace older than
// kernel_profiles) gives that table empty. `source` is only read: a file is attached by
// path (what is committed is read), an in-memory one is copied first (Database::attach).
//
// Cost: one INSERT ... SELECT per table; the interval test is one index lookup per row;
// the kept rows are held in memory once.
//
// Errors: DatabaseError if the source is not a trace (a table without the schema's
// columns) or SQLite fails.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "store/database.hpp"
#include "store/rows.hpp"

namespace gpuscope::store {

struct PidInterval {
  std::int64_t pid = 0;
  std::int64_t start_ns = 0;  // trace clock
  std::int64_t end_ns = 0;    // inclusive
};

struct PidDevice {
  std::int64_t pid = 0;
  std::int64_t device_id = 0;  // CUDA ordinal inside that process
};

struct TraceCopyFilter {
  std::optional<std::int64_t> from_ns;  // absolute, trace clock
  std::optional<std::int64_t> to_ns;    // absolute, trace clock
  std::optional<std::int64_t> pid;
  std::optional<std::vector<PidDevice>> devices;
  std::optional<std::vector<PidInterval>> ranges;
  std::vector<rows::CaptureWindow> capture_windows;  // inserted as given
  bool widen_spans = false;
};

/// Copies the rows of `source` that `filter` keeps (file comment) into a new in-memory
/// database with the trace schema.
[[nodiscard]] Database copy_trace(Database& source, const TraceCopyFilter& filter);

}  // namespace gpuscope::store
