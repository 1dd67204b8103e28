// trace_diff: what changed between two traces of the same program (`gpuscope diff A B`), per
// kernel name, NVTX range (the program's own), PyTorch operator and training step.
//
// Instances compared: every kernel (v_kernels.name, GPU duration), closed NVTX push/pop or
// start/end range (nvtx_sum's name, CPU duration; not the PyTorch hooks' ranges), PyTorch
// operator call (torch_ops name, CPU duration) and step (judged_window's steps, wall time).
// Steady state: when both traces have a steady state found from steps (analyze/timeline/
// judged_window.hpp: PyTorch steps, NVTX ranges named like steps, or iterations found in the
// GPU work; warm-up and outlier steps left out), only instances that start inside each trace's
// judged window count, and steps are the steady ones: a diff of steps, not of model loading and
// warm-up. Steps are named by their source: "training step", "NVTX step" or "iteration".
//
// Per group (kind, name) present in either trace:
//   count, total (ns) and median per instance (ns) in A and in B;
//   change   = (median B − median A) / median A, in %;
//   noise    = sqrt(rA² + rB²), rX the McKean–Schrader relative standard error of the median
//              of X's instances (core/sample_stats.hpp): the spread the repeated instances show;
//   threshold = max(floor, k × noise) (k = 3 as `bench compare`; floor 5 % by default, above
//              bench compare's 1 %: two traces are two processes, and what differs between
//              processes (clocks, memory placement) the instances of one cannot show);
//   verdict  'slower' / 'faster' when |change| > threshold, else 'same'; 'unknown' when
//            either side has fewer than 3 instances (no spread to judge by);
//   category as Holistic Trace Analysis' TraceDiff: 'added' (only in B), 'deleted' (only in
//            A), 'increased' (slower), 'decreased' (faster), 'unchanged' (same), or 'unknown'.
// Rows are sorted by |total B − total A|, the biggest change of time first.
// Errors: store::DatabaseError if a database lacks the schema's tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}  // namespace gpuscope::store

namespace gpuscope::analyze {

struct DiffOptions {
  double k = 3.0;          // standard errors of the difference
  double floor = 0.05;     // smallest relative change ever called faster / slower
  bool whole_run = false;  // compare the whole traces even when both have a steady state
};

/// The comparison as a Report named "trace_diff": columns Kind, Name, Count A, Count B,
/// Total A (ns), Total B (ns), Median A (ns), Median B (ns), Change (%), Threshold (%),
/// Verdict, Category; notes: the headline (what changed most), counts per category, whether
/// steady-state steps were compared. Throws std::invalid_argument for k < 0 or floor < 0.
[[nodiscard]] Report diff_traces(store::Database& a, store::Database& b, const DiffOptions& options = {});

}  // namespace gpuscope::analyze
