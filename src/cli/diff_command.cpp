#include "cli/diff_command.hpp"

#include <filesystem>
#include <iostream>
#include <vector>

#include "analyze/diff/trace_diff.hpp"
#include "cli/option_checks.hpp"
#include "cli/output_files.hpp"
#include "cli/table_flags.hpp"
#include "core/version.hpp"
#include "render/html_report.hpp"
#include "store/atomic_file.hpp"
#include "render/report_render.hpp"
#include "store/trace.hpp"

namespace gpuscope::cli {

CLI::App* add_diff_command(CLI::App& app, DiffOptions& o) {
  CLI::App* sub =
      app.add_subcommand("diff",
                         "What changed between two traces of the same program: per kernel name, NVTX range,\n"
                         "PyTorch operator and training step, the count, total and median time in A and B, the\n"
                         "change, and a verdict (faster / slower / same) called only beyond the spread the\n"
                         "repeated instances show (as `bench compare`); kernels only in one trace are 'added' or\n"
                         "'deleted'. When both traces have a steady state (PyTorch steps, NVTX ranges named\n"
                         "like steps, or iterations found in the GPU work), only it is compared, not loading\n"
                         "and warm-up. Example:\n"
                         "  gpuscope diff before.sqlite after.sqlite --top 20");
  sub->add_option("a", o.a, "A.sqlite: the reference (before)")->required()->check(CLI::ExistingFile);
  sub->add_option("b", o.b, "B.sqlite: the one compared with it (after)")->required()->check(CLI::ExistingFile);
  sub->add_option("--format", o.format, "table, csv, json or markdown (one document: docs/output-formats.md)")
      ->capture_default_str();
  count_option(
      sub->add_option("--top", o.top, "Rows printed, biggest change of time first; 0 = all")->capture_default_str(),
      core::CountLimits{0, kMaxInt, "30"});
  real_option(sub->add_option("--k", o.k, "Standard errors of the difference needed to call faster/slower"),
              core::RealLimits{0, 100, true, true, "3"});
  real_option(sub->add_option("--floor", o.floor,
                              "Smallest relative change ever called faster/slower (0.05 = 5 %: two runs are two "
                              "processes, whose clocks and placement differ)"),
              core::RealLimits{0, 10, true, true, "0.05"});
  sub->add_flag("--whole-run", o.whole_run, "Compare the whole traces, not their steady states");
  sub->add_option("--html", o.html,
                  "Also write OUT.html: the whole comparison as one self-contained page (the headline, every row\n"
                  "sortable and filterable, verdicts in colour; docs/report.md)");
  add_force_overwrite_flag(*sub, o.force_overwrite);
  add_table_flags(*sub, o.table);
  return sub;
}

int run_diff(const DiffOptions& o) {
  const render::Format f = render::parse_format(o.format);
  if (!o.html.empty()) check_outputs({o.html}, o.force_overwrite);  // before the traces are read
  store::Database a = store::open_trace(o.a);
  store::Database b = store::open_trace(o.b);
  Report r = analyze::diff_traces(a, b, analyze::DiffOptions{o.k, o.floor, o.whole_run});
  if (!o.html.empty()) {  // every row: the page sorts and filters them
    core::ReportPage page;
    page.kind = "diff";
    page.trace_name =
        std::filesystem::path(o.a).filename().string() + " vs " + std::filesystem::path(o.b).filename().string();
    page.generator = std::string("gpuscope ") + kVersion;
    page.tables.push_back(r);
    store::write_file_atomically(o.html, store::overwrite_if(o.force_overwrite),
                                 [&](std::ostream& out) { render::write_html_report(page, out); });
    std::cerr << "gpuscope diff: wrote " << o.html << "\n";
  }
  const std::size_t all = r.rows.size();
  if (o.top > 0 && r.rows.size() > static_cast<std::size_t>(o.top)) {
    r.rows.resize(static_cast<std::size_t>(o.top));
    r.add_note(NoteLevel::kInfo,
               "the first " + std::to_string(o.top) + " of " + std::to_string(all) + " rows (--top 0 for all)");
  }
  std::vector<Report> printed{r};
  apply_timeunit(o.table, printed);
  render::render(printed, f, std::cout, render::DocumentOptions{"diff", false, table_options(o.table)});
  if (f == render::Format::kTable || f == render::Format::kMarkdown) std::cout << "\n";
  return 0;
}

}  // namespace gpuscope::cli
