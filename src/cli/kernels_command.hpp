// `gpuscope kernels [options] -- CMD [ARGS...]`: hardware counters per kernel launch
// (CUPTI Range Profiler, kernel replay, in the collector's kernels mode:
// collect/kernel_profiler.hpp), imported into NAME.sqlite (tables kernel_profiles and
// kernel_metrics) and explained against the measured roofline (cli/kernels_output.hpp).
// Also `gpuscope kernels --list-metrics [FILTER]` and `--list-sets`, which need no GPU
// when --chip is given.
//
// Where the results go: --format table on stdout, after the program's own output. csv,
// json and markdown are documents: with -o NAME they go to NAME.csv / NAME.json / NAME.md
// (refused before the run if the file exists, unless -f), else to stdout, and then the
// profiled program runs with its stdout on gpuscope's stderr so the document is the only
// thing on stdout (a script can parse it). Progress and warnings always go to stderr.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/kernels_output.hpp"

namespace gpuscope::cli {

struct KernelsOptions {
  std::string output;  // NAME or NAME.sqlite
  bool force_overwrite = false;
  std::string set = "quick";
  std::vector<std::string> metrics;  // --metrics: replaces the set's list
  std::string kernel_regex;          // -k
  std::string nvtx_include;          // --nvtx-include NAME[@DOMAIN]
  std::uint64_t launch_skip = 0;
  std::uint64_t launch_count = 0;
  std::string replay_mode = "kernel";       // kernel or none (GPUSCOPE_KERNEL_REPLAY)
  std::string cache_control = "none";       // none or all (GPUSCOPE_CACHE_CONTROL)
  std::uint64_t launches_per_session = 64;  // with replay none (GPUSCOPE_KERNEL_BATCH)
  std::string report;                       // --report DB: print an earlier run's results, run nothing
  std::string chip;                         // --chip: for --list-metrics and checks without a GPU
  bool list_metrics = false;
  std::string list_filter;
  bool list_sets = false;
  bool trace_kernels = true;  // also record kernel activity (launch facts, timeline)
  bool keep_logs = false;
  std::vector<std::string> tensor_factors;  // COUNTER=FLOP
  KernelOutputOptions out;
  std::vector<std::string> command;
};

CLI::App* add_kernels_command(CLI::App& app, KernelsOptions& options);
[[nodiscard]] int run_kernels(KernelsOptions options);

}  // namespace gpuscope::cli
