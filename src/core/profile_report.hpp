// Reports of a machine profile (core/machine_profile.hpp), for `gpuscope peak`,
// `gpuscope roofline` and docs/metrics.md. Pure functions: MachineProfile → Report;
// render/ prints them.
//
// profile_report ("machine_profile"): one row per ceiling, in the profile's order:
//   Ceiling                    catalog name ("dram_copy")
//   Unit                       display unit of Measured, Theoretical and Datasheet on this row
//                              (display_unit(): GB/s, TFLOP/s, TOP/s, launch/s, µs)
//   Measured, Theoretical,
//   Datasheet                  the profile's values converted to Unit; NaN (printed "-") if unknown
//   % of Theoretical (%)       measured / theoretical × 100
//   % of Datasheet (%)         measured / datasheet × 100
//   SM Clock (MHz)             the lowest SM clock read before and after the measurement
//   Throttled, Verified        "yes" / "no"
//   Samples                    timed repetitions behind Measured
//   Spread (%)                 (max - min) / median of those repetitions × 100
//   Method                     the profile's method line, with "best shape MxNxK; " in front
//                              for tensor rates
// Notes: the device and the run (info), --quick (info), the profile's warnings, and one
// warning per ceiling that was throttled, not verified or spread by more than 5 %; for
// shared_memory also the per-SM bandwidth (total / SM count).
//
// roofline_report ("roofline"): the ridge point of every pair of a memory slope and a
// compute roof that roofline::chart_lines() draws (memory outer, compute inner):
//   Memory, Bandwidth (GB/s), Compute, Compute Rate (TFLOP/s), Ridge Point (FLOP/B).
// A profile without a memory or a compute line gives no rows and a note saying which is
// missing.
//
// ceiling_catalog_report ("ceiling_catalog"): the catalog (core/machine_profile.hpp) as
// Name, Kind, Unit, Label, Quick, Description; docs/metrics.md embeds it as markdown.
#pragma once

#include <string_view>

#include "core/machine_profile.hpp"
#include "core/report.hpp"

namespace gpuscope::core {

/// How a value in a catalog unit is shown: shown = value × scale, in `unit`.
struct DisplayUnit {
  std::string_view unit;
  double scale = 1.0;
};

/// "B/s" → GB/s (1e-9), "FLOP/s" → TFLOP/s (1e-12), "OP/s" → TOP/s (1e-12),
/// "s" → µs (1e6), anything else (e.g. "launch/s") → itself (1).
[[nodiscard]] DisplayUnit display_unit(std::string_view catalog_unit);

/// "memory", "compute", "transfer", "latency".
[[nodiscard]] std::string_view ceiling_kind_name(CeilingKind kind);

[[nodiscard]] Report profile_report(const MachineProfile& profile);
[[nodiscard]] Report roofline_report(const MachineProfile& profile);
[[nodiscard]] Report ceiling_catalog_report();

/// `peer_links`: one row per ordered GPU pair that `gpuscope peak`'s p2p ceiling measured
/// (Source GPU, Destination GPU, Bandwidth in GB/s = 1e9 B/s, % of the fastest pair, Verified,
/// the two UUIDs). No rows (and a note) when the profile has no pair (one GPU).
[[nodiscard]] Report peer_link_report(const MachineProfile& profile);

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
