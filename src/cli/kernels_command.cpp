#include "cli/kernels_command.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <regex>
#include <span>

#include "analyze/kernels/kernel_reports.hpp"
#include "cli/collect_run.hpp"
#include "cli/option_checks.hpp"
#include "cli/output_files.hpp"
#include "cli/output_name.hpp"
#include "collect/metric_catalog.hpp"
#include "core/kernel_derive.hpp"
#include "core/kernel_metric_sets.hpp"
#include "render/report_render.hpp"
#include "store/atomic_file.hpp"
#include "store/database.hpp"
#include "store/trace.hpp"

namespace gpuscope::cli {
namespace {

int fail(const std::string& what, const std::string& todo) { return cli_fail("kernels", what, todo); }

// While alive (and `on`), file descriptor 1 is gpuscope's stderr, so a child started then
// (the profiled program) writes its stdout to stderr; the destructor puts stdout back.
class StdoutToStderr {
 public:
  explicit StdoutToStderr(bool on) {
    if (!on) return;
    std::cout.flush();
    saved_ = ::dup(STDOUT_FILENO);
    if (saved_ >= 0 && ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
      ::close(saved_);
      saved_ = -1;
    }
  }
  ~StdoutToStderr() {
    if (saved_ < 0) return;
    std::cout.flush();
    ::dup2(saved_, STDOUT_FILENO);
    ::close(saved_);
  }
  StdoutToStderr(const StdoutToStderr&) = delete;
  StdoutToStderr& operator=(const StdoutToStderr&) = delete;

 private:
  int saved_ = -1;
};

// --tensor-factor COUNTER=FLOP: FLOPs per count of a tensor counter (512 for an H100 bf16
// HGMMA op), positive, at most 10^6.
const core::RealLimits kTensorFactor{0.0, 1e6, false, true, "512"};

std::string joined(const std::vector<std::string>& v, const char* sep = ",") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// --chip, else the chip of GPU 0 (needs a driver), else nullopt with the reason. The
// driver and CUPTI are initialised in a short-lived child process, so gpuscope itself holds
// no CUDA or profiler state while the target runs.
std::optional<std::string> resolve_chip(const std::string& chip, std::string* why) {
  if (!chip.empty()) return chip;
  int fds[2];
  if (::pipe(fds) != 0) return collect::detect_chip(0, why);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return collect::detect_chip(0, why);
  }
  if (pid == 0) {
    ::close(fds[0]);
    std::string reason;
    const auto found = collect::detect_chip(0, &reason);
    const std::string msg = found ? "1" + *found : "0" + reason;
    (void)!::write(fds[1], msg.data(), msg.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!msg.empty() && msg[0] == '1') return msg.substr(1);
  if (why != nullptr) *why = msg.empty() ? "the chip probe ended without an answer" : msg.substr(1);
  return std::nullopt;
}

// In markdown, exactly the tables of docs/metrics.md (regenerate them with
// `gpuscope kernels --list-sets --format markdown`).
// One document in every format (render/report_render.hpp).
int list_sets(const std::string& format) {
  const render::Format f = render::parse_format(format);
  std::vector<Report> reports;
  for (const kernels::MetricSet& s : kernels::metric_sets()) reports.push_back(kernels::metric_set_report(s));
  render::render(reports, f, std::cout, render::DocumentOptions{"kernels", false});
  if (f == render::Format::kTable || f == render::Format::kMarkdown) std::cout << "\n";
  return 0;
}

// --list-metrics as a report, for the csv, json and markdown formats.
Report metric_list_report(const std::string& chip, const std::string& filter,
                          const std::vector<collect::MetricDescription>& list) {
  Report r;
  r.name = "metric_list";
  r.title = "Metrics of " + chip + (filter.empty() ? "" : " matching '" + filter + "'");
  r.add_column("Name", "", ColumnType::kText)
      .add_column("Type", "", ColumnType::kText)
      .add_column("Unit", "", ColumnType::kText)
      .add_column("Description", "", ColumnType::kText);
  for (const auto& d : list) r.rows.push_back(Row{d.name, d.type, d.dim_unit, d.description});
  return r;
}

int list_metrics(const KernelsOptions& o) {
  std::string why;
  const auto chip = resolve_chip(o.chip, &why);
  if (!chip) {
    return fail(
        "no GPU to read the metric list from (" + why + ")",
        "name the chip: --chip GH100 (supported: " + joined(collect::MetricCatalog::supported_chips(), ", ") + ")");
  }
  const collect::MetricCatalog catalog(*chip);
  const auto list = catalog.describe(o.list_filter);
  if (const render::Format f = render::parse_format(o.out.format); f != render::Format::kTable) {
    const Report r = metric_list_report(*chip, o.list_filter, list);
    render::render(std::span<const Report>(&r, 1), f, std::cout, render::DocumentOptions{"kernels", false});
    if (list.empty()) std::cerr << "gpuscope kernels: no metric name contains '" << o.list_filter << "'\n";
    return 0;
  }
  // table: one tab-separated line per metric, for grep and cut.
  std::cout << "# metrics of " << *chip << (o.list_filter.empty() ? "" : " matching '" + o.list_filter + "'") << ": "
            << list.size() << "\n";
  for (const auto& d : list) {
    std::cout << d.name << "\t" << d.type << "\t" << d.dim_unit << "\t" << d.description << "\n";
  }
  if (list.empty()) std::cerr << "gpuscope kernels: no metric name contains '" << o.list_filter << "'\n";
  return 0;
}

}  // namespace

CLI::App* add_kernels_command(CLI::App& app, KernelsOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "kernels",
      "Hardware counters for every kernel launch of a command, placed on this GPU's measured roofline.\n"
      "Like `ncu --metrics`: CUPTI's Range Profiler replays each profiled kernel once per counter pass\n"
      "(device memory is saved and restored), so the program runs slower but computes the same results.\n"
      "Then every kernel gets achieved GB/s and FLOP/s, arithmetic intensity, % of the measured ceiling\n"
      "(from `gpuscope peak`) and a plain-language verdict: DRAM-bound, compute-bound, latency-bound, ...\n"
      "Examples:\n"
      "  gpuscope kernels -o run -- ./my_program                 (quick set, every kernel)\n"
      "  gpuscope kernels --set roofline -k gemm --launch-count 5 -- python3 train.py\n"
      "  gpuscope kernels --metrics dram__bytes_read.sum,gpu__time_duration.sum -- ./app\n"
      "  gpuscope kernels --set warps -o run --format csv -- ./app   (results in run.csv, stall reasons)\n"
      "  gpuscope kernels --list-sets ;  gpuscope kernels --list-metrics dram__ --chip GH100");
  sub->add_option("-o,--output", o.output,
                  "Writes NAME.sqlite (default gpuscope-<date>-<time>); %h (host), %p (pid), %q{VAR}\n"
                  "(environment variable) and %% are replaced, as in gpuscope trace -o. With --format csv,\n"
                  "json or markdown the results go to NAME.csv, NAME.json or NAME.md (stdout then carries\n"
                  "only the program's own output); with --report, -o NAME names that results file only");
  add_force_overwrite_flag(*sub, o.force_overwrite)
      ->description(
          "Replace NAME.sqlite and the --svg file if they exist. Without it gpuscope keeps an existing\n"
          "file and stops before running anything; with it the old file is replaced only once the new\n"
          "one is complete. Two runs with the same -o at once: the second refuses (NAME.sqlite.lock;\n"
          "a lock left by a killed gpuscope is taken over)");
  sub->add_option("--set", o.set,
                  "Metric set: quick, roofline, sol, memory, occupancy, compute, warps, detailed (see --list-sets)")
      ->capture_default_str();
  sub->add_option("--metrics", o.metrics, "Nsight Compute metric names instead of a set (comma separated)")
      ->delimiter(',');
  sub->add_option("-k,--kernel-name", o.kernel_regex,
                  "Profile only kernels whose demangled or base name matches this regex (as ncu's regex:)");
  sub->add_option("--nvtx-include", o.nvtx_include,
                  "Profile only launches made inside the NVTX range NAME (or NAME@DOMAIN): a push/pop range "
                  "open on the launching thread or a start/end range open anywhere");
  count_option(
      sub->add_option("--launch-skip", o.launch_skip, "Skip this many matching launches first")->capture_default_str(),
      core::CountLimits{0, core::kMaxInt64, "10"});
  count_option(sub->add_option("--launch-count", o.launch_count, "Profile at most this many matching launches; 0 = all")
                   ->capture_default_str(),
               core::CountLimits{0, core::kMaxInt64, "5"});
  sub->add_option("--replay-mode", o.replay_mode,
                  "kernel: as ncu, CUPTI saves device memory, runs each profiled kernel once per counter pass "
                  "and restores memory between passes (exact counts; about 25 ms per launch on H100). "
                  "none: one pass, no replay; each kernel runs once with the counters armed, in sessions "
                  "of many launches (about 3x faster; adds about 8 instructions per warp and 0.3-0.7 us "
                  "per kernel to what is counted, see docs/metrics.md)")
      ->check(CLI::IsMember({"kernel", "none"}))
      ->capture_default_str();
  sub->add_option("--cache-control", o.cache_control,
                  "none (default): CUPTI's kernel replay, no flush: the first pass sees the program's own cache\n"
                  "state, later passes CUPTI's restore of device memory still dirty in L2 (DRAM writes and L2\n"
                  "hit rates of small kernels in multi-pass sets read high: docs/validation.md). all (ncu's\n"
                  "default): gpuscope replays each launch itself: device memory saved before the first pass\n"
                  "(CUPTI checkpoint), restored before each later one, L2 flushed before every pass, so DRAM\n"
                  "and L2 counters of every pass describe the same run; CUPTI's user replay then adds about 8\n"
                  "instructions per warp and cannot collect smsp__sass_* metrics. --replay-mode none never\n"
                  "flushes (its launches share one session)")
      ->check(CLI::IsMember({"all", "none"}))
      ->capture_default_str();
  sub->add_option("--launches-per-session", o.launches_per_session,
                  "With --replay-mode none: profiled launches per range-profiler session before it is decoded "
                  "(1-4096; an unprofiled launch, a memset, memcpy or graph launch ends a session early; a "
                  "killed program loses the open session's launches)")
      ->capture_default_str();
  count_option(sub->get_option("--launches-per-session"), core::CountLimits{1, 4096, "64"});
  sub->add_option(
         "--report", o.report,
         "Print the results of an earlier run's NAME.sqlite again (with other --format/--by/--profile); runs nothing")
      ->check(CLI::ExistingFile);
  sub->add_flag("--list-sets", o.list_sets, "List the metric sets and what each metric means");
  sub->add_option_function<std::vector<std::string>>(
         "--list-metrics",
         [&o](const std::vector<std::string>& v) {
           o.list_metrics = true;
           if (!v.empty()) o.list_filter = v.front();
         },
         "List the metrics this GPU supports: all, or those whose base name contains FILTER")
      ->expected(0, 1)
      ->type_name("[FILTER]");
  sub->add_option("--chip", o.chip, "Chip for --list-metrics and name checks without a GPU (e.g. GH100)");
  sub->add_option("--format", o.out.format,
                  "table, csv, json or markdown (one document: docs/output-formats.md; with --list-metrics, table is "
                  "one tab-separated line per metric). csv, json and markdown go to NAME.csv/.json/.md with -o; "
                  "without -o they go to stdout and the profiled program's own stdout is sent to stderr, so "
                  "stdout holds the one document only. table: the program's output, then the table, on stdout")
      ->check(CLI::IsMember({"table", "csv", "json", "markdown"}))
      ->capture_default_str();
  add_table_flags(*sub, o.out.table);
  sub->add_option("--by", o.out.by, "Rows per 'launch' or per kernel 'name' (default: per launch up to 50)");
  sub->add_option("--svg", o.out.svg_path, "Draw the kernels on the measured roofline into this SVG file");
  sub->add_option("--profile", o.out.profile_path,
                  "Machine profile of `gpuscope peak --json` (default: the cached one of this GPU)");
  sub->add_flag("--no-profile", o.out.no_profile, "Use theoretical ceilings even when a profile exists");
  sub->add_option("--tensor-factor", o.tensor_factors,
                  "COUNTER=FLOP: FLOPs per count of a tensor counter (calibrated on a GEMM; repeatable)");
  sub->add_flag(
      "--no-explain", [&o](std::int64_t) { o.out.explain = false; }, "No paragraphs under the table");
  sub->add_flag("!--no-kernel-trace", o.trace_kernels,
                "Do not also record kernel activity (the launch facts then come from the launch call only)");
  sub->add_flag("--keep-logs", o.keep_logs, "Keep the per-process event logs (NAME.logs/)");
  sub->add_option("command", o.command, "The command to run, after --");
  sub->positionals_at_end();
  return sub;
}

int run_kernels(KernelsOptions o) {
  if (!o.out.by.empty() && o.out.by != "launch" && o.out.by != "name") {  // checked before anything runs
    (void)fail("--by '" + o.out.by + "' is not a row kind", "use --by launch or --by name");
    return kExitBadOption;
  }
  if (o.list_sets) return list_sets(o.out.format);
  if (o.list_metrics) return list_metrics(o);
  if (o.command.empty() && o.report.empty())
    return fail("no command to profile", "put it after --: gpuscope kernels -- ./my_program");
  o.out.calibration = kernels::default_tensor_calibration();
  for (const std::string& f : o.tensor_factors) {
    const auto eq = f.find('=');
    try {
      if (eq == std::string::npos) throw std::invalid_argument("no '='");
      const auto flop = core::parse_real(f.substr(eq + 1), kTensorFactor);
      if (!flop.ok()) throw std::invalid_argument(flop.error);
      o.out.calibration[f.substr(0, eq)] = *flop.value;
    } catch (const std::exception& e) {
      (void)fail("--tensor-factor '" + f + "' is not COUNTER=NUMBER (" + e.what() + ")",
                 "e.g. --tensor-factor sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum=512");
      return kExitBadOption;
    }
  }

  o.out.force_overwrite = o.force_overwrite;
  // -o NAME with csv/json/markdown: the results file NAME.csv/.json/.md (cli/kernels_output.hpp).
  if (!o.output.empty()) {
    std::string name;
    try {
      name = expand_output_name(o.output);  // as collect_run expands it: the same NAME
    } catch (const std::invalid_argument& e) {
      return fail(std::string(e.what()) + "; nothing was run", "");
    }
    if (name.size() > 7 && name.ends_with(".sqlite")) name.resize(name.size() - 7);
    o.out.results_path = kernel_results_path(name, o.out.format);
  }
  try {
    check_outputs({o.out.svg_path, o.out.results_path}, o.force_overwrite);  // before anything runs or is read
  } catch (const store::FileWriteError& e) {
    return fail(std::string(e.what()) + "; nothing was run", "");
  }
  if (!o.report.empty()) {
    store::Database db = store::open_trace(o.report);
    return print_kernel_results(db, o.out, std::cout, std::cerr);
  }

  if (o.replay_mode == "none" && o.cache_control == "all") {
    return fail(
        "--cache-control all needs a replay: --replay-mode none runs each kernel once, in sessions of many "
        "launches, with no flush between them; nothing was run",
        "use --replay-mode kernel (the default) or --cache-control none");
  }

  // The metric list: --metrics, else the set's.
  std::string set_name = o.set;
  std::vector<std::string> metrics;
  if (!o.metrics.empty()) {
    set_name = "custom";
    for (const std::string& m : o.metrics)
      if (!m.empty() && std::find(metrics.begin(), metrics.end(), m) == metrics.end()) metrics.push_back(m);
  } else {
    const kernels::MetricSet* set = kernels::find_metric_set(o.set);
    if (set == nullptr) {
      std::string names;
      for (const auto& s : kernels::metric_sets()) names += (names.empty() ? "" : ", ") + std::string(s.name);
      return fail("unknown --set '" + o.set + "'", "use one of: " + names);
    }
    metrics = kernels::set_metric_names(*set);
  }
  if (!o.kernel_regex.empty()) {
    try {
      std::regex check(o.kernel_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return fail("-k '" + o.kernel_regex + "' is not a valid regex: " + e.what(), "");
    }
  }

  if (o.cache_control == "all") {
    for (const std::string& m : metrics) {
      if (m.starts_with("smsp__sass_")) {
        return fail("--cache-control all cannot collect " + m +
                        ": SASS-patched metrics read 0 in gpuscope's own replay (CUPTI user replay); nothing was run",
                    "use --cache-control none (CUPTI's kernel replay) for this set, or leave the smsp__sass_ "
                    "metrics out with --metrics");
      }
    }
  }

  // Check every name on the host before running anything (needs the chip: a GPU or --chip).
  std::string why;
  if (const auto chip = resolve_chip(o.chip, &why)) {
    try {
      const collect::MetricCatalog catalog(*chip);
      for (const std::string& m : metrics) {
        if (!catalog.is_valid(m)) {
          return fail("unknown metric '" + m + "' on " + *chip + "; nothing was run",
                      "closest valid names: " + joined(catalog.closest(m), ", ") +
                          " (gpuscope kernels --list-metrics FILTER lists them)");
        }
      }
      const std::size_t passes = catalog.passes(metrics);
      if (o.replay_mode == "none" && passes > 1) {
        return fail("the " + std::to_string(metrics.size()) + " metrics (" + set_name + ") need " +
                        std::to_string(passes) + " passes on " + *chip +
                        " and --replay-mode none collects one; nothing was run",
                    "use --replay-mode kernel (the default), or fewer metrics");
      }
      std::cerr << "gpuscope kernels: " << metrics.size() << " metrics (" << set_name << ") on " << *chip << ": "
                << passes
                << (o.replay_mode == "none" ? " pass, no replay\n"
                    : o.cache_control == "all"
                        ? " pass(es) per profiled kernel, each from the same saved memory after an L2 flush "
                          "(--cache-control all)\n"
                        : " replay pass(es) per profiled kernel (CUPTI kernel replay, no cache flush)\n");
    } catch (const collect::MetricCatalogError& e) {
      std::cerr << "gpuscope kernels: warning: metric names not checked: " << e.what() << "\n";
    }
  }
  if (o.cache_control == "all") {
    std::cerr << "gpuscope kernels: cache control all: every pass starts from the saved memory and an empty L2; "
                 "CUPTI's user replay adds about 8 instructions per warp and one global store per kernel to what "
                 "is counted\n";
  }
  if (o.replay_mode == "none") {
    std::cerr << "gpuscope kernels: replay mode none: instruction counts include about 8 instructions per warp, and "
                 "durations about 0.3-0.7 us per kernel, added by CUPTI's per-kernel range triggers; the default "
                 "kernel replay counts exactly\n";
  }

  CollectRunSpec spec;
  spec.tool = "kernels";
  spec.output = o.output;
  spec.force_overwrite = o.force_overwrite;
  spec.keep_logs = o.keep_logs;
  spec.command = o.command;
  spec.nvtx = !o.nvtx_include.empty();  // the NVTX injection tracks the open ranges
  spec.env = {
      // cuda: kernel activity and the devices table; nvtx: needed by --nvtx-include only.
      {"GPUSCOPE_TRACE", o.trace_kernels ? (o.nvtx_include.empty() ? "cuda" : "cuda,nvtx") : "nvtx"},
      {"GPUSCOPE_KERNEL_METRICS", joined(metrics)},
      {"GPUSCOPE_KERNEL_SET", set_name},
      {"GPUSCOPE_KERNEL_REGEX", o.kernel_regex},
      {"GPUSCOPE_LAUNCH_SKIP", std::to_string(o.launch_skip)},
      {"GPUSCOPE_LAUNCH_COUNT", std::to_string(o.launch_count)},
      {"GPUSCOPE_NVTX_INCLUDE", o.nvtx_include},
      {"GPUSCOPE_KERNEL_REPLAY", o.replay_mode},
      {"GPUSCOPE_CACHE_CONTROL", o.cache_control},
      {"GPUSCOPE_KERNEL_BATCH", std::to_string(o.launches_per_session)},
  };
  spec.import.trace_sources = "kernels:" + set_name;
  spec.import.capture_range = "none";
  spec.import.extra_meta = {{"kernel_metrics", joined(metrics)},
                            {"kernel_set", set_name},
                            {"kernel_filter", o.kernel_regex},
                            {"nvtx_include", o.nvtx_include},
                            {"launch_skip", std::to_string(o.launch_skip)},
                            {"launch_count", std::to_string(o.launch_count)},
                            {"replay_mode", o.replay_mode},
                            {"cache_control", o.cache_control},
                            {"launches_per_session", std::to_string(o.launches_per_session)}};

  // A document on stdout (csv, json, markdown without -o) must hold nothing else: the
  // program's own stdout goes to gpuscope's stderr while it runs.
  const bool document_on_stdout = o.out.results_path.empty() && o.out.format != "table";
  if (document_on_stdout)
    std::cerr << "gpuscope kernels: the program's standard output goes to standard error, so that standard output "
                 "holds only the "
              << o.out.format << " results (-o NAME writes them to a file instead)\n";
  const CollectRunResult res = [&] {
    const StdoutToStderr redirect(document_on_stdout);
    return collect_run(spec);
  }();
  if (!res.have_db) return res.exit_code;

  int code = res.exit_code;
  try {
    store::Database db(res.db_path.string(), store::Database::Mode::kReadOnly);
    // The collector's own words (privileges, filters that matched nothing, graphs).
    const analyze::KernelRunOutcome outcome = analyze::kernel_run_outcome(db);
    int errors = 0;
    for (const auto& [severity, text] : outcome.problems) {
      errors += severity == "error";
      std::cerr << "gpuscope kernels: " << severity << ": " << text << "\n";
    }
    const std::int64_t profiled = outcome.profiled;
    // The profiler failed in the target (counters not permitted, held by another tool, a
    // metric it refused): the target ran, but the job did not.
    if (profiled == 0 && errors > 0 && code == 0) code = 1;
    if (profiled > 0) {
      const int out_code = print_kernel_results(db, o.out, std::cout, std::cerr);
      if (code == 0) code = out_code;
    }
  } catch (const std::exception& e) {
    std::cerr << "gpuscope kernels: error: " << e.what() << "\n";
    if (code == 0) code = 1;
  }
  std::cerr << "gpuscope kernels: wrote " << res.db_path.string() << "  (the target " << res.run.describe() << ")\n";
  return code;
}

}  // namespace gpuscope::cli
