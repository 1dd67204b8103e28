// Internal: the GPU idle time charged to sampled Python frames — the computation behind
// gpu_idle_py (py_sample_reports.hpp, whose file comment gives the rule: each idle gap's length
// charged to the samples one thread took in it) and the Python line that top's CPU-starved
// diagnosis names (analyze/nsys/top_report.cpp).
//
// Errors: store::DatabaseError from reading `db`; analyze::EventBudgetError (event_budget.hpp)
// from the GPU busy time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analyze/python/py_samples_data.hpp"
#include "core/stats.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze::detail {

/// Frames of a charged frame's "Called From" chain.
inline constexpr std::size_t kIdleCallerFrames = 2;

/// One process's judged window (the wall span) and the idle gaps of the GPUs it used.
struct ProcessGaps {
  stats::Interval window;
  std::int64_t idle_ns = 0;
  std::vector<stats::Interval> gaps;  // sorted, disjoint, inside the window
};

/// The idle time charged to one frame of one thread (ns as doubles: a gap split among samples).
struct FrameCharge {
  double self_ns = 0;
  double total_ns = 0;
  std::int64_t samples = 0;               // self samples
  std::map<std::string, double> callers;  // caller chain → ns charged with this frame in the stack
};

struct ThreadCharge {
  double sampled_ns = 0;  // Σ of the gaps this thread was sampled in
  double no_frame_ns = 0;
  std::int64_t no_frame_samples = 0;
  std::map<std::size_t, FrameCharge> frames;  // SampleFrames index → charge
};

using ThreadKey = std::pair<std::int64_t, std::int64_t>;  // pid, tid

struct GpuIdleCharges {
  explicit GpuIdleCharges(store::Database& db) : frames(db) {}
  std::map<std::int64_t, ProcessGaps> gaps;  // per process with GPU work
  std::map<ThreadKey, ThreadCharge> threads;
  std::set<std::int64_t> without_gpu;  // processes with samples but no GPU work
  /// ns charged per (thread, py_stack_id; 0 = no Python frame): the flame graph's weights.
  std::map<std::pair<ThreadKey, std::int64_t>, double> stacks;
  SampleFrames frames;
};

/// Charges every py_samples row of `db` that falls in an idle gap of its process's GPUs.
[[nodiscard]] GpuIdleCharges gpu_idle_charges(store::Database& db);

/// The caller chain text most charged for one frame ("" for an outermost frame).
[[nodiscard]] std::string top_caller(const FrameCharge& c);

/// The innermost frame charged most idle time in one process, with its callers.
struct IdleLine {
  std::int64_t tid = 0;
  std::string where;  // "data.py:123 load ← train.py:57 <module>"
  double self_ns = 0;
  double share = 0;  // self_ns / the process's idle ns (0..1)
};

/// nullopt when no sample with a Python frame fell in the process's idle gaps.
[[nodiscard]] std::optional<IdleLine> most_idle_line(const GpuIdleCharges& c, std::int64_t pid);

/// For the diagnoses: the process's line with the largest share of its GPU idle time, over the
/// processes of `db`; nullopt without samples or without a sampled frame in an idle gap.
struct ProcessIdleLine {
  std::int64_t pid = 0;
  bool several_processes = false;
  IdleLine line;
};
[[nodiscard]] std::optional<ProcessIdleLine> most_idle_line(store::Database& db);

}  // namespace gpuscope::analyze::detail
