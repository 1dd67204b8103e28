// kernel_analysis: the profiled launches of `gpuscope kernels` (the kernel_profiles and
// kernel_metrics tables of a trace, docs/trace-schema.md) read and derived
// (core/kernel_derive.hpp), before any Report is laid out (kernel_reports.hpp does that).
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
// Errors: std::invalid_argument for a name_regex that does not compile (the message
// quotes it); store::DatabaseError for a database without the schema's tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/kernel_derive.hpp"
#include "core/kernel_point.hpp"
#include "core/machine_profile.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

struct KernelReportOptions {
  const MachineProfile* profile = nullptr;  // measured ceilings; nullptr: theoretical per device
  // Tensor counter → FLOP per count; the calibrated defaults unless a caller overrides them,
  // so every reader of a trace (kernels --report, the HTML report) counts tensor-core FLOPs.
  kernels::TensorCalibration calibration = kernels::default_tensor_calibration();
  std::string name_regex;  // empty: every kernel
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

/// The kernels of `analysis` as roofline points (core/kernel_point.hpp), the ones `gpuscope
/// kernels --svg` draws and `gpuscope report` draws and embeds: per launch (labelled
/// "NAME #LAUNCH_INDEX", in launch order) or per kernel name (its mean launch, labelled NAME,
/// most time first).
[[nodiscard]] std::vector<kernels::KernelPoint> roofline_points(const KernelAnalysis& analysis, bool per_launch);

}  // namespace gpuscope::analyze
