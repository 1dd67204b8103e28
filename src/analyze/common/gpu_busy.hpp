// Internal: wall time and per-GPU busy time of a trace, shared by trace_summary
// (`gpuscope trace`/`summary`) and gpu_util (`gpuscope stats`) so both report the same
// numbers. Definitions (also in trace_summary.hpp):
//   Wall time: from the first to the last capture window (capture_windows); without
//     windows, from the earliest process start to the latest process end; without
//     those, from the first to the last event. 0 when there is nothing.
//   Busy: per physical GPU (GpuIndexMap), the union of its kernel, memcpy and memset
//     intervals (concurrent work on several streams is counted once).
// Errors: store::DatabaseError if the database lacks the schema's tables.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyze/common/gpu_index.hpp"
#include "core/stats.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze::detail {

/// The wall span (see above): [first, last] ns; {0, 0} when there is nothing.
[[nodiscard]] stats::Interval wall_span(store::Database& db);
/// Wall time in ns: the length of wall_span (0 when there is nothing).
[[nodiscard]] std::int64_t wall_time_ns(store::Database& db);

struct GpuBusy {
  std::int64_t busy_ns = 0;           // length of `busy`
  std::int64_t kernels = 0;           // kernel count
  std::string name;                   // devices.name, "" if unknown
  std::vector<stats::Interval> busy;  // the union: disjoint, sorted
};

/// Busy time of each physical GPU with activity, keyed by GPU index.
[[nodiscard]] std::map<std::int64_t, GpuBusy> busy_per_gpu(store::Database& db, const GpuIndexMap& gpus);

}  // namespace gpuscope::analyze::detail
