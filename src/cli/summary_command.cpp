#include "cli/summary_command.hpp"

#include <iostream>

#include "analyze/trace_summary.hpp"
#include "render/report_render.hpp"
#include "store/trace.hpp"

namespace gpuscope::cli {

CLI::App* add_summary_command(CLI::App& app, SummaryOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "summary", "Print the end-of-trace summary of a trace again: wall and GPU busy time, top\n"
                 "kernels, memory copies, and any data loss.");
  sub->add_option("trace", o.trace, "NAME.sqlite")->required()->check(CLI::ExistingFile);
  sub->add_option("--format", o.format, "table, csv, json or markdown")->capture_default_str();
  sub->add_option("--top", o.top, "Kernels listed")->capture_default_str();
  return sub;
}

int run_summary(const SummaryOptions& o) {
  store::Database db = store::open_trace(o.trace);
  const render::Format f = render::parse_format(o.format);
  for (const Report& r : analyze::trace_summary(db, o.top)) {
    render::render(r, f, std::cout);
    if (f == render::Format::kTable || f == render::Format::kMarkdown) std::cout << "\n";
  }
  return 0;
}

}  // namespace gpuscope::cli
