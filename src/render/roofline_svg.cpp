#include "render/roofline_svg.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/roofline.hpp"
#include "core/units.hpp"

namespace gpuscope::render {
namespace {

// One colour per ceiling: memory in blues and greens, compute in warm colours.
std::string color_of(std::string_view ceiling) {
  if (ceiling == "dram_copy") return "#1f77b4";
  if (ceiling == "l2_read") return "#17a2b8";
  if (ceiling == "shared_memory") return "#2ca02c";
  if (ceiling == "fp64_fma") return "#8c564b";
  if (ceiling == "fp32_fma") return "#d62728";
  if (ceiling == "tensor_fp16" || ceiling == "tensor_bf16") return "#9467bd";
  if (ceiling == "tensor_fp8") return "#ff7f0e";
  return "#555555";
}

std::string_view unit_of(const roofline::Line& l) {
  const CeilingInfo* info = find_ceiling_info(l.ceiling);
  return info ? info->unit : std::string_view(l.kind == CeilingKind::kMemory ? "B/s" : "FLOP/s");
}

double decade_floor(double v) { return std::pow(10.0, std::floor(std::log10(v) + 1e-9)); }
double decade_ceil(double v) { return std::pow(10.0, std::ceil(std::log10(v) - 1e-9)); }

}  // namespace

Chart roofline_chart(const MachineProfile& profile, std::span<const RooflinePoint> points) {
  std::vector<roofline::Line> memory, compute;
  for (roofline::Line& l : roofline::chart_lines(profile))
    (l.kind == CeilingKind::kMemory ? memory : compute).push_back(std::move(l));
  if (memory.empty() || compute.empty())
    throw std::invalid_argument(std::string("cannot draw a roofline: the profile has no measured ") +
                                (memory.empty()
                                     ? "memory ceiling (dram_copy, l2_read or shared_memory)"
                                     : "compute ceiling (fp64_fma, fp32_fma, tensor_fp16, tensor_bf16 or tensor_fp8)"));

  auto by_value = [](const roofline::Line& a, const roofline::Line& b) { return a.value < b.value; };
  const double max_bw = std::max_element(memory.begin(), memory.end(), by_value)->value;
  const double min_bw = std::min_element(memory.begin(), memory.end(), by_value)->value;
  const double max_rate = std::max_element(compute.begin(), compute.end(), by_value)->value;
  const double min_rate = std::min_element(compute.begin(), compute.end(), by_value)->value;

  // Ranges in whole decades (see the header).
  double x_lo = roofline::ridge_point(min_rate, max_bw) / 50, x_hi = roofline::ridge_point(max_rate, min_bw) * 20;
  double y_hi = max_rate * 3;
  for (const RooflinePoint& p : points) {
    if (!(p.intensity > 0) || !(p.flops > 0) || !std::isfinite(p.intensity) || !std::isfinite(p.flops)) continue;
    x_lo = std::min(x_lo, p.intensity / 2);
    x_hi = std::max(x_hi, p.intensity * 2);
    y_hi = std::max(y_hi, p.flops * 2);
  }
  x_lo = decade_floor(x_lo);
  x_hi = decade_ceil(x_hi);
  double y_lo = decade_floor(x_lo * min_bw);
  for (const RooflinePoint& p : points)
    if (p.flops > 0 && std::isfinite(p.flops)) y_lo = std::min(y_lo, decade_floor(p.flops / 2));
  y_hi = decade_ceil(y_hi);

  Chart c;
  c.title = "Roofline of " + (profile.device.name.empty() ? std::string("an unknown GPU") : profile.device.name);
  c.subtitle = "measured ceilings from gpuscope peak";
  if (!profile.measured_at.empty()) c.subtitle += ", " + profile.measured_at;
  if (profile.quick) c.subtitle += " (--quick)";
  if (!profile.device.uuid.empty()) c.subtitle += " · " + profile.device.uuid;
  c.x = ChartAxis{"Arithmetic intensity", "FLOP/B", false, x_lo, x_hi};
  c.y = ChartAxis{"Performance", "FLOP/s", true, y_lo, y_hi};
  c.legend = LegendAt::kTopLeft;

  for (const roofline::Line& m : memory) {
    const double x_end = roofline::ridge_point(max_rate, m.value);
    ChartLine l;
    l.points = {{x_lo, x_lo * m.value}, {x_end, max_rate}};
    l.color = color_of(m.ceiling);
    l.id = "ceiling-" + m.ceiling;
    l.css_class = "ceiling memory";
    l.label = m.label + " " + units::si(m.value, unit_of(m));
    l.label_at = LabelAt::kStart;
    c.lines.push_back(std::move(l));
  }
  for (const roofline::Line& k : compute) {
    ChartLine l;
    l.points = {{roofline::ridge_point(k.value, max_bw), k.value}, {x_hi, k.value}};
    l.color = color_of(k.ceiling);
    l.id = "ceiling-" + k.ceiling;
    l.css_class = "ceiling compute";
    l.label = k.label + " " + units::si(k.value, unit_of(k));
    l.label_at = LabelAt::kEnd;
    c.lines.push_back(std::move(l));
  }

  // Ridge points: every slope meets every roof; the lowest slope's are labelled.
  const roofline::Line& lowest = *std::min_element(memory.begin(), memory.end(), by_value);
  for (const roofline::Line& k : compute) {
    for (const roofline::Line& m : memory) {
      ChartPoint p;
      p.x = roofline::ridge_point(k.value, m.value);
      p.y = k.value;
      p.color = color_of(k.ceiling);
      p.hollow = true;
      p.radius = 3.5;
      p.css_class = "ridge";
      p.legend = "ridge point (labelled on the " + lowest.label + " slope)";  // one legend entry for all
      if (&m == &lowest) p.label = format_plain(p.x, 3) + " FLOP/B";
      c.points.push_back(std::move(p));
    }
  }
  for (const RooflinePoint& rp : points) {
    ChartPoint p;
    p.x = rp.intensity;
    p.y = rp.flops;
    p.label = rp.name;
    p.color = rp.color;
    p.radius = 4.5;
    p.css_class = "kernel";
    p.label_bold = true;
    c.points.push_back(std::move(p));
  }
  return c;
}

void write_roofline_svg(const MachineProfile& profile, std::ostream& out, std::span<const RooflinePoint> points) {
  write_svg(roofline_chart(profile, points), out);
}

}  // namespace gpuscope::render
