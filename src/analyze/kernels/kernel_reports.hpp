// kernel_reports: the results of `gpuscope kernels` — the kernel_profiles and
// kernel_metrics tables of a trace (docs/trace-schema.md) turned into derived results
// (core/kernel_derive.hpp) and Reports.
//
// analyze_kernels() reads every profiled launch (kernel_profiles, its metrics from
// kernel_metrics, its device from devices, names from strings), keeps those whose
// demangled or short name matches KernelReportOptions::name_regex (std::regex_search,
// ECMAScript), derives each launch, and groups launches by kernel name.
//
// Ceilings: the machine profile given (its measured ceilings, source "measured"); a
// profile whose device.uuid differs from a device of the trace adds a warning. Without
// one: per device, core::theoretical_profile() of the devices row (SM clock
// core_clock_khz, memory clock memory_clock_khz × bus width; when those are 0, DRAM
// ceilings from memory_bandwidth_bytes_per_s), source "theoretical", and a warning.
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
// Errors: std::invalid_argument for a name_regex that does not compile (the message
// quotes it); store::DatabaseError for a database without the schema's tables.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/kernel_derive.hpp"
#include "core/machine_profile.hpp"
#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

struct KernelReportOptions {
  const MachineProfile* profile = nullptr;  // measured ceilings; nullptr: theoretical per device
  kernels::TensorCalibration calibration;   // tensor counter → FLOP per count
  std::string name_regex;                   // empty: every kernel
};

/// One profiled launch and what was derived from it.
struct KernelLaunch {
  std::int64_t profile_id = 0;
  std::int64_t pid = 0;
  std::int64_t device_id = 0;
  std::int64_t launch_index = 0;
  std::int64_t correlation_id = 0;
  std::string name;        // demangled
  std::string short_name;  // base name (no namespace, template or parameters)
  std::string metric_set;  // kernel_profiles.metric_set
  std::int64_t grid[3] = {0, 0, 0};
  std::int64_t block[3] = {0, 0, 0};
  kernels::LaunchFacts launch;
  kernels::KernelDevice device;
  kernels::MetricValues values;
  kernels::KernelDerived derived;

  /// short_name, else name.
  [[nodiscard]] const std::string& display_name() const { return short_name.empty() ? name : short_name; }
};

/// All launches of one kernel name.
struct KernelName {
  std::string name;  // display name (the grouping key)
  std::int64_t launches = 0;
  double total_duration_s = 0;
  kernels::MetricValues mean;      // kernels::mean_launch of its launches
  kernels::LaunchFacts launch;     // its first launch's facts and device: what derive()
  kernels::KernelDevice device;    //   of the mean launch was given
  kernels::KernelDerived derived;  // derive() of the mean launch
  kernels::Bound dominant_bound = kernels::Bound::kUnknown;
  std::string dominant_label;            // its bound_label
  double dominant_share_pct = kUnknown;  // % of the name's duration in launches with that bound
  double dram_bytes = kUnknown;          // summed (NaN: not collected)
  double flops = kUnknown;               // summed (NaN: not collected)
};

struct KernelAnalysis {
  bool has_profiles = false;           // the table exists and has rows (before filtering)
  std::vector<KernelLaunch> launches;  // by launch index, then pid
  std::vector<KernelName> names;       // by total duration, descending
  std::vector<std::string> metrics;    // collected metric names: set order first, then others by name
  std::string ceiling_source;          // "measured", "theoretical" or "" (no launches)
  MachineProfile ceilings;             // the profile given, else the theoretical ceilings of the
                                       // first launch's device (for the roofline chart)
  std::vector<std::string> warnings;
};

/// Reads and derives (see the file comment).
[[nodiscard]] KernelAnalysis analyze_kernels(store::Database& db, const KernelReportOptions& options = {});

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
