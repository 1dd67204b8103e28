#include "cli/summary_command.hpp"

#include <algorithm>
#include <iostream>
#include <limits>
#include <stdexcept>

#include "analyze/nsys/trace_summary.hpp"
#include "cli/option_checks.hpp"
#include "render/report_render.hpp"
#include "store/trace.hpp"

namespace gpuscope::cli {
namespace {

std::string report_list() {
  std::string s;
  for (const char* n : kSummaryReports) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

}  // namespace

CLI::App* add_summary_command(CLI::App& app, SummaryOptions& o) {
  CLI::App* sub = app.add_subcommand("summary",
                                     "Print the end-of-trace summary of a trace again: wall and GPU busy time of the\n"
                                     "steady state (as stats' top), top kernels, memory copies, and any data loss.");
  sub->add_option("trace", o.trace, "NAME.sqlite")->required()->check(CLI::ExistingFile);
  sub->add_option("--format", o.format, "table, csv, json or markdown (one document: docs/output-formats.md)")
      ->capture_default_str();
  count_option(sub->add_option("--top", o.top, "Kernels listed; 0 = all")->capture_default_str(),
               core::CountLimits{0, kMaxInt, "10"});
  sub->add_flag("--whole-run", o.whole_run,
                "The overview judges the whole process, not the steady state (docs/steady-state.md)");
  sub->add_option("-r,--report", o.report, "Only this report: " + report_list())
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(kSummaryReports), std::end(kSummaryReports))));
  add_table_flags(*sub, o.table);
  return sub;
}

int run_summary(const SummaryOptions& o) {
  const render::Format f = render::parse_format(o.format);
  store::Database db = store::open_trace(o.trace);
  std::vector<Report> reports =
      analyze::trace_summary(db, o.top == 0 ? std::numeric_limits<int>::max() : o.top, o.whole_run);
  if (!o.report.empty()) {
    std::vector<Report> picked;
    std::string present;
    for (Report& r : reports) {
      present += (present.empty() ? "" : ", ") + r.name;
      if (r.name == o.report) picked.push_back(std::move(r));
    }
    if (picked.empty())
      throw std::runtime_error(
          "this trace has no " + o.report + " report (" +
          (o.report == "gpu_utilization" ? "it is printed for traces of more than one GPU" : "nothing to count") +
          "; this trace has: " + present + ")");
    reports = std::move(picked);
  }
  apply_timeunit(o.table, reports);
  render::render(reports, f, std::cout, render::DocumentOptions{"summary", o.report.empty(), table_options(o.table)});
  if (f == render::Format::kTable || f == render::Format::kMarkdown) std::cout << "\n";
  return 0;
}

}  // namespace gpuscope::cli
