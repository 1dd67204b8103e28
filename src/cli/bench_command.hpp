// `gpuscope bench`: time kernels the right way, sweep sizes, and show how close each
// operator gets to the measured ceiling (docs/bench.md).
//
//   gpuscope bench list [OP]                 the operator suite (needs no GPU)
//   gpuscope bench OP [options]              run OP's variants over --sizes on the GPU
//   gpuscope bench report RESULTS.json       print (and --svg draw) a saved run (no GPU)
//   gpuscope bench compare BASE.json NEW.json  speedup and verdict per case (no GPU)
//   gpuscope bench serve --url URL [options]  load an OpenAI-compatible server (cli/bench_serve.hpp)
//
// Exit codes: 0 done; 1 a CUDA or I/O failure, or no usable GPU for `bench OP`; 2 bad
// input (unknown operator, variant, dtype, mode, sizes, format; a missing or malformed
// file; an output file that exists, without -f), with a message saying what is valid; 3 `bench OP` ran but a reference
// check failed (the results are still written).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "cli/bench_serve.hpp"
#include "cli/table_flags.hpp"

namespace gpuscope::cli {

struct BenchOptions {
  std::vector<std::string> what;           // "list" [OP] | OP | "report" FILE | "compare" BASE NEW
  std::string variant;                     // "" = every variant
  std::string sizes;                       // "" = the operator's default
  std::string dtype;                       // "" = the operator's first dtype
  std::string mode;                        // "" = the operator's default mode
  int batch = 0;                           // calls per sample in hot/graph; 0 = auto
  std::int64_t budget_ns = 1'000'000'000;  // sampling budget per case
  double max_noise = 0.005;                // stop when rel. std. error of the median <= this
  int min_samples = 10;
  int device = 0;
  bool no_verify = false;
  std::string profile;           // machine profile JSON; "" = the cached one for this GPU
  std::string json, csv, svg;    // output files, each written atomically (cli/output_files.hpp)
  bool force_overwrite = false;  // -f: replace existing output files (else refused before any work)
  std::string format = "table";  // printed reports
  double floor = 0.01;           // compare: smallest difference called faster/slower
  double k = 3.0;                // compare: standard errors of the difference
  ServeOptions serve;            // bench serve
  TableFlags table;              // --timeunit, --name-width (printed reports)
};

/// Declares the subcommand and its options (one place: also the --help text).
CLI::App* add_bench_command(CLI::App& app, BenchOptions& options);

/// Runs it; returns the exit code (see above). Prints its errors itself.
[[nodiscard]] int run_bench(const BenchOptions& options);

}  // namespace gpuscope::cli
