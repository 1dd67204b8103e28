#include "cli/stats_steps.hpp"

#include <algorithm>
#include <iostream>
#include <stdexcept>

#include "cli/table_flags.hpp"
#include "core/report_transform.hpp"
#include "core/units.hpp"
#include "store/atomic_file.hpp"

namespace gpuscope::cli {

std::vector<std::string> unique_report_names(const std::vector<std::string>& reports) {
  std::vector<std::string> names;
  for (const std::string& n : reports)
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  return names;
}

analyze::TraceFilter stats_filter(const StatsOptions& o) {
  analyze::TraceFilter f;
  if (!o.filter_nvtx.empty()) f.nvtx = analyze::parse_nvtx_filter(o.filter_nvtx);
  if (!o.from.empty()) f.from_ns = core::parse_duration_ns(o.from, kStatsTraceTime).value;  // checked by CLI11
  if (!o.to.empty()) f.to_ns = core::parse_duration_ns(o.to, kStatsTraceTime).value;
  if (f.from_ns && f.to_ns && *f.from_ns > *f.to_ns)
    throw std::invalid_argument("--from " + o.from + " is after --to " + o.to);
  f.pid = o.process;
  f.gpu = o.device;
  return f;
}

void finish_stats_reports(const StatsOptions& o, std::vector<Report>& reports, render::Format format,
                          const std::string& last_note) {
  // Per-report transforms: unit first, so --sort may name the converted header.
  std::vector<std::string> unsorted;
  for (Report& r : reports) {
    apply_timeunit(o.table, std::span<Report>(&r, 1));
    if (!o.sort.empty()) {
      if (find_column(r, o.sort)) {
        sort_rows(r, o.sort);
      } else {
        unsorted.push_back(r.name);
      }
    }
    if (o.top && *o.top > 0) keep_top_rows(r, *o.top);
    if (!last_note.empty()) r.add_note(NoteLevel::kInfo, last_note);
  }
  if (!unsorted.empty() && unsorted.size() == reports.size()) {
    std::string cols;
    for (const Report& r : reports) {
      cols += (cols.empty() ? "" : "; ") + r.name + ": ";
      for (std::size_t i = 0; i < r.columns.size(); ++i) cols += (i ? ", " : "") + ("'" + r.columns[i].name + "'");
    }
    throw std::invalid_argument("--sort '" + o.sort + "': no such column" +
                                (reports.size() > 1 ? " in any report" : "") + " (" + cols + ")");
  }
  for (const std::string& n : unsorted)
    std::cerr << "gpuscope stats: warning: --sort '" << o.sort << "': report " << n
              << " has no such column; its rows keep their order\n";

  // One document per run, whatever -r asks for (render/report_render.hpp, docs/output-formats.md).
  const render::DocumentOptions document{"stats", false, table_options(o.table)};
  if (!o.output.empty()) {
    store::write_file_atomically(o.output, store::overwrite_if(o.force_overwrite),
                                 [&](std::ostream& out) { render::render(reports, format, out, document); });
  } else {
    render::render(reports, format, std::cout, document);
    std::cout.flush();
    if (!std::cout) throw std::runtime_error("writing stdout failed");
  }
}

}  // namespace gpuscope::cli
