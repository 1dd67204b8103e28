#include "cli/bench_chart.hpp"

#include <algorithm>

namespace gpuscope::cli {

SweepChartBuild sweep_chart_input(const BenchRun& run, std::span<const analyze::SweepAnalysis> sweeps) {
  SweepChartBuild b;
  if (sweeps.empty()) return b;
  const std::string metric = sweeps.front().metric;
  std::vector<std::string> ops;
  std::string source;
  for (const analyze::SweepAnalysis& s : sweeps) {
    if (s.metric != metric) {
      ++b.left_out;
      continue;
    }
    if (std::find(ops.begin(), ops.end(), s.op) == ops.end()) ops.push_back(s.op);
    render::SweepChartSeries series;
    series.label = s.op + " " + s.variant + " " + s.dtype + " " + s.mode;
    for (const analyze::SweepPoint& p : s.points) series.points.push_back({p.size, p.throughput});
    series.size_at_90 = s.size_at_90;
    series.ceiling = s.ceiling;
    const CeilingInfo* info = find_ceiling_info(s.ceiling);
    series.ceiling_label = info ? std::string(info->label) : s.ceiling;
    series.ceiling_value = s.ceiling_value;
    series.ceiling_source = s.ceiling_source;
    if (source.empty()) source = s.ceiling_source;
    b.input.series.push_back(std::move(series));
    if (b.input.y_unit.empty()) b.input.y_unit = s.unit;
  }
  std::string names;
  for (const std::string& op : ops) names += (names.empty() ? "" : ", ") + op;
  b.input.title = names + ": achieved " + (metric == "bandwidth" ? "bandwidth" : "compute rate") + " against size";
  b.input.subtitle =
      run.device.name + " · " + run.measured_at + " · ceilings: " + (source.empty() ? std::string("none") : source);
  b.input.y_title = metric == "bandwidth" ? "Achieved bandwidth" : "Achieved compute rate";
  b.input.x_title = "Size (elements; gemm: M; softmax: columns; linear_small: batch)";
  return b;
}

}  // namespace gpuscope::cli
