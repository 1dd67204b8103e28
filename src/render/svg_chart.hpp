// svg_chart: a small log-log chart writer (hand-written SVG 1.1, no library), used for the
// roofline (render/roofline_svg.hpp), `gpuscope bench` size sweeps (achieved GB/s against
// size with the measured ceiling as a line) and kernels placed on the roofline.
//
// What it draws: a title and a subtitle; log10 axes whose range is whole decades, a major
// tick, grid line and label at every decade and minor ticks at 2..9 × each decade; axis
// titles "Title (unit)"; polylines (solid or dashed) with an optional label written along
// their first or last visible segment, rotated to it and just above it; point markers
// (filled or hollow circles) with a label beside them; a legend in a corner of the plot.
// Labels of points are moved to the first of a few candidate places around the marker
// that overlaps no label placed before (line labels are placed first, then points in
// order); one that fits nowhere keeps its first place.
//
// Coordinates are data values; values <= 0 or not finite are skipped (a line breaks
// there). Lines are clipped to the plot area. Text is XML-escaped; the output is a
// complete, well-formed XML document (UTF-8) with a viewBox, so it scales.
//
// Element names a test or a stylesheet can rely on: every line is a <path> with
// class="line" (plus ChartLine::css_class) and id=ChartLine::id when set; every point is a
// <circle> with class="point"; line labels are <text class="line-label">, point labels
// <text class="point-label">, tick labels <text class="tick-label">.
//
// Errors: std::invalid_argument when an axis range cannot be found (no positive data and
// no explicit range) or an explicit range is not 0 < min < max.
#pragma once

#include <limits>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuscope::render {

struct ChartAxis {
  std::string title;  // "Arithmetic intensity"
  std::string unit;   // "FLOP/B"; shown as "title (unit)"
  bool si_prefix =
      false;  // tick labels "10 GFLOP/s" (true, core/units.hpp's units::si) or plain "0.01", "1,000" (false)
  double min = std::numeric_limits<double>::quiet_NaN();  // NaN: from the data
  double max = std::numeric_limits<double>::quiet_NaN();  // both are widened to whole decades
};

enum class LabelAt { kStart, kEnd };

struct ChartXY {
  double x = 0;
  double y = 0;
};

struct ChartLine {
  std::vector<ChartXY> points;  // data coordinates
  std::string color = "#1f77b4";
  double width = 2.0;
  bool dashed = false;
  std::string id;         // SVG id (letters, digits, '-', '_'); empty: none
  std::string css_class;  // added after "line"
  std::string legend;     // legend entry; empty: not in the legend
  std::string label;      // written along the line; empty: none
  LabelAt label_at = LabelAt::kStart;
};

struct ChartPoint {
  double x = 0;
  double y = 0;
  std::string label;  // beside the marker; empty: none
  std::string color = "#000000";
  double radius = 4.0;
  bool hollow = false;    // a ring instead of a disc
  std::string css_class;  // added after "point"
  std::string legend;     // legend entry; empty: not in the legend (one entry per distinct text)
  bool label_bold = false;
  // Written on the marker as data-NAME="VALUE" attributes (NAME: letters, digits, '-'), so
  // scripts and tests read the plotted values back exactly; empty: none.
  std::vector<std::pair<std::string, std::string>> data;
};

enum class LegendAt { kNone, kTopLeft, kTopRight, kBottomLeft, kBottomRight };

struct Chart {
  std::string title;
  std::string subtitle;
  ChartAxis x;
  ChartAxis y;
  std::vector<ChartLine> lines;
  std::vector<ChartPoint> points;
  LegendAt legend = LegendAt::kTopLeft;
  int width = 960;  // px
  int height = 640;
};

/// Writes the chart as a standalone SVG document.
void write_svg(const Chart& chart, std::ostream& out);

/// Numbers with units (labels of lines and ticks) are formatted by core/units.hpp (units::si).
///
/// `value` with `significant` digits, plain (no prefix, no exponent for 1e-4..1e15),
/// thousands grouped, trailing zeros dropped: 0.01 → "0.01", 1000 → "1,000", 295.4 → "295".
[[nodiscard]] std::string format_plain(double value, int significant = 3);

/// & < > " ' → entities; bytes that are not UTF-8 → U+FFFD (core/utf8.hpp); control characters
/// other than tab, LF, CR (not allowed in XML 1.0), DEL and the C1 controls → space; U+FFFE,
/// U+FFFF → U+FFFD.
/// Any input gives well-formed XML text (element text or attribute value).
[[nodiscard]] std::string xml_escape(std::string_view text);

}  // namespace gpuscope::render
