// analysis_cache: the whole-trace computations several reports share (gpu_utilization,
// launch_bound, sync_blocked, memcpy_check_data) are computed once per state of a
// connection and reused, so `gpuscope stats -r top,gpu_util,launch_overhead,...` reads
// and sweeps the trace once for each, not once per report (on a 1,000,000-event trace
// each costs 0.2-0.7 s).
//
// A result is reused only while the connection is the same (Database::serial(), unique per
// opened connection in the process) and unchanged: the same Database::total_changes()
// (rows this connection inserted, updated or deleted, temp tables included: filters) and
// the same `PRAGMA data_version` (commits by other connections). Only the latest state's
// results are kept: seeing another state empties the cache. Not thread-safe (like
// Database itself: one thread at a time).
#pragma once

#include <any>
#include <functional>
#include <string>

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze::detail {

/// The any holding compute()'s result for `what` in db's current state, computing and
/// keeping it on first use.
[[nodiscard]] const std::any& cached_any(store::Database& db, const std::string& what,
                                         const std::function<std::any()>& compute);

/// Typed front of cached_any: `what` must always be used with the same T.
template <class T, class F>
[[nodiscard]] const T& cached(store::Database& db, const std::string& what, F&& compute) {
  return std::any_cast<const T&>(cached_any(db, what, [&] { return std::any(T(compute())); }));
}

}  // namespace gpuscope::analyze::detail
