#include "trace_checks.hpp"

#include <exception>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyze/kernels/kernel_analysis.hpp"
#include "analyze/kernels/kernel_reports.hpp"
#include "analyze/report_registry.hpp"
#include "analyze/timeline/timeline.hpp"
#include "analyze/nsys/trace_summary.hpp"
#include "core/utf8.hpp"
#include "fuzz_support.hpp"
#include "render/kernel_roofline_svg.hpp"
#include "render/perfetto_json.hpp"
#include "render/report_render.hpp"
#include "store/database.hpp"

namespace gpuscope::fuzz {
namespace {

constexpr render::Format kFormats[] = {render::Format::kTable, render::Format::kCsv, render::Format::kJson,
                                       render::Format::kMarkdown};

void check_output(const std::string& what, const std::string& text, bool json, const TraceCheckOptions& o) {
  if (o.utf8_outputs && !core::valid_utf8(text)) finding(what, "output is not valid UTF-8");
  if (json && !nlohmann::json::accept(text)) finding(what, "output is not valid JSON");
}

void render_all(const std::vector<Report>& reports, const TraceCheckOptions& o) {
  for (const render::Format f : kFormats) {
    std::ostringstream out;
    render::render(reports, f, out);
    check_output("render " + std::string(render::format_name(f)), out.str(), f == render::Format::kJson, o);
  }
}

// Runs one analysis; store::DatabaseError is the documented answer to a damaged table.
template <class F>
void run(F&& analysis) {
  try {
    analysis();
  } catch (const store::DatabaseError& e) {
    documented(e);
  } catch (const std::exception& e) {
    undocumented(e);
  }
}

}  // namespace

void check_trace(store::Database& db, const TraceCheckOptions& o) {
  analyze::ReportOptions report_options;
  report_options.base = (o.variant & 1u) != 0;
  report_options.mangled = (o.variant & 2u) != 0;

  for (const analyze::ReportEntry& entry : analyze::report_registry()) {
    run([&] { render_all(entry.run(db, report_options), o); });
  }
  run([&] { render_all(analyze::trace_summary(db, static_cast<int>(o.variant % 12)), o); });
  run([&] {
    const analyze::KernelAnalysis a = analyze::analyze_kernels(db);
    render_all({analyze::kernel_launch_report(a), analyze::kernel_name_report(a)}, o);
    // Both charts kernels --report draws: a point per launch and a point per kernel name.
    std::vector<kernels::KernelPoint> points = analyze::roofline_points(a, true);
    for (kernels::KernelPoint& p : analyze::roofline_points(a, false)) points.push_back(std::move(p));
    std::ostringstream svg;
    try {
      render::write_kernel_roofline_svg(a.ceilings, points, a.ceiling_source, svg);
      check_output("kernel roofline svg", svg.str(), false, o);
    } catch (const std::invalid_argument& e) {
      documented(e);  // nothing to draw
    }
  });
  run([&] {
    const analyze::Timeline timeline = analyze::load_timeline(db);
    std::ostringstream out;
    render::write_perfetto_json(timeline, out);
    check_output("perfetto export", out.str(), true, o);
  });
}

}  // namespace gpuscope::fuzz
