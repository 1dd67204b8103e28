// tracer_share: gpuscope's own tracing cost, as the launcher recorded it in the trace's
// `meta` table, and the arithmetic that takes it out of the launch analyses
// (launch_overhead, top, gpu_util). A CUPTI tracer makes every recorded API call slower,
// so part of the CPU time those reports attribute to kernel launches is gpuscope's.
//
// meta keys (text values; calibrated per machine by the launcher, core/tracer_cost.hpp):
//   tracer_launch_cost_ns  CPU ns that tracing added to each kernel-launch API call
//   tracer_api_cost_ns     CPU ns that tracing added to every other recorded API call
//   tracer_cost_method     one line saying how the cost was measured (shown as is)
//   tracer_torch_op_cost_ns / tracer_torch_module_cost_ns  CPU ns gpuscope's PyTorch observer
//                          adds to each recorded operator / module call (--pytorch=ops,modules;
//                          measured in the traced process as it exits, src/collect/python)
// A cost is known when its value is a finite decimal number ≥ 0 (surrounding blanks
// allowed, nothing else); absent, empty, negative, NaN or garbage → unknown. Traces
// recorded before calibration have none of these keys.
//
// Taking the cost out of a launch call: [s, e] → [s, max(s, e − c)] (a call never gets
// shorter than empty); a gap the GPU waited for a launch shrinks to max(0, gap − c).
// c is rounded to whole ns for this interval arithmetic.
// Errors: store::DatabaseError if the database lacks the meta table.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/stats.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze::detail {

/// The tracer's cost per call as recorded in meta; nullopt = unknown (see above).
struct TracerCost {
  std::optional<double> launch_ns;        // tracer_launch_cost_ns
  std::optional<double> api_ns;           // tracer_api_cost_ns
  std::string method;                     // tracer_cost_method, "" when absent
  std::optional<double> torch_op_ns;      // tracer_torch_op_cost_ns
  std::optional<double> torch_module_ns;  // tracer_torch_module_cost_ns
};

/// The three meta keys of `db` (see above).
[[nodiscard]] TracerCost tracer_cost(store::Database& db);

/// A meta value as a cost in ns: a finite decimal number ≥ 0, else nullopt.
[[nodiscard]] std::optional<double> parse_cost_ns(std::string_view text);

/// A cost in whole ns for interval arithmetic: rounded to nearest; unknown → 0.
[[nodiscard]] std::int64_t whole_cost_ns(std::optional<double> cost_ns);

/// Each call [s, e] shortened to [s, max(s, e − cost_ns)], in the input's order
/// (not a union: pass the result to stats::interval_union). cost_ns ≥ 0.
[[nodiscard]] std::vector<stats::Interval> without_tracer_cost(std::span<const stats::Interval> calls,
                                                               std::int64_t cost_ns);

/// A gap the GPU waited for a launch, without the tracer's cost: max(0, gap_ns − cost_ns).
[[nodiscard]] std::int64_t gap_without_tracer_cost(std::int64_t gap_ns, std::int64_t cost_ns);

/// Total CPU time tracing added to a run (ns): launch_calls × launch cost + other_calls
/// × API cost + torch_ops × operator cost + torch_modules × module cost, an unknown cost
/// counting as 0. nullopt when the launch cost is unknown.
[[nodiscard]] std::optional<double> tracer_time_ns(const TracerCost& cost, std::int64_t launch_calls,
                                                   std::int64_t other_calls, std::int64_t torch_ops = 0,
                                                   std::int64_t torch_modules = 0);

/// One piece of gpuscope's own CPU cost: at_ns (trace clock) where it was paid, ns how much.
struct Overhead {
  std::int64_t at_ns = 0;
  double ns = 0.0;
};

/// The starts of gpuscope's PyTorch observer's recorded calls in `table` (torch_ops or
/// torch_modules, joined to nvtx_events) inside `wall`, each at cost_ns, appended to `out`; none
/// when the cost is unknown or ≤ 0, or the table is absent.
void add_torch_overheads(store::Database& db, std::string_view table, const std::optional<double>& cost_ns,
                         const stats::Interval& wall, std::vector<Overhead>& out);

/// The starts of the recorded CUDA API calls inside `wall` that are no launch call (launch_ids:
/// (pid, correlation id), sorted; those are priced at the launch cost), each at cost_ns
/// (tracer_api_cost_ns), appended to `out`; none when the cost is unknown or ≤ 0.
void add_api_overheads(store::Database& db, const std::optional<double>& cost_ns, const stats::Interval& wall,
                       std::span<const std::pair<std::int64_t, std::int64_t>> launch_ids, std::vector<Overhead>& out);

/// ns of `overheads` that lengthened the run: the part the GPU waited for. In time order the
/// overheads accumulate; each idle gap of wall \ busy (busy: disjoint, sorted) takes what has
/// accumulated before the gap ends, at most its own length (without that cost the CPU would
/// have reached the launch that ends the gap that much sooner); the end of a synchronizing
/// call the CPU waited in (waits: sorted) drops what is left (the GPU was busy the whole time:
/// the CPU would only have waited longer). A CPU-bound loop thus counts nearly every overhead,
/// a GPU-bound one only those paid after its last wait. A queueing model in the manner of
/// critical-path analysis, not a replay: the gaps keep their traced order.
[[nodiscard]] std::int64_t critical_overhead_ns(std::vector<Overhead> overheads, const stats::Interval& wall,
                                                const std::vector<stats::Interval>& busy,
                                                const std::vector<std::int64_t>& waits);

}  // namespace gpuscope::analyze::detail
