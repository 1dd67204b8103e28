#include "cli/stats_command.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>

#include "analyze/nsys_reports.hpp"
#include "render/report_render.hpp"
#include "store/trace.hpp"

namespace gpuscope::cli {

CLI::App* add_stats_command(CLI::App& app, StatsOptions& o) {
  std::string names, extra;  // the default reports; the diagnosis reports run only on request
  const auto defaults = analyze::report_names();
  for (std::string_view n : analyze::all_report_names()) {
    std::string& list = std::find(defaults.begin(), defaults.end(), n) != defaults.end() ? names : extra;
    list += (list.empty() ? "" : ", ") + std::string(n);
  }
  if (!extra.empty()) names += "; on request: " + extra;
  CLI::App* sub = app.add_subcommand(
      "stats", "Print nsys-style summary reports of a trace (per API function, kernel, memory\n"
               "operation and NVTX range: total, count, avg, median, min, max, stddev).");
  sub->add_option("trace", o.trace, "NAME.sqlite")->required()->check(CLI::ExistingFile);
  sub->add_option("-r,--report", o.reports, "Reports, comma-separated (default: all but the on-request ones): " + names)
      ->delimiter(',');
  sub->add_option("--format", o.format, "table, csv, json or markdown")->capture_default_str();
  sub->add_option("-o,--output", o.output, "Write to FILE instead of stdout");
  sub->add_flag("--base", o.base, "Kernel base names (no namespace, templates or parameters)");
  sub->add_flag("--mangled", o.mangled, "Kernel mangled names");
  return sub;
}

int run_stats(const StatsOptions& o) {
  // Validate everything before opening files, so a typo costs nothing.
  const render::Format format = render::parse_format(o.format);
  std::vector<std::string> names = o.reports;
  if (names.empty())
    for (std::string_view n : analyze::report_names()) names.emplace_back(n);

  store::Database db = store::open_trace(o.trace);
  analyze::ReportOptions ro;
  ro.base = o.base;
  ro.mangled = o.mangled;
  std::vector<Report> reports;
  for (const std::string& n : names) reports.push_back(analyze::run_report(db, n, ro));

  std::ofstream file;
  if (!o.output.empty()) {
    file.open(o.output, std::ios::binary);
    if (!file) throw std::runtime_error("cannot write " + o.output);
  }
  std::ostream& out = o.output.empty() ? std::cout : file;
  render::render(reports, format, out);
  out.flush();
  if (!out) throw std::runtime_error("writing " + (o.output.empty() ? std::string("stdout") : o.output) + " failed");
  return 0;
}

}  // namespace gpuscope::cli
