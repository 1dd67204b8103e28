#include "cli/roofline_command.hpp"

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "cli/output_files.hpp"
#include "core/option_values.hpp"
#include "core/profile_report.hpp"
#include "render/report_render.hpp"
#include "render/roofline_svg.hpp"
#include "store/atomic_file.hpp"
#include "store/machine_profile_json.hpp"

namespace gpuscope::cli {
namespace {

// An input error: printed as "gpuscope roofline: error: ..." with exit code 2.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A point's INTENSITY (FLOP/B, at most 10^9) or FLOPS (FLOP/s, at most 10^18: a thousand
// times an H100), positive: beyond those no GPU plots.
double parse_positive(const std::string& text, const std::string& point, const char* what, double max,
                      const char* example) {
  const core::RealLimits positive{0.0, max, false, true, example};
  const auto v = core::parse_real(text, positive);
  if (!v.ok()) throw InputError("--point '" + point + "': " + what + " " + v.error);
  return *v.value;
}

// "NAME:INTENSITY:FLOPS"; NAME may itself hold ':' (C++ names do), so split at the last two.
render::RooflinePoint parse_point(const std::string& text) {
  const std::size_t b = text.rfind(':');
  const std::size_t a = b == std::string::npos || b == 0 ? std::string::npos : text.rfind(':', b - 1);
  if (a == std::string::npos || a == 0)
    throw InputError("--point '" + text + "' must be NAME:INTENSITY:FLOPS (FLOP/B and FLOP/s, e.g. gemm:512:6.1e14)");
  render::RooflinePoint p;
  p.name = text.substr(0, a);
  p.intensity = parse_positive(text.substr(a + 1, b - a - 1), text, "INTENSITY (FLOP/B)", 1e9, "512");
  p.flops = parse_positive(text.substr(b + 1), text, "FLOPS (FLOP/s)", 1e18, "6.1e14");
  return p;
}

struct Loaded {
  std::string path;
  MachineProfile profile;
};

Loaded load(const RooflineOptions& o) {
  std::vector<std::string> warnings;
  Loaded l;
  if (!o.profile.empty()) {
    l.path = o.profile;
    l.profile = store::read_profile(o.profile, &warnings);
  } else {
    auto found = store::find_profile_for_device(o.device, &warnings);
    if (!found) {
      for (const std::string& w : warnings) std::cerr << "gpuscope roofline: warning: " << w << "\n";
      throw InputError("no cached machine profile" + (o.device.empty() ? std::string() : " for '" + o.device + "'") +
                       " in " + store::profile_cache_dir().string() +
                       ": run `gpuscope peak` on that GPU to measure one, or pass a profile file: "
                       "gpuscope roofline PROFILE.json");
    }
    l.path = found->path.string();
    l.profile = std::move(found->profile);
    std::cerr << "gpuscope roofline: using the cached profile " << l.path << "\n";
  }
  for (const std::string& w : warnings) std::cerr << "gpuscope roofline: warning: " << w << "\n";
  return l;
}

int run(const RooflineOptions& o) {
  // Validate everything cheap before reading files.
  const render::Format format = render::parse_format(o.format);
  std::vector<render::RooflinePoint> points;
  for (const std::string& p : o.points) points.push_back(parse_point(p));
  check_outputs({o.output}, o.force_overwrite);

  const Loaded l = load(o);
  std::vector<Report> reports{profile_report(l.profile), roofline_report(l.profile)};
  apply_timeunit(o.table, reports);
  render::render(reports, format, std::cout, render::DocumentOptions{"roofline", false, table_options(o.table)});
  std::cout.flush();

  render::Chart chart;
  try {
    chart = render::roofline_chart(l.profile, points);
  } catch (const std::invalid_argument& e) {
    throw InputError(l.path + ": " + e.what());
  }
  store::write_file_atomically(o.output, store::overwrite_if(o.force_overwrite),
                               [&chart](std::ostream& out) { render::write_svg(chart, out); });
  std::cerr << "gpuscope roofline: wrote " << o.output << " (open it in a web browser)\n";
  return 0;
}

}  // namespace

CLI::App* add_roofline_command(CLI::App& app, RooflineOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "roofline",
      "Print a machine profile saved by `gpuscope peak` (the measured ceilings and the ridge points)\n"
      "and draw its roofline as SVG. Needs no GPU. Without PROFILE, uses the cached profile.");
  sub->add_option("profile", o.profile, "Machine profile JSON (default: the cached one, see --device)");
  sub->add_option("-o,--output", o.output, "SVG file to write")->capture_default_str();
  add_force_overwrite_flag(*sub, o.force_overwrite);
  sub->add_option("--format", o.format, "table, csv, json or markdown (the printed reports)")->capture_default_str();
  add_table_flags(*sub, o.table);
  sub->add_option("--device", o.device, "Without PROFILE: the cached profile of this GPU (name or UUID)");
  sub->add_option("--point", o.points,
                  "Draw a kernel on the roofline: NAME:INTENSITY:FLOPS (FLOP/B, FLOP/s), e.g. gemm:512:6.1e14;\n"
                  "repeat for more");
  return sub;
}

int run_roofline(const RooflineOptions& o) {
  try {
    return run(o);
  } catch (const store::ProfileError& e) {
    std::cerr << "gpuscope roofline: error: " << e.what() << "\n";
  } catch (const InputError& e) {
    std::cerr << "gpuscope roofline: error: " << e.what() << "\n";
  } catch (const std::invalid_argument& e) {  // --format
    std::cerr << "gpuscope roofline: error: " << e.what() << "\n";
  } catch (const store::OutputExistsError& e) {  // -o exists without -f
    std::cerr << "gpuscope roofline: error: " << e.what() << "\n";
  } catch (const store::FileWriteError& e) {  // the SVG cannot be written
    std::cerr << "gpuscope roofline: error: " << e.what() << "\n";
    return 1;
  }
  return 2;
}

}  // namespace gpuscope::cli
