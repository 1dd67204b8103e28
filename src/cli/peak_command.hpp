// `gpuscope peak [--quick] [--json FILE] [--svg FILE] [--device N] [--format F] [--no-save]`
// and `gpuscope peak --methods`: measures the real ceilings of one GPU (peak/peak.hpp),
// prints them as a table (core/profile_report.hpp), saves the machine profile to the
// per-user cache (store/machine_profile_json.hpp) and prints its path; --json also
// writes it to FILE, --svg draws its roofline (render/roofline_svg.hpp).
//
// --reference auto|torch|none: after the measurement, a separate python3 process times
// PyTorch's copy and matmul (peak/reference.hpp); they are printed as one more report and
// a reference above its ceiling is a warning (in the profile too). No python3 or torch: a
// note (a warning with --reference torch), never an error.
// Progress: one line per ceiling on stderr as it is measured. Warnings (busy GPU,
// ceilings not measured, throttling) on stderr and in the profile.
// --methods needs no GPU: it prints, as markdown, every ceiling of the catalog with its
// unit, what it counts and how it is measured (docs/metrics.md embeds this output).
//
// Exit codes: 0 done; 3 no usable GPU (the message says what to check); 4 measured, but a
// ceiling failed its result check (outputs are still written, the ceiling says
// "CHECKSUM MISMATCH"); 2 bad option or output path (an existing --json/--svg file
// without -f is refused before the GPU is touched; files are written atomically,
// cli/output_files.hpp); 1 anything else (a CUDA failure).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/table_flags.hpp"

namespace gpuscope::cli {

struct PeakOptions {
  bool quick = false;
  std::string json;                // also write the profile here
  std::string svg;                 // roofline chart
  bool force_overwrite = false;    // -f: replace existing --json/--svg files (else refused before measuring)
  int device = 0;                  // CUDA ordinal
  std::string format = "table";    // table | csv | json | markdown (the printed reports)
  bool no_save = false;            // do not write the per-user cache
  bool methods = false;            // print the ceilings and their methods, measure nothing
  std::string reference = "auto";  // auto | torch | none: PyTorch references after the ceilings
  TableFlags table;                // --timeunit, --name-width (cli/table_flags.hpp)
};

/// Declares the subcommand and its options (one place: also the --help text).
CLI::App* add_peak_command(CLI::App& app, PeakOptions& options);

/// Runs it; returns the exit code (see above). Prints its own errors.
[[nodiscard]] int run_peak(const PeakOptions& options);

/// The --methods text: markdown, one section per catalog ceiling.
[[nodiscard]] std::string peak_methods_markdown();

}  // namespace gpuscope::cli
