#include "cli/kernels_output.hpp"

#include <cmath>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "analyze/kernels/kernel_explain.hpp"
#include "analyze/kernels/kernel_reports.hpp"
#include "core/kernel_metric_sets.hpp"
#include "core/units.hpp"
#include "render/kernel_roofline_svg.hpp"
#include "render/report_render.hpp"
#include "store/atomic_file.hpp"
#include "store/database.hpp"
#include "store/machine_profile_json.hpp"

namespace gpuscope::cli {
namespace {

constexpr const char* kPrefix = "gpuscope kernels: ";

std::optional<MachineProfile> find_profile(store::Database& db, const KernelOutputOptions& o, std::ostream& err) {
  std::vector<std::string> warnings;
  std::optional<MachineProfile> profile;
  if (!o.profile_path.empty()) {
    profile = store::read_profile(o.profile_path, &warnings);
    err << kPrefix << "ceilings from the machine profile " << o.profile_path << "\n";
  } else if (!o.no_profile) {
    const std::string uuid = analyze::profiled_gpu_uuid(db);
    if (!uuid.empty()) {
      try {
        profile = store::load_cached_profile(uuid, &warnings);
        if (profile)
          err << kPrefix << "ceilings from the cached machine profile " << store::profile_cache_path(uuid).string()
              << "\n";
      } catch (const store::ProfileError& e) {
        warnings.push_back(e.what());
      }
    }
  }
  for (const std::string& w : warnings) err << kPrefix << "warning: " << w << "\n";
  return profile;
}

void drop_column(Report& r, std::string_view name) {
  for (std::size_t c = 0; c < r.columns.size(); ++c) {
    if (r.columns[c].name != name) continue;
    r.columns.erase(r.columns.begin() + static_cast<std::ptrdiff_t>(c));
    for (Row& row : r.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(c));
    return;
  }
}

// Table and markdown only: each metric column under its short header (kernels::metric_header,
// "DRAM Read (bytes)" for dram__bytes_read.sum); a unit of several words ("thread instructions")
// is left out, the header says it. csv and json keep the metric names (scripts read them).
void use_short_headers(Report& r) {
  for (Column& c : r.columns) {
    const kernels::MetricInfo* info = kernels::find_metric_info(c.name);
    if (info == nullptr) continue;
    c.name = kernels::metric_header(c.name);
    if (c.unit.find(' ') != std::string::npos) c.unit.clear();
  }
}

// One paragraph per kernel name, most time first.
void write_explanations(const analyze::KernelAnalysis& a, render::Format format, std::ostream& out) {
  const bool md = format == render::Format::kMarkdown;
  out << "\n" << (md ? "### What bounds each kernel\n\n" : "What bounds each kernel:\n\n");
  for (const analyze::KernelName& k : a.names) {
    const std::string name = md ? render::markdown_text(k.name) : render::one_line(k.name);
    const std::string head =
        name + " (" + std::to_string(k.launches) + (k.launches == 1 ? " launch" : " launches") + ", " +
        units::duration(k.total_duration_s) + " in all, " +
        units::duration(k.launches > 0 ? k.total_duration_s / static_cast<double>(k.launches) : NAN) + " each)";
    const std::string explanation = analyze::kernel_explanation(k.derived, k.launch, k.device);
    if (md) {
      out << "- **" << head << "**: " << explanation << "\n";
    } else {
      out << "  " << head << "\n    " << explanation << "\n";
    }
    if (k.launches > 1 && std::isfinite(k.dominant_share_pct) && k.dominant_share_pct < 99.95) {
      out << (md ? "  " : "    ") << "(" << k.dominant_label << " in launches holding "
          << units::percent(k.dominant_share_pct) << " of its time; the text describes the mean launch.)\n";
    }
  }
}

}  // namespace

std::string kernel_results_path(const std::string& name, const std::string& format) {
  if (name.empty()) return {};
  if (format == "csv") return name + ".csv";
  if (format == "json") return name + ".json";
  if (format == "markdown") return name + ".md";
  return {};
}

int print_kernel_results(store::Database& db, const KernelOutputOptions& o, std::ostream& out, std::ostream& err) {
  const render::Format format = render::parse_format(o.format);
  if (!o.by.empty() && o.by != "launch" && o.by != "name")
    throw std::invalid_argument("--by '" + o.by + "': expected 'launch' or 'name'");

  const std::optional<MachineProfile> profile = find_profile(db, o, err);
  analyze::KernelReportOptions ro;
  ro.profile = profile ? &*profile : nullptr;
  ro.calibration = o.calibration;
  ro.name_regex = o.name_regex;
  const analyze::KernelAnalysis a = analyze::analyze_kernels(db, ro);
  if (!a.has_profiles) {
    err << kPrefix << analyze::kNoKernelProfilesNote << "\n";
    return 1;
  }
  if (a.launches.empty()) {
    err << kPrefix << "no profiled kernel matches '" << o.name_regex << "'\n";
    return 1;
  }
  const bool per_launch = o.by == "launch" || (o.by.empty() && a.launches.size() <= kAutoLaunchRows);
  Report report = per_launch ? analyze::kernel_launch_report(a) : analyze::kernel_name_report(a);
  const bool paragraphs = o.explain && (format == render::Format::kTable || format == render::Format::kMarkdown);
  if (paragraphs) drop_column(report, "Explanation");  // the paragraphs below say it in full
  if (format == render::Format::kTable || format == render::Format::kMarkdown) use_short_headers(report);
  apply_timeunit(o.table, std::span<Report>(&report, 1));
  const auto write_results = [&](std::ostream& to) {
    render::render(std::span<const Report>(&report, 1), format, to,
                   render::DocumentOptions{"kernels", false, table_options(o.table)});
    if (paragraphs) write_explanations(a, format, to);
  };
  if (o.results_path.empty()) {
    write_results(out);
  } else {
    store::write_file_atomically(o.results_path, store::overwrite_if(o.force_overwrite), write_results);
    err << kPrefix << "results written to " << o.results_path << "\n";
  }

  if (!o.svg_path.empty()) {
    const std::vector<kernels::KernelPoint> points = analyze::roofline_points(a, per_launch);
    // Atomic: no chart to draw, or a failed write, keeps the file that was there.
    try {
      store::write_file_atomically(o.svg_path, store::overwrite_if(o.force_overwrite), [&](std::ostream& file) {
        render::write_kernel_roofline_svg(a.ceilings, points, a.ceiling_source, file);
      });
    } catch (const std::invalid_argument& e) {
      err << kPrefix << "warning: no roofline chart: " << e.what() << "; " << o.svg_path << " not written\n";
      out.flush();
      return 0;
    }
    err << kPrefix << "roofline chart written to " << o.svg_path << "\n";
  }
  out.flush();
  return 0;
}

}  // namespace gpuscope::cli
