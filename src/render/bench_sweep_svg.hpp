// bench_sweep_svg: a size sweep of `gpuscope bench` as an SVG chart (on
// render/svg_chart.hpp) — achieved throughput (B/s or FLOP/s, y, log) against the
// operator's size (x, log), one line with markers per series (variant × dtype × mode),
// and each series' bounding ceiling as a dashed horizontal line labelled with its value
// and whether it was measured by `gpuscope peak` or is the theoretical value.
//
// Input is plain data (SweepChartSeries), so render/ needs nothing of analyze/: the CLI
// fills it from analyze::SweepAnalysis (cli/bench_chart.hpp). A series' size_at_90 point
// (where it reaches 90 % of its final throughput) is drawn hollow and labelled "90 %".
// Series that share a ceiling (same name and value) share one line.
//
// SVG ids and classes (for tests and stylesheets): series lines are
// <path id="series-N" class="line series">, ceiling lines <path id="ceiling-NAME"
// class="line ceiling">, the 90 % markers <circle class="point at-90">.
//
// Errors: std::invalid_argument when no series has a point with a positive, finite
// size and throughput (nothing to draw).
#pragma once

#include <limits>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "render/svg_chart.hpp"

namespace gpuscope::render {

struct SweepChartSeries {
  std::string label;            // legend: "copy grid_stride_vec4 f32 cold"
  std::vector<ChartXY> points;  // (size, throughput), sorted by size
  double size_at_90 = std::numeric_limits<double>::quiet_NaN();
  std::string ceiling;                                              // catalog name ("dram_copy"), "" when none
  std::string ceiling_label;                                        // "DRAM copy"
  double ceiling_value = std::numeric_limits<double>::quiet_NaN();  // in the throughput unit
  std::string ceiling_source;                                       // "measured" or "theoretical"
};

struct SweepChartInput {
  std::string title;     // "copy: achieved bandwidth against size"
  std::string subtitle;  // device, date
  std::string x_title = "Size";
  std::string x_unit;  // "elements"
  std::string y_title = "Achieved throughput";
  std::string y_unit;  // "B/s" or "FLOP/s"
  std::vector<SweepChartSeries> series;
};

/// The sweep as a generic Chart.
[[nodiscard]] Chart bench_sweep_chart(const SweepChartInput& input);

/// bench_sweep_chart() written as SVG.
void write_bench_sweep_svg(const SweepChartInput& input, std::ostream& out);

}  // namespace gpuscope::render
