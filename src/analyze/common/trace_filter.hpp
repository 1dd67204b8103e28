// trace_filter: the event filters of `gpuscope stats` (--filter-nvtx, --from/--to,
// --process, --device), applied once for every report: filter_trace() builds an
// in-memory copy of the trace with the same schema that holds only the kept events,
// and every report runs unchanged on it.
//
// What each filter keeps (all given filters must hold: they combine with AND):
//
//   --filter-nvtx RANGE[@DOMAIN][/N]   (nsys stats' syntax)
//     The instances: closed or unclosed NVTX ranges (not marks) whose message is RANGE,
//     in domain DOMAIN if given ("RANGE@" = the default domain only; no "@" = any
//     domain). "/N" keeps only the N-th instance in start order, counting from 1
//     (within --process if given). An '@' or '/N' that is part of the name cannot be
//     written; the warning for a range that matches nothing lists the names seen.
//     A RANGE containing '*' is a pattern (SQLite GLOB: '*' any text, '?' one
//     character, '[...]' a set), so 'step *' takes every "step N" range of a PyTorch
//     loop. A never-closed range lasts to the end of the trace.
//     - CPU events (api_calls, syncs, nvtx_events) are kept when they lie inside an
//       instance of their process: start ≥ instance start and end ≤ instance end (a
//       mark: its time), on ANY thread of the process. NVTX push/pop ranges belong to
//       one thread, but the work of a "step" does not: PyTorch runs backward on its
//       autograd thread (in tests/data/cnn.sqlite 156 of the 306 kernels are launched
//       from it, none inside the main thread's "step N" ranges), so a same-thread rule
//       would silently drop half of every training step. Inside means inside the union
//       of the instances of the process.
//     - GPU ops (kernels, memcpys, memsets) are kept when their launching API call
//       (same pid and correlation_id) is kept by this rule, wherever they run in time;
//       syncs records also through their correlation_id.
//     - overheads and collector messages are kept when they overlap an instance of
//       their process.
//     - capture_windows becomes one window per instance (reason "nvtx:RANGE").
//   --from T --to T   (T relative to the start of the trace: the start of its wall
//                      span, analyze/common/gpu_busy.hpp — the first capture window)
//     Events are kept when they overlap [from, to] (start ≤ to and end ≥ from; a mark
//     or message: from ≤ time ≤ to; an unclosed range never ends). Events are NOT
//     clipped: a kernel that starts before `from` keeps its whole duration in every
//     report. capture_windows and processes are clipped to [from, to].
//   --process PID     rows of that process (rows with a NULL pid, such as whole-trace
//                     data_loss rows, are kept).
//   --device N        the physical GPU index that `gpuscope summary` and gpu_util print
//                     (analyze/common/gpu_index.hpp). GPU ops and devices rows of that GPU;
//                     CPU-side rows of the processes that used it, except API calls
//                     and syncs correlated with GPU work on another GPU.
//   Wall time. After a time or NVTX filter, the capture windows (or, without any, the
//     processes' spans) are widened to cover the kept events, so a report's wall time
//     always contains the busy time of what it counts: a kernel launched inside a step
//     that ends after the step counts in full, and so does the time it runs.
//
// Unaffected: meta and strings (copied whole), threads (by pid), data_loss (by pid).
//
// A filter that matches nothing is not an error: the result is an empty trace (the
// reports say "no ... in the capture range") and FilteredTrace::warnings names what
// the trace does contain (the NVTX range names seen, the pids, the GPUs, the time span).
//
// This file decides what to keep (the NVTX instances, the (pid, device) pairs of a GPU,
// the absolute time window, the capture windows); store/trace_copy.hpp copies the rows.
// Cost: one pass over each table (in SQLite, with the NVTX containment test an indexed
// lookup per event), the kept rows held in memory once, plus the schema's indexes
// rebuilt on them.
//
// Errors: std::invalid_argument for a bad filter value (from > to, a negative time,
// /0); store::DatabaseError if the source lacks the schema's tables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/database.hpp"

namespace gpuscope::analyze {

struct NvtxRangeFilter {
  std::string name;                      // the message, exact (case-sensitive); with '*' a GLOB
  std::optional<std::string> domain;     // nullopt: any domain; "": the default domain
  std::optional<std::int64_t> instance;  // 1-based, in start order; nullopt: every one
};

/// "RANGE[@DOMAIN][/N]" → NvtxRangeFilter. The last '@' separates the domain; a
/// trailing "/digits" is the instance. Throws std::invalid_argument for an empty
/// range name or N < 1.
[[nodiscard]] NvtxRangeFilter parse_nvtx_filter(std::string_view text);

/// "1.5" (seconds), "1.5s", "250ms", "10us", "42ns" → ns (rounded to the nearest).
/// Throws std::invalid_argument naming the text and the accepted forms for anything
/// else, a negative time, or one beyond ±292 years.
[[nodiscard]] std::int64_t parse_trace_time(std::string_view text);

struct TraceFilter {
  std::optional<NvtxRangeFilter> nvtx;
  std::optional<std::int64_t> from_ns;  // relative to the start of the trace
  std::optional<std::int64_t> to_ns;    // relative to the start of the trace
  std::optional<std::int64_t> pid;
  std::optional<std::int64_t> gpu;  // physical GPU index

  /// True when no filter is set (filter_trace would copy everything).
  [[nodiscard]] bool empty() const { return !nvtx && !from_ns && !to_ns && !pid && !gpu; }
};

struct FilteredTrace {
  store::Database db;                 // in memory, the trace schema, only the kept rows
  std::vector<std::string> warnings;  // a filter that matched nothing, and what there is
};

/// Builds the filtered copy of `source` (see the file comment). `source` is left as it
/// was (it may be read-only).
[[nodiscard]] FilteredTrace filter_trace(store::Database& source, const TraceFilter& filter);

}  // namespace gpuscope::analyze
