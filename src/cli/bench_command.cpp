#include "cli/bench_command.hpp"

#include <iostream>
#include <stdexcept>

#include "analyze/bench/bench_analysis.hpp"
#include "analyze/bench/bench_reports.hpp"
#include "bench/bench_runner.hpp"
#include "bench/device_facts.hpp"
#include "bench/ops/operator.hpp"
#include "cli/bench_chart.hpp"
#include "cli/option_checks.hpp"
#include "cli/output_files.hpp"
#include "core/bench_derive.hpp"
#include "core/bench_sizes.hpp"
#include "core/units.hpp"
#include "render/report_render.hpp"
#include "store/atomic_file.hpp"
#include "store/bench_result_json.hpp"
#include "store/machine_profile_json.hpp"

namespace gpuscope::cli {
namespace {

// Bad input: "gpuscope bench: error: ..." and exit code 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr int kExitFailure = 1, kExitInput = 2, kExitCheckFailed = 3;

void warn(const std::string& text) { std::cerr << "gpuscope bench: warning: " << text << "\n"; }
void info(const std::string& text) { std::cerr << "gpuscope bench: " << text << "\n"; }

template <class T>
std::string join_names(const std::vector<T>& items, auto name_of) {
  std::string s;
  for (const T& item : items) s += (s.empty() ? "" : ", ") + std::string(name_of(item));
  return s;
}

std::string operator_names() {
  return join_names(bench::ops::registry(), [](const bench::ops::Operator& op) { return op.name; });
}

Report list_report() {
  Report r;
  r.name = "bench_list";
  r.title = "Benchmark Operators";
  r.add_column("Op", "", ColumnType::kText)
      .add_column("Variants", "", ColumnType::kText)
      .add_column("Dtypes", "", ColumnType::kText)
      .add_column("Sizes", "", ColumnType::kText)
      .add_column("Mode", "", ColumnType::kText)
      .add_column("Summary", "", ColumnType::kText);
  for (const bench::ops::Operator& op : bench::ops::registry())
    r.rows.push_back(Row{op.name, join_names(op.variants, [](const bench::ops::Variant& v) { return v.name; }),
                         join_names(op.dtypes, [](bench::ops::DType d) { return bench::ops::dtype_name(d); }),
                         op.default_sizes, std::string(bench::mode_name(op.default_mode)), op.summary});
  r.add_note(NoteLevel::kInfo, "gpuscope bench list OP: the variants, what they teach, and how the output is checked");
  return r;
}

Report operator_report(const bench::ops::Operator& op) {
  Report r;
  r.name = "bench_operator";
  r.title = op.name + ": " + op.summary;
  r.add_column("Variant", "", ColumnType::kText)
      .add_column("Largest Size", "", ColumnType::kInteger)
      .add_column("How It Is Written", "", ColumnType::kText);
  for (const bench::ops::Variant& v : op.variants)
    r.rows.push_back(Row{v.name, v.max_size > 0 ? Cell{v.max_size} : Cell{}, v.description});
  r.add_note(NoteLevel::kInfo, "teaches: " + op.teaches);
  r.add_note(NoteLevel::kInfo, "--sizes: " + op.shape_help + " (default " + op.default_sizes + ")");
  r.add_note(NoteLevel::kInfo,
             "--dtype: " + join_names(op.dtypes, [](bench::ops::DType d) { return bench::ops::dtype_name(d); }) +
                 " (default " + std::string(bench::ops::dtype_name(op.dtypes.front())) + "); --mode default " +
                 std::string(bench::mode_name(op.default_mode)));
  r.add_note(NoteLevel::kInfo, "reference check: " + op.reference);
  return r;
}

const bench::ops::Operator& find_op(const std::string& name) {
  const bench::ops::Operator* op = bench::ops::find_operator(name);
  if (!op)
    throw InputError("unknown operator '" + name + "' (valid: " + operator_names() + "; see gpuscope bench list)");
  return *op;
}

void print(std::vector<Report> reports, render::Format format, const TableFlags& table) {
  apply_timeunit(table, reports);
  render::render(reports, format, std::cout, render::DocumentOptions{"bench", false, table_options(table)});
  std::cout.flush();
}

// The sweep chart of `run` to `path`; a note on stderr for what it could not draw.
void write_svg(const BenchRun& run, const std::vector<analyze::SweepAnalysis>& sweeps, const std::string& path,
               store::Overwrite overwrite) {
  const SweepChartBuild b = sweep_chart_input(run, sweeps);
  if (b.left_out > 0)
    warn(std::to_string(b.left_out) + " series measured in another unit than the first are not in " + path +
         " (one chart per unit: run them separately)");
  try {
    store::write_file_atomically(path, overwrite,
                                 [&b](std::ostream& out) { render::write_bench_sweep_svg(b.input, out); });
  } catch (const std::invalid_argument& e) {  // nothing to draw: the file that was there is kept
    throw std::runtime_error("cannot draw " + path + ": " + e.what());
  }
  info("wrote " + path + " (open it in a web browser)");
}

// Each file is written atomically (cli/output_files.hpp); the overwrite rule was checked
// before the run, and is enforced again at the rename.
void write_outputs(const BenchRun& run, const std::vector<analyze::SweepAnalysis>& sweeps, const BenchOptions& o) {
  const store::Overwrite overwrite = store::overwrite_if(o.force_overwrite);
  if (!o.json.empty()) {
    store::write_bench_run(run, o.json, overwrite);
    info("wrote " + o.json);
  }
  if (!o.csv.empty()) {
    store::write_file_atomically(o.csv, overwrite, [&run](std::ostream& out) { store::write_bench_csv(run, out); });
    info("wrote " + o.csv);
  }
  if (!o.svg.empty()) write_svg(run, sweeps, o.svg, overwrite);
}

BenchRun read_run(const std::string& path) {
  try {
    return store::read_bench_run(path);
  } catch (const store::BenchResultError& e) {
    throw InputError(e.what());
  }
}

int run_list(const BenchOptions& o, render::Format format) {
  if (o.what.size() > 2) throw InputError("bench list takes at most one operator name");
  if (o.what.size() == 2)
    print({operator_report(find_op(o.what[1]))}, format, o.table);
  else
    print({list_report()}, format, o.table);
  return 0;
}

int run_report(const BenchOptions& o, render::Format format) {
  if (o.what.size() != 2)
    throw InputError(
        "usage: gpuscope bench report RESULTS.json [--profile P.json] [--svg FILE] [--csv FILE] [--format F]");
  check_outputs({o.csv, o.svg}, o.force_overwrite);
  BenchRun run = read_run(o.what[1]);
  if (!o.profile.empty()) {  // re-derive the rates against another (e.g. newer) profile
    std::vector<std::string> warnings;
    const MachineProfile profile = store::read_profile(o.profile, &warnings);
    for (const std::string& w : warnings) warn(w);
    run.profile_path = o.profile;
    core::derive_run(run, &profile);  // its warnings go to the cases report's notes
  }
  const std::vector<analyze::SweepAnalysis> sweeps = analyze::analyze_sweeps(run);
  print({analyze::bench_cases_report(run), analyze::bench_sweep_report(sweeps)}, format, o.table);
  BenchOptions outputs;
  outputs.csv = o.csv;
  outputs.svg = o.svg;
  outputs.force_overwrite = o.force_overwrite;
  write_outputs(run, sweeps, outputs);
  return 0;
}

int run_compare(const BenchOptions& o, render::Format format) {
  if (o.what.size() != 3) throw InputError("usage: gpuscope bench compare BASE.json NEW.json");
  const BenchRun base = read_run(o.what[1]);
  const BenchRun next = read_run(o.what[2]);
  analyze::CompareOptions co;
  co.k = o.k;
  co.floor = o.floor;
  analyze::CompareResult result;
  try {
    result = analyze::compare(base, next, co);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  print({analyze::bench_compare_report(result)}, format, o.table);
  return 0;
}

// The machine profile to measure against: --profile, else the cache entry of this GPU.
std::optional<store::CachedProfile> load_profile(const BenchOptions& o, const std::string& uuid) {
  std::vector<std::string> warnings;
  std::optional<store::CachedProfile> found;
  if (!o.profile.empty()) {
    found = store::CachedProfile{o.profile, store::read_profile(o.profile, &warnings)};
  } else {
    try {
      if (auto p = store::load_cached_profile(uuid, &warnings))
        found = store::CachedProfile{store::profile_cache_path(uuid), std::move(*p)};
    } catch (const store::ProfileError& e) {
      warnings.push_back(e.what());  // no cache folder, or a broken file: theoretical ceilings
    }
  }
  for (const std::string& w : warnings) warn(w);
  return found;
}

int run_operator(const BenchOptions& o, render::Format format) {
  if (o.what.size() != 1)
    throw InputError("bench OP takes one operator; extra arguments: " + o.what[1] + (o.what.size() > 2 ? " ..." : ""));
  const bench::ops::Operator& op = find_op(o.what[0]);

  // Everything checkable is checked before the GPU is touched.
  bench::RunOptions ro;
  ro.variant = o.variant;
  try {
    ro.dtype = o.dtype.empty() ? op.dtypes.front() : bench::ops::parse_dtype(o.dtype);
    ro.timing.mode = o.mode.empty() ? op.default_mode : bench::parse_mode(o.mode);
    ro.sizes = core::parse_sizes(o.sizes.empty() ? op.default_sizes : o.sizes);
    (void)bench::plan_cases(op, ro);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  ro.timing.batch = o.batch;
  ro.timing.back_to_back = true;  // steady state: no launch-latency gap inside a hot/graph sample
  ro.timing.budget_s = static_cast<double>(o.budget_ns) * 1e-9;
  ro.timing.max_rel_stderr = o.max_noise;
  ro.timing.min_samples = o.min_samples;
  ro.verify = !o.no_verify;
  ro.device = o.device;
  if (!o.profile.empty()) (void)store::read_profile(o.profile);  // a bad file fails now, not after the run
  check_outputs({o.json, o.csv, o.svg}, o.force_overwrite);      // so does an output that exists

  if (const std::string problem = bench::cuda_device_problem(o.device); !problem.empty()) {
    std::cerr << "gpuscope bench: error: " << problem << ". `gpuscope bench " << op.name
              << "` times kernels on a GPU; `gpuscope bench list`, `bench report` and `bench compare` need none.\n";
    return kExitFailure;
  }

  BenchRun run = bench::run_operator(op, ro, [&ro](const BenchCase& c, const std::string& skipped) {
    std::cerr << "gpuscope bench: " << c.op << " " << c.variant << " " << c.dtype << " " << c.params << " "
              << c.timing.mode << ": ";
    if (!skipped.empty())
      std::cerr << "skipped (" << skipped << ")\n";
    else
      std::cerr << units::duration(c.timing.median_s) << " median, " << c.timing.samples << " samples ("
                << c.timing.stop << ")"
                << (c.verified  ? ", output checked"
                    : ro.verify ? ", REFERENCE CHECK FAILED"
                                : "")
                << "\n";
  });

  const std::optional<store::CachedProfile> profile = load_profile(o, run.device.uuid);
  if (profile) {
    run.profile_path = profile->path.string();
    info("ceilings from the machine profile " + run.profile_path);
  }
  core::derive_run(run, profile ? &profile->profile : nullptr);

  const std::vector<analyze::SweepAnalysis> sweeps = analyze::analyze_sweeps(run);
  print({analyze::bench_cases_report(run), analyze::bench_sweep_report(sweeps)}, format, o.table);
  write_outputs(run, sweeps, o);

  bool failed = false;
  for (const BenchCase& c : run.cases) failed = failed || (ro.verify && !c.verified);
  if (failed) {
    std::cerr << "gpuscope bench: error: a reference check failed (see the notes above); the times of a wrong result "
                 "mean nothing\n";
    return kExitCheckFailed;
  }
  return 0;
}

int run(const BenchOptions& o) {
  if (o.what.empty())
    throw InputError("what to run is missing: gpuscope bench list | OP | report FILE | compare BASE NEW (see --help)");
  const render::Format format = render::parse_format(o.format);
  const std::string& verb = o.what.front();
  if (verb == "list") return run_list(o, format);
  if (verb == "report") return run_report(o, format);
  if (verb == "compare") return run_compare(o, format);
  if (verb == "serve") {
    if (o.what.size() != 1) throw InputError("bench serve takes no arguments, only options (see --help)");
    return run_bench_serve(o.serve, o.format, o.json, o.force_overwrite);
  }
  return run_operator(o, format);
}

}  // namespace

CLI::App* add_bench_command(CLI::App& app, BenchOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "bench",
      "Time kernels the right way (warm-up, L2 flush, CUDA graphs, noise-based stopping), sweep sizes, check\n"
      "every result against a reference, and show how close each operator gets to this GPU's measured\n"
      "ceilings (from `gpuscope peak`; theoretical ones, said so, without a profile).");
  sub->add_option("what", o.what, "list [OP] | OP | serve | report RESULTS.json | compare BASE.json NEW.json")
      ->required();
  sub->add_option("--variant", o.variant, "Run only this variant (default: all; see bench list OP)");
  sub->add_option("--sizes", o.sizes,
                  "Sizes: 2^10:2^30 (doubling), A:B:FACTOR, lists 1000,3000, shapes 64x4096x4096; k/M/G suffixes\n"
                  "(default: the operator's, see bench list)");
  sub->add_option("--dtype", o.dtype, "f32, tf32 (gemm), f16 or bf16 (default: the operator's first)");
  sub->add_option("--mode", o.mode,
                  "cold: one call per sample between CUDA events, L2 flushed before each (data from DRAM);\n"
                  "hot: BATCH back-to-back calls per sample (data may stay in L2; launch overhead included);\n"
                  "graph: BATCH calls captured in a CUDA graph and replayed (launch overhead gone: for\n"
                  "kernels of a few microseconds). Default: the operator's");
  count_option(sub->add_option("--batch", o.batch, "Calls per sample in hot/graph mode; 0 = enough for >= 100 us")
                   ->capture_default_str(),
               core::CountLimits{0, 1'000'000, "100"});
  duration_ns_option(sub->add_option("--budget", o.budget_ns, "Sampling time per case at most (default 1s)"),
                     core::DurationLimits{1'000'000, 3'600'000'000'000, 1'000'000'000, "1s or 250ms"});
  real_option(sub->add_option("--max-noise", o.max_noise,
                              "Stop sampling when the relative standard error of the median is below this; 0 = never "
                              "(the budget stops it)")
                  ->capture_default_str(),
              core::RealLimits{0.0, 1.0, true, true, "0.005"});
  count_option(
      sub->add_option("--min-samples", o.min_samples, "Never stop before this many samples")->capture_default_str(),
      core::CountLimits{1, 100'000, "10"});
  count_option(sub->add_option("--device", o.device, "CUDA device ordinal")->capture_default_str(),
               core::CountLimits{0, 65535, "0"});
  sub->add_flag("--no-verify", o.no_verify, "Skip the reference check of the outputs");
  sub->add_option("--profile", o.profile,
                  "Machine profile JSON of `gpuscope peak` (default: the cached one of this GPU; none: theoretical);\n"
                  "with report: re-derive the % of ceiling against it");
  sub->add_option("--json", o.json, "Write the results as JSON (the format `bench compare` and `bench report` read)");
  sub->add_option("--csv", o.csv, "Write the cases as CSV");
  sub->add_option("--svg", o.svg, "Draw the size sweep (throughput against size, ceiling as a line) as SVG");
  add_force_overwrite_flag(*sub, o.force_overwrite);
  sub->add_option("--format", o.format,
                  "Printed reports: table, csv, json or markdown (one document: docs/output-formats.md)")
      ->capture_default_str();
  add_table_flags(*sub, o.table);
  real_option(sub->add_option("--floor", o.floor, "compare: smallest relative difference ever called faster/slower")
                  ->capture_default_str(),
              core::RealLimits{0.0, 100.0, true, true, "0.01"});
  real_option(sub->add_option("--k", o.k, "compare: standard errors of the difference needed for faster/slower")
                  ->capture_default_str(),
              core::RealLimits{0.0, 1000.0, true, true, "3"});
  add_serve_options(*sub, o.serve);
  sub->footer(
      "Examples:\n"
      "  gpuscope bench list                       the operators, their variants and default sizes\n"
      "  gpuscope bench list vector_add            what the variants teach, how the output is checked\n"
      "  gpuscope bench copy --sizes 2^20:2^30 --svg copy.svg --json copy.json\n"
      "  gpuscope bench gemm --dtype bf16 --sizes 2^10:2^13\n"
      "  gpuscope bench linear_small --mode graph --sizes 1:256:4\n"
      "  gpuscope bench compare before.json after.json\n"
      "  gpuscope bench report copy.json --svg copy.svg   (no GPU needed)\n"
      "  gpuscope bench serve --url http://127.0.0.1:8000 --concurrency 8 --num-requests 200 --json serve.json\n"
      "Each sweep prints where the operator reaches 90 % of its final throughput and what % of the ceiling\n"
      "that is. Result file format: docs/bench.md.");
  return sub;
}

int run_bench(const BenchOptions& o) {
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "gpuscope bench: error: " << e.what() << "\n";
    // Bad input: our own checks, a bad profile file, CLI-level values (--format).
    const bool input = dynamic_cast<const InputError*>(&e) || dynamic_cast<const store::ProfileError*>(&e) ||
                       dynamic_cast<const std::invalid_argument*>(&e) ||
                       dynamic_cast<const store::OutputExistsError*>(&e);
    return input ? kExitInput : kExitFailure;
  }
}

}  // namespace gpuscope::cli
