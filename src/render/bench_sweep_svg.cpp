#include "render/bench_sweep_svg.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/units.hpp"

namespace gpuscope::render {
namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

bool positive(double v) { return std::isfinite(v) && v > 0; }

}  // namespace

Chart bench_sweep_chart(const SweepChartInput& in) {
  double x_lo = INFINITY, x_hi = 0, y_lo = INFINITY, y_hi = 0;
  for (const SweepChartSeries& s : in.series)
    for (const ChartXY& p : s.points)
      if (positive(p.x) && positive(p.y)) {
        x_lo = std::min(x_lo, p.x);
        x_hi = std::max(x_hi, p.x);
        y_lo = std::min(y_lo, p.y);
        y_hi = std::max(y_hi, p.y);
      }
  if (!(x_hi > 0)) throw std::invalid_argument("nothing to draw: no series has a point with a known throughput");
  for (const SweepChartSeries& s : in.series)
    if (positive(s.ceiling_value)) {
      y_hi = std::max(y_hi, s.ceiling_value);
      y_lo = std::min(y_lo, s.ceiling_value);
    }

  Chart chart;
  chart.title = in.title;
  chart.subtitle = in.subtitle;
  chart.x = ChartAxis{in.x_title, in.x_unit, false, x_lo, x_hi == x_lo ? x_lo * 10 : x_hi};
  chart.y = ChartAxis{in.y_title, in.y_unit, true, y_lo, y_hi * 1.5};
  chart.legend = LegendAt::kTopLeft;

  // Ceilings first, so series draw over them; one line per distinct (name, value).
  std::vector<std::pair<std::string, double>> drawn;
  for (const SweepChartSeries& s : in.series) {
    if (!positive(s.ceiling_value)) continue;
    const std::pair<std::string, double> key{s.ceiling, s.ceiling_value};
    if (std::find(drawn.begin(), drawn.end(), key) != drawn.end()) continue;
    drawn.push_back(key);
    ChartLine l;
    l.points = {{chart.x.min, s.ceiling_value}, {chart.x.max, s.ceiling_value}};
    l.color = "#444444";
    l.width = 1.5;
    l.dashed = true;
    l.id = "ceiling-" + (s.ceiling.empty() ? std::string("unknown") : s.ceiling);
    l.css_class = "ceiling";
    l.label = (s.ceiling_label.empty() ? s.ceiling : s.ceiling_label) + " " + units::si(s.ceiling_value, in.y_unit) +
              " (" + (s.ceiling_source.empty() ? std::string("unknown source") : s.ceiling_source) + ")";
    l.label_at = LabelAt::kEnd;
    chart.lines.push_back(std::move(l));
  }

  for (std::size_t i = 0; i < in.series.size(); ++i) {
    const SweepChartSeries& s = in.series[i];
    const std::string color = kPalette[i % std::size(kPalette)];
    ChartLine l;
    l.points = s.points;
    l.color = color;
    l.id = "series-" + std::to_string(i);
    l.css_class = "series";
    l.legend = s.label;
    chart.lines.push_back(std::move(l));
    for (const ChartXY& p : s.points) {
      ChartPoint m;
      m.x = p.x;
      m.y = p.y;
      m.color = color;
      m.radius = 3.0;
      if (p.x == s.size_at_90) {
        m.hollow = true;
        m.radius = 6.0;
        m.css_class = "at-90";
        m.label = "90 %";
      }
      chart.points.push_back(std::move(m));
    }
  }
  return chart;
}

void write_bench_sweep_svg(const SweepChartInput& input, std::ostream& out) {
  write_svg(bench_sweep_chart(input), out);
}

}  // namespace gpuscope::render
