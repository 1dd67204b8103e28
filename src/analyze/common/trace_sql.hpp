// trace_sql: the SQL fragments and the grouping every report shares, so that each names a
// kernel, an NVTX range and a group of events the same way: the kernel name column for
// --base / --mangled, the user's own NVTX ranges (not gpuscope's PyTorch hooks), and events
// grouped by key with one integer value each (ns or bytes).
//
// Errors: store::DatabaseError from running SQL on a database without the schema's views.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/common/report_options.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

namespace detail {

/// SQL over v_kernels naming a kernel as every kernel report does for `options`: the
/// demangled name, --base the short name, --mangled the mangled one (a missing short or
/// mangled name falls back to the demangled one; none: '<unknown kernel>').
[[nodiscard]] std::string kernel_name_sql(const ReportOptions& options);

/// SQL over v_nvtx naming a range as nvtx_sum does: its text, "domain:text" in a
/// non-default domain.
inline constexpr std::string_view kNvtxRangeNameSql =
    "CASE WHEN domain IS NULL THEN COALESCE(text, '') ELSE domain || ':' || COALESCE(text, '') END";

/// " AND ..." leaving out of v_nvtx the ranges gpuscope's PyTorch hooks made: operators and
/// modules (torch_ops, torch_modules: their own reports show them; a trace without those
/// tables, written by an earlier gpuscope, has none) and the generate() calls
/// ("gpuscope.generate": llm_sum starts TTFT there).
[[nodiscard]] std::string user_nvtx_only_sql(store::Database& db);

/// Events grouped by key: the key cells and one integer value per event.
struct ValueGroup {
  std::vector<std::string> key;
  std::vector<std::int64_t> values;
  std::int64_t total = 0;
};

/// Maps a group's key to another (several keys may map to one: they merge).
using Rekey = std::function<std::vector<std::string>(std::vector<std::string>)>;

/// Runs `sql`, whose last column is an integer value and the columns before it the key
/// (as text), and groups the rows by key (after `rekey`, when given); rows with a NULL
/// value are skipped. Sorted by total descending, then key ascending. The helper behind
/// every nsys-named summary (analyze/nsys/nsys_reports.hpp) and sync_wait.
[[nodiscard]] std::vector<ValueGroup> group_values_by_key(store::Database& db, std::string_view sql,
                                                          const Rekey& rekey = {});

}  // namespace detail

}  // namespace gpuscope::analyze
