#include "cli/report_command.hpp"

#include <filesystem>
#include <iostream>

#include "analyze/report/report_page.hpp"
#include "cli/output_files.hpp"
#include "render/html_report.hpp"
#include "store/atomic_file.hpp"
#include "store/trace.hpp"

namespace gpuscope::cli {

CLI::App* add_report_command(CLI::App& app, ReportCommandOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "report",
      "One HTML page to read a trace by: the headline (wall time, GPU busy, SM coverage, data loss,\n"
      "the diagnoses with their evidence: as `stats -r top`), where the time goes per GPU and per\n"
      "training step, a timeline overview (zoom, pan, hover), the top kernels, operators and NVTX\n"
      "ranges as sortable tables (the numbers of `gpuscope stats`), memory and GPU metrics over time.\n"
      "The file is self-contained: it opens from disk in any browser, with no network. Example:\n"
      "  gpuscope report run.sqlite            (writes run.html)\n"
      "  gpuscope report run.sqlite -o /tmp/run.html -f\n"
      "What each picture shows: docs/report.md.");
  sub->add_option("trace", o.trace, "RUN.sqlite: a trace of gpuscope trace or gpuscope import")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("-o,--output", o.output, "The page to write (default RUN.html next to the trace)");
  add_force_overwrite_flag(*sub, o.force_overwrite);
  sub->add_flag("--whole-run", o.whole_run,
                "The headline, the per-GPU split and nvtx_sum, op_sum and module_sum judge the steady state\n"
                "(PyTorch steps, NVTX step ranges or iterations found in the GPU work; else from the first\n"
                "GPU work on), as stats does, unless this is given: then the whole process");
  sub->add_flag("--no-timeline", o.no_timeline,
                "Leave the timeline overview out (a smaller page; gpuscope export gives the full timeline)");
  return sub;
}

int run_report_page(const ReportCommandOptions& o) {
  std::string output = o.output;
  if (output.empty()) {
    const std::filesystem::path p(o.trace);
    output = (p.parent_path() / p.stem()).string() + ".html";
  }
  check_outputs({output}, o.force_overwrite);  // before the trace is read
  store::Database db = store::open_trace(o.trace);
  analyze::ReportPageOptions po;
  po.trace_name = std::filesystem::path(o.trace).filename().string();
  po.whole_run = o.whole_run;
  po.timeline = !o.no_timeline;
  const core::ReportPage page = analyze::report_page(db, po);
  store::write_file_atomically(output, store::overwrite_if(o.force_overwrite),
                               [&](std::ostream& out) { render::write_html_report(page, out); });
  std::cerr << "gpuscope report: wrote " << output << " (open it in a browser; it needs no network)\n";
  return 0;
}

}  // namespace gpuscope::cli
