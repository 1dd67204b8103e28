// kernel_reports: the results of `gpuscope kernels` — the kernel_profiles and
// kernel_metrics tables of a trace (docs/trace-schema.md) turned into derived results
// (core/kernel_derive.hpp) and Reports. What is read and derived, and which ceilings:
// kernel_analysis.hpp (analyze_kernels); this file lays its results out as Reports.
//
// Reports (every number with its unit; NULL where a value is unknown; derived columns
// that are NULL in every row are left out, e.g. FLOP columns for the quick set):
//   kernel_metrics      one row per launch, by launch index (then pid):
//     Launch, PID (identifiers), Name (short name, else the demangled name), Grid, Block
//     ("X×Y×Z" text), Reg/Trd, Duration (us), then every collected metric as a column
//     named as Nsight Compute names it, in its unit (core/kernel_metric_sets; "" for a
//     metric outside the sets; ".sum" counters as integers, rounded), then derived: DRAM BW, L2 BW, L1 BW (GB/s), FLOP
//     (GFLOP), Perf (GFLOP/s), AI DRAM, AI L2, AI L1 (FLOP/B), Theoretical Occ (%), Occ Limiter, Ceiling (catalog name
//     of the busiest unit's ceiling), % of Ceiling (%), Bound, Floor Time (ns: the launch's time
//     at its bounding unit's ceiling), Est. Speedup (% of its time), GPU Time Share (% of the
//     profiled launches' summed duration), Program Gain (%: share × speedup; core/kernel_derive.hpp),
//     Explanation.
//   kernel_metrics_sum  one row per kernel name, by total duration descending:
//     Name, Launches, Total Time (us), Avg (us), DRAM Bytes (MB, summed; 1 MB = 1e6 B),
//     DRAM BW, L2 BW, L1 BW (GB/s = summed bytes / summed time), FLOP (GFLOP, summed),
//     Perf (GFLOP/s), AI DRAM (FLOP/B), Achieved Occ (%, duration-weighted), Ceiling,
//     % of Ceiling (%), Bound (the dominant bound: the one of most launch time),
//     Bound Share (% of the name's time in launches with that bound), Floor Time (ns, of
//     the mean launch), Est. Speedup (%), GPU Time Share (% of the name's total time),
//     Program Gain (%), Explanation (of the mean launch, kernels::mean_launch).
//   The Explanation column and the derivation notes are analyze/kernel_explain's sentences.
// Notes: where the ceilings come from, the warnings, the derivation notes of the launches
// (each distinct text once). A trace without kernel_profiles or with no rows: no rows and
// the note "no kernel profiles in the trace: run `gpuscope kernels [--set NAME] -- CMD`
// to collect hardware counters per kernel" (KernelAnalysis::has_profiles false).
//
// Errors: those of analyze_kernels (kernel_analysis.hpp); store::DatabaseError for a
// database without the schema's tables.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analyze/kernels/kernel_analysis.hpp"
#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

/// "kernel_metrics": one row per launch.
[[nodiscard]] Report kernel_launch_report(const KernelAnalysis& analysis);
/// "kernel_metrics_sum": one row per kernel name.
[[nodiscard]] Report kernel_name_report(const KernelAnalysis& analysis);

/// analyze_kernels() then kernel_launch_report().
[[nodiscard]] Report kernel_metrics(store::Database& db, const KernelReportOptions& options = {});
/// analyze_kernels() then kernel_name_report().
[[nodiscard]] Report kernel_metrics_sum(store::Database& db, const KernelReportOptions& options = {});

/// The GPU the profiled kernels ran on (the first launch's device, devices.uuid); "" when
/// unknown (no kernel_profiles or devices rows).
[[nodiscard]] std::string profiled_gpu_uuid(store::Database& db);

/// What a `gpuscope kernels` run left: launches profiled, and the collector's warnings
/// and errors (messages table, in time order: severity, text).
struct KernelRunOutcome {
  std::int64_t profiled = 0;
  std::vector<std::pair<std::string, std::string>> problems;
};
[[nodiscard]] KernelRunOutcome kernel_run_outcome(store::Database& db);

/// The empty-trace note above.
inline constexpr std::string_view kNoKernelProfilesNote =
    "no kernel profiles in the trace: run `gpuscope kernels [--set NAME] -- CMD` to collect hardware counters per "
    "kernel";

}  // namespace gpuscope::analyze
