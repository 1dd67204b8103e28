#include "render/kernel_roofline_svg.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "core/roofline.hpp"
#include "core/units.hpp"
#include "render/roofline_svg.hpp"

namespace gpuscope::render {
namespace {

bool positive(double v) { return std::isfinite(v) && v > 0.0; }

// A double as text that reads back as the same double.
std::string exact(double v) { return fmt::format("{:.17g}", v); }

bool can_draw_roofline(const MachineProfile& ceilings) {
  bool memory = false, compute = false;
  for (const roofline::Line& l : roofline::chart_lines(ceilings))
    (l.kind == CeilingKind::kMemory ? memory : compute) = true;
  return memory && compute;
}

std::string source_text(std::string_view source) {
  return source == "theoretical" ? "theoretical ceilings (no machine profile: run gpuscope peak)"
                                 : "measured ceilings from gpuscope peak";
}

std::string count_text(std::size_t n) { return std::to_string(n) + (n == 1 ? " kernel" : " kernels"); }

Chart roofline_kind(const MachineProfile& ceilings, std::span<const kernels::KernelPoint> kernels,
                    std::string_view source) {
  std::vector<RooflinePoint> points;
  std::size_t left_out = 0;
  for (const kernels::KernelPoint& k : kernels) {
    if (!k.on_roofline) {
      ++left_out;
      continue;
    }
    points.push_back({k.label, k.intensity, k.flop_rate, bound_color(k.bound)});
  }
  Chart c = roofline_chart(ceilings, points);
  c.title =
      "Kernels on the roofline of " + (ceilings.device.name.empty() ? std::string("this GPU") : ceilings.device.name);
  c.subtitle = source_text(source) + "; filled: FLOP per DRAM byte, hollow: per L2 / L1 byte";
  if (left_out > 0) c.subtitle += "; " + count_text(left_out) + " not drawn (FLOPs or DRAM bytes not collected, or 0)";
  for (ChartPoint& p : c.points)
    if (p.css_class == "kernel")
      for (const kernels::KernelPoint& k : kernels)
        if (k.on_roofline && k.label == p.label) {
          p.legend = k.bound_label;
          p.data = {{"kernel", k.label},
                    {"intensity", exact(k.intensity)},
                    {"flop-rate", exact(k.flop_rate)},
                    {"ceiling", k.ceiling},
                    {"bound", k.bound_label}};
        }
  // Hierarchical points, where they fall inside the axes.
  for (const kernels::KernelPoint& k : kernels) {
    if (!k.on_roofline) continue;
    for (auto [ai, cls] : {std::pair{k.intensity_l2, "kernel-l2"}, std::pair{k.intensity_l1, "kernel-l1"}}) {
      if (!positive(ai) || ai < c.x.min || ai > c.x.max) continue;
      ChartPoint p;
      p.x = ai;
      p.y = k.flop_rate;
      p.color = bound_color(k.bound);
      p.hollow = true;
      p.radius = 3.5;
      p.css_class = cls;
      c.points.push_back(std::move(p));
    }
  }
  return c;
}

Chart bandwidth_kind(const MachineProfile& ceilings, std::span<const kernels::KernelPoint> kernels,
                     std::string_view source, bool flops_collected) {
  Chart c;
  c.title = "Kernel bandwidth on " + (ceilings.device.name.empty() ? std::string("this GPU") : ceilings.device.name);
  c.subtitle = source_text(source) + "; " +
               (flops_collected ? std::string("the ceilings have no compute roof, so no roofline")
                                : std::string("FLOPs were not collected: bandwidth against the memory ceilings (run "
                                              "gpuscope kernels --set roofline for the roofline)"));
  c.x = ChartAxis{"Kernel duration", "s", true};
  c.y = ChartAxis{"Achieved bandwidth", "B/s", true};
  c.legend = LegendAt::kBottomRight;

  double x_lo = INFINITY, x_hi = 0, y_lo = INFINITY, y_hi = 0;
  std::size_t drawn = 0;
  for (const kernels::KernelPoint& k : kernels) {
    const double t = k.duration_s;
    if (!positive(t)) continue;
    bool any = false;
    for (auto [bw, l2] : {std::pair{k.dram_bandwidth, false}, std::pair{k.l2_bandwidth, true}}) {
      if (!positive(bw)) continue;
      ChartPoint p;
      p.x = t;
      p.y = bw;
      p.color = bound_color(k.bound);
      if (l2) {
        p.hollow = true;
        p.radius = 3.5;
        p.css_class = "kernel-l2";
        p.legend = "L2 bandwidth (hollow)";
      } else {
        p.label = k.label;
        p.label_bold = true;
        p.radius = 4.5;
        p.css_class = "kernel";
        p.legend = k.bound_label;
      }
      c.points.push_back(std::move(p));
      x_lo = std::min(x_lo, t), x_hi = std::max(x_hi, t);
      y_lo = std::min(y_lo, bw), y_hi = std::max(y_hi, bw);
      any = true;
    }
    drawn += any;
  }
  std::vector<const Ceiling*> lines;
  for (const char* name : {"dram_copy", "l2_read"}) {
    const Ceiling* ce = ceilings.find(name);
    if (ce && positive(ce->measured)) lines.push_back(ce);
  }
  if (drawn == 0) throw std::invalid_argument("nothing to draw: no kernel has a duration and DRAM or L2 bytes");
  if (lines.empty())
    throw std::invalid_argument("cannot draw kernel bandwidth: the ceilings have no dram_copy or l2_read value");
  for (const Ceiling* ce : lines) y_hi = std::max(y_hi, ce->measured), y_lo = std::min(y_lo, ce->measured);
  c.x.min = x_lo / 3;
  c.x.max = x_hi * 3;
  c.y.min = y_lo / 3;
  c.y.max = y_hi * 3;
  for (const Ceiling* ce : lines) {
    const CeilingInfo* info = find_ceiling_info(ce->name);
    ChartLine l;
    l.points = {{c.x.min, ce->measured}, {c.x.max, ce->measured}};
    l.dashed = true;
    l.color = ce->name == "dram_copy" ? "#1f77b4" : "#17a2b8";
    l.id = "ceiling-" + ce->name;
    l.css_class = "ceiling memory";
    l.label = (info ? std::string(info->label) : ce->name) + " " + units::byte_rate(ce->measured);
    l.label_at = LabelAt::kEnd;
    c.lines.push_back(std::move(l));
  }
  return c;
}

}  // namespace

std::string bound_color(kernels::Bound bound) {
  switch (bound) {
    case kernels::Bound::kDram:
      return "#1f77b4";
    case kernels::Bound::kL2:
      return "#17a2b8";
    case kernels::Bound::kL1:
      return "#2ca02c";
    case kernels::Bound::kCompute:
      return "#d62728";
    case kernels::Bound::kLaunch:
      return "#ff7f0e";
    case kernels::Bound::kLatency:
      return "#7f7f7f";
    case kernels::Bound::kOccupancy:
      return "#9467bd";
    case kernels::Bound::kComputeOrLatency:
      return "#8c564b";
    case kernels::Bound::kUnknown:
      return "#000000";
  }
  return "#000000";
}

Chart kernel_roofline_chart(const MachineProfile& ceilings, std::span<const kernels::KernelPoint> kernels,
                            std::string_view ceiling_source) {
  const bool any_point =
      std::any_of(kernels.begin(), kernels.end(), [](const kernels::KernelPoint& k) { return k.on_roofline; });
  const bool flops =
      std::any_of(kernels.begin(), kernels.end(), [](const kernels::KernelPoint& k) { return k.flops_collected; });
  if (any_point && can_draw_roofline(ceilings)) return roofline_kind(ceilings, kernels, ceiling_source);
  return bandwidth_kind(ceilings, kernels, ceiling_source, flops && any_point);
}

void write_kernel_roofline_svg(const MachineProfile& ceilings, std::span<const kernels::KernelPoint> kernels,
                               std::string_view ceiling_source, std::ostream& out) {
  write_svg(kernel_roofline_chart(ceilings, kernels, ceiling_source), out);
}

}  // namespace gpuscope::render
