#include "cli/stats_command.hpp"

#include <algorithm>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "analyze/report_registry.hpp"
#include "analyze/timeline/judged_window.hpp"
#include "cli/option_checks.hpp"
#include "cli/output_files.hpp"
#include "cli/stats_many.hpp"
#include "cli/stats_steps.hpp"
#include "core/report_transform.hpp"
#include "store/trace.hpp"

namespace gpuscope::cli {
namespace {

std::string help_footer() {
  std::string s = "Reports (-r NAME,NAME; * = run when no -r is given):\n";
  for (const analyze::ReportEntry& e : analyze::report_registry()) {
    std::string name = "  " + std::string(e.name) + (e.in_default ? " *" : "");
    name.resize(std::max<std::size_t>(name.size() + 1, 26), ' ');
    s += name + std::string(e.description.empty() ? std::string_view("(no description)") : e.description) + "\n";
  }
  s += "\n"
       "Filters combine with AND; every report runs on the events they keep:\n"
       "  --filter-nvtx step       CPU events on the thread inside any 'step' range, and the GPU work they\n"
       "                           launched (wherever it ran); 'step@mydomain' one domain, 'step/3' the 3rd\n"
       "  --from 2s --to 2.5s      events overlapping the window (times since the trace start; not clipped)\n"
       "  --process PID, --device N (N: the GPU index gpuscope summary prints)\n"
       "Then, per report: --timeunit converts time columns, --sort orders the rows, --top keeps the first N.\n"
       "\n"
       "Examples:\n"
       "  gpuscope stats run.sqlite\n"
       "  gpuscope stats run.sqlite -r cuda_gpu_kern_sum --top 5 --timeunit us\n"
       "  gpuscope stats run.sqlite -r cuda_gpu_kern_sum,nvtx_sum --filter-nvtx 'train_step/3'\n"
       "  gpuscope stats run.sqlite -r gpu_util,launch_overhead --from 2s --to 2.5s\n"
       "  gpuscope stats run.sqlite -r cuda_api_sum --sort 'Num Calls'\n"
       "  gpuscope stats run.sqlite -r cuda_gpu_trace --format csv -o gpu_trace.csv\n"
       "\n"
       "Many GPUs, one trace per rank or per host (nccl_sum, comm_overlap, rank_sum, stragglers,\n"
       "collective_trace; all five when no -r is given): give every trace, or the summaries that\n"
       "`gpuscope comm-summary` made of them. Each input is mapped to a small summary (in parallel,\n"
       "-j), then the summaries are joined, so memory is bounded by one rank, not by the job;\n"
       "hosts' clocks are aligned by their NCCL collectives, as gpuscope merge does:\n"
       "  gpuscope stats run.node*.sqlite -r stragglers,rank_sum -j 8\n"
       "  gpuscope comm-summary run.node1.sqlite -o node1.summary.json   (on each host)\n"
       "  gpuscope stats node*.summary.json -r stragglers\n"
       "Every report and column: docs/stats.md; many GPUs: docs/multi-gpu.md.";
  return s;
}

// "--filter-nvtx 'step', --from 2s" for the note on every filtered report.
std::string filter_text(const StatsOptions& o) {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (!o.filter_nvtx.empty()) add("--filter-nvtx '" + o.filter_nvtx + "'");
  if (!o.from.empty()) add("--from " + o.from);
  if (!o.to.empty()) add("--to " + o.to);
  if (o.process) add("--process " + std::to_string(*o.process));
  if (o.device) add("--device " + std::to_string(*o.device));
  return s;
}

}  // namespace

CLI::App* add_stats_command(CLI::App& app, StatsOptions& o) {
  CLI::App* sub =
      app.add_subcommand("stats",
                         "Summary reports of a trace: where the GPU and CPU time goes (nsys stats' reports,\n"
                         "same names and columns) and the diagnoses nsys leaves to the reader (is the GPU really\n"
                         "busy, is the run launch-bound, where does the CPU wait).");
  sub->add_option("traces", o.inputs,
                  "NAME.sqlite; several traces or comm summaries (X.summary.json) for the many-GPU reports")
      ->required()
      ->check(CLI::ExistingFile);
  count_option(
      sub->add_option("-j,--jobs", o.jobs, "Several inputs: how many are mapped at once (default: every core)"),
      core::CountLimits{1, 1024, "2"});
  sub->add_option("-r,--report", o.reports, "Reports, comma-separated (list below)")->delimiter(',');
  sub->add_option("--format", o.format, "table, csv, json or markdown (one document: docs/output-formats.md)")
      ->capture_default_str();
  sub->add_option("-o,--output", o.output, "Write to FILE instead of stdout");
  add_force_overwrite_flag(*sub, o.force_overwrite);
  sub->add_flag("--base", o.base, "Kernel base names (no namespace, templates or parameters)");
  sub->add_flag("--mangled", o.mangled, "Kernel mangled names");
  sub->add_flag("--whole-run", o.whole_run,
                "top, gpu_util, launch_overhead, sync_wait, memcpy_check, op_sum, module_sum, cuda_api_sum and\n"
                "nvtx_sum judge the steady state (PyTorch steps, NVTX step ranges or iterations found in the GPU\n"
                "work; else from the first GPU work on: docs/steady-state.md) unless this is given: then the\n"
                "whole process");
  sub->add_option("--filter-nvtx", o.filter_nvtx,
                  "Only events inside NVTX range RANGE[@DOMAIN][/N] (nsys's syntax: N-th instance, from 1)");
  duration_text_option(
      sub->add_option("--from", o.from,
                      "Only events that end at or after T: seconds since the trace start, or 250ms, 10us, 42ns"),
      kStatsTraceTime);
  duration_text_option(sub->add_option("--to", o.to, "Only events that start at or before T (same form as --from)"),
                       kStatsTraceTime);
  count_option(sub->add_option("--process", o.process, "Only process PID"), core::CountLimits{1, kMaxInt, "4012"},
               "PID");
  count_option(sub->add_option("--device", o.device, "Only GPU N (the index gpuscope summary and gpu_util print)"),
               core::CountLimits{0, 65535, "0"});
  count_option(sub->add_option("--top", o.top, "Only the first N rows of each report; 0 = all rows (the default)"),
               core::CountLimits{0, core::kMaxInt64, "10"});
  sub->add_option("--sort", o.sort,
                  "Order rows by COLUMN (its name, e.g. 'Total Time'): numbers descending, names ascending");
  add_table_flags(*sub, o.table);
  sub->footer(help_footer());
  return sub;
}

namespace {

// -r's names, each once (the default reports without -r); throws for an unknown one.
std::vector<std::string> checked_report_names(const StatsOptions& o) {
  std::vector<std::string> names = unique_report_names(o.reports);
  if (names.empty())
    for (std::string_view n : analyze::report_names()) names.emplace_back(n);
  const auto valid = analyze::all_report_names();
  for (const std::string& n : names) {
    if (std::find(valid.begin(), valid.end(), n) != valid.end()) continue;
    std::string list;
    for (std::string_view v : valid) list += (list.empty() ? "" : ", ") + std::string(v);
    throw std::invalid_argument("unknown report '" + n + "' (valid: " + list +
                                "; gpuscope stats --help says what each answers)");
  }
  return names;
}

analyze::ReportOptions report_options(const StatsOptions& o) {
  analyze::ReportOptions ro;
  ro.base = o.base;
  ro.mangled = o.mangled;
  // Per-event reports then read only the rows --top keeps (after --sort, all are needed).
  if (o.top && *o.top > 0 && o.sort.empty()) ro.first_rows = *o.top;
  return ro;
}

// The reports that ran, and those whose tables were damaged (report, error).
struct ReportRun {
  std::vector<Report> reports;
  std::vector<std::pair<std::string, std::string>> damaged;
};

// A damaged trace (store::TraceDamagedError) may still hold intact tables: each report that
// can run on them runs; the others are kept in `damaged`. The judged reports run on the judged
// window's trace (`judged`; nullopt: db itself) and carry its note; when the window could not be
// found (`window_damage`: the tables it reads are damaged) they are damaged too.
ReportRun run_reports(store::Database& db, const std::vector<std::string>& names, const analyze::ReportOptions& ro,
                      std::optional<analyze::FilteredTrace>& judged, const std::string& note,
                      const std::string& window_damage) {
  ReportRun run;
  for (const std::string& n : names) {
    try {
      const bool scoped = analyze::is_judged_report(n);
      if (scoped && !window_damage.empty()) {
        run.damaged.emplace_back(n, window_damage);
        continue;
      }
      for (Report& r : analyze::run_report(scoped && judged ? judged->db : db, n, ro)) {  // "top" gives two
        if (scoped && !note.empty()) r.add_note(NoteLevel::kInfo, note);
        run.reports.push_back(std::move(r));
      }
    } catch (const store::TraceDamagedError& e) {
      run.damaged.emplace_back(n, e.what());
    }
  }
  return run;
}

// Names the reports that could not run on stderr, each distinct damage once.
void report_damage(const std::vector<std::pair<std::string, std::string>>& damaged, std::size_t asked) {
  std::string which;
  std::vector<std::string> whys;  // each distinct damage once
  for (const auto& [name, why] : damaged) {
    which += (which.empty() ? "" : ", ") + name;
    if (std::find(whys.begin(), whys.end(), why) == whys.end()) whys.push_back(why);
  }
  std::cerr << "gpuscope stats: " << damaged.size() << " of " << asked << " reports could not run (" << which
            << "): their tables are damaged; the reports printed read intact tables.\n";
  for (const std::string& why : whys) std::cerr << "gpuscope stats: " << why << "\n";
}

}  // namespace

int run_stats(const StatsOptions& options) {
  // Several inputs, or one comm summary: the many-GPU reports by map and reduce.
  if (is_stats_many(options)) return run_stats_many(options);
  StatsOptions o = options;
  if (o.trace.empty() && !o.inputs.empty()) o.trace = o.inputs.front();

  // Validate everything before opening files, so a typo costs nothing.
  const render::Format format = render::parse_format(o.format);
  const std::vector<std::string> names = checked_report_names(o);
  (void)table_options(o.table);
  const analyze::TraceFilter filter = stats_filter(o);
  check_outputs({o.output}, o.force_overwrite);

  // The trace, filtered when a filter is given.
  store::Database trace = store::open_trace(o.trace);
  std::optional<analyze::FilteredTrace> filtered;
  if (!filter.empty()) {
    filtered.emplace(analyze::filter_trace(trace, filter));
    for (const std::string& w : filtered->warnings) std::cerr << "gpuscope stats: warning: " << w << "\n";
  }
  store::Database& db = filtered ? filtered->db : trace;

  // The judged window (docs/steady-state.md): with no filter given, the headline reports judge
  // the steady state, not imports, set-up and warm-up.
  const bool scope =
      filter.empty() && !o.whole_run &&
      std::any_of(names.begin(), names.end(), [](const std::string& n) { return analyze::is_judged_report(n); });
  analyze::JudgedWindow window;
  std::string window_damage;
  std::optional<analyze::FilteredTrace> judged = [&]() -> std::optional<analyze::FilteredTrace> {
    try {
      if (scope) window = analyze::judged_window(db);
      return analyze::judged_trace(db, window);
    } catch (const store::TraceDamagedError& e) {
      window_damage = e.what();
      return std::nullopt;
    }
  }();

  // Only when no report can run does the damage error itself come out (as before); else the
  // reports that ran print, the others are named on stderr and the exit code is 1.
  ReportRun run = run_reports(db, names, report_options(o), judged, window.note, window_damage);
  if (run.reports.empty() && !run.damaged.empty()) throw store::TraceDamagedError(run.damaged.front().second);
  finish_stats_reports(o, run.reports, format, filtered ? "events filtered by " + filter_text(o) : std::string());
  if (!run.damaged.empty()) {
    report_damage(run.damaged, names.size());
    return 1;
  }
  return 0;
}

}  // namespace gpuscope::cli
