// `gpuscope roofline [PROFILE.json] [-o roofline.svg] [--format F] [--device D] [--point P]...`:
// prints a machine profile (the measured ceilings and the roofline's ridge points) and
// draws its roofline as SVG — without a GPU, from a profile `gpuscope peak` saved.
//
// Without PROFILE.json it uses the cached profile (store/machine_profile_json.hpp) of the
// GPU named by --device (name or UUID), or the first cached one, and says which.
// Exit codes: 0 done; 2 bad input — a missing, malformed or unusable profile, no cached
// profile, a bad --point or --format, an existing -o file without -f (refused before the
// profile is read; the message says what to do); 1 anything else (e.g. the SVG cannot be
// written: the file that was there is kept, cli/output_files.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/table_flags.hpp"

namespace gpuscope::cli {

struct RooflineOptions {
  std::string profile;  // PROFILE.json; empty → the cache
  std::string output = "roofline.svg";
  bool force_overwrite = false;     // -f: replace an existing output
  std::string format = "table";     // table | csv | json | markdown (the printed reports)
  std::string device;               // with no PROFILE: the cached profile of this GPU (name or UUID)
  std::vector<std::string> points;  // "NAME:INTENSITY:FLOPS" (FLOP/B, FLOP/s), drawn on the chart
  TableFlags table;                 // --timeunit, --name-width (cli/table_flags.hpp)
};

/// Declares the subcommand and its options (one place: also the --help text).
CLI::App* add_roofline_command(CLI::App& app, RooflineOptions& options);

/// Runs it; returns the exit code (see above). Prints input errors itself.
[[nodiscard]] int run_roofline(const RooflineOptions& options);

}  // namespace gpuscope::cli
