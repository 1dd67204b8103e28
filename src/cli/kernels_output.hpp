// kernels_output: what `gpuscope kernels` prints once the counters are imported — the
// kernel_metrics (per launch) or kernel_metrics_sum (per kernel name) report of
// analyze/kernels/kernel_reports.hpp, one plain-language paragraph per kernel name under it, and
// optionally the kernels on the measured roofline as SVG (render/kernel_roofline_svg.hpp).
//
// Machine profile, first that applies: KernelOutputOptions::profile_path (read errors
// throw store::ProfileError); none with no_profile; else the per-user cache entry of the
// GPU the profiled kernels ran on (store::load_cached_profile, by the devices table's
// uuid; a broken or missing cache is a warning). Without a profile the ceilings are
// theoretical (said on `err` and in the report notes).
//
// Rows: by "launch" or "name"; "" (auto) = per launch when there are at most
// kAutoLaunchRows launches, else per name. The paragraphs are written after the table in
// table and markdown formats only (csv and json carry them in the Explanation column, and
// must stay parseable); with the paragraphs, the report's Explanation column is left out
// of the table (it would be cut at 80 characters there).
//
// Results file: with KernelOutputOptions::results_path the results (the report in its
// format, and the paragraphs in markdown) go to that file instead of `out`, written
// atomically (an existing file is replaced only with force_overwrite, else
// store::OutputExistsError before anything is read); `err` names the file.
//
// Returns 0; 1 when the trace has no kernel profiles (the message, which says to run
// `gpuscope kernels`, goes to `err`) or no launch matches the name filter. Errors:
// std::invalid_argument for an unknown format or --by value or a bad name regex;
// store::ProfileError for an unreadable --profile; store::OutputExistsError when the SVG
// file exists and force_overwrite is false; store::FileWriteError when it cannot be written.
// The SVG is written atomically (store/atomic_file.hpp): when no chart can be drawn (a
// warning) or the write fails, the file that was there is kept as it was. Progress and warnings go to `err` prefixed
// "gpuscope kernels: ".
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "cli/table_flags.hpp"
#include "core/kernel_derive.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::cli {

inline constexpr std::size_t kAutoLaunchRows = 50;

struct KernelOutputOptions {
  std::string format = "table";            // table | csv | json | markdown
  std::string by;                          // "launch" | "name" | "" (auto, see above)
  std::string svg_path;                    // write the roofline SVG here; empty: none
  bool force_overwrite = false;            // replace an existing svg_path (else store::OutputExistsError)
  std::string profile_path;                // machine profile JSON; empty: the cached one of the GPU
  bool no_profile = false;                 // theoretical ceilings even when a profile is cached
  std::string name_regex;                  // only kernels whose name matches (ECMAScript, search)
  kernels::TensorCalibration calibration;  // tensor counter → FLOP per count
  bool explain = true;                     // the paragraphs under the table
  std::string results_path;                // write the results here instead of `out`; empty: `out`
  TableFlags table;                        // --timeunit, --name-width (cli/table_flags.hpp)
};

/// The results file of `gpuscope kernels -o NAME --format FORMAT`: NAME.csv, NAME.json or
/// NAME.md (NAME already expanded, without .sqlite); "" for the table format, which stays
/// on stdout.
[[nodiscard]] std::string kernel_results_path(const std::string& name, const std::string& format);

/// Prints the results of the kernel profiles in `db` (see the file comment).
int print_kernel_results(store::Database& db, const KernelOutputOptions& options, std::ostream& out, std::ostream& err);

}  // namespace gpuscope::cli
