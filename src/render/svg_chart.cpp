#include "render/svg_chart.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <optional>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "core/units.hpp"
#include "core/utf8.hpp"
#include "render/report_render.hpp"

namespace gpuscope::render {
namespace {

constexpr double kFont = 12.0;  // labels, ticks, legend (px)
constexpr double kTitleFont = 17.0;
constexpr double kSubtitleFont = 12.0;
constexpr double kAxisTitleFont = 13.0;
constexpr double kCharWidth = 0.62;  // average advance of DejaVu Sans / Arial, in em
constexpr double kLegendRow = 18.0;

struct Vec {
  double x = 0, y = 0;
};
Vec operator+(Vec a, Vec b) { return {a.x + b.x, a.y + b.y}; }
Vec operator-(Vec a, Vec b) { return {a.x - b.x, a.y - b.y}; }
Vec operator*(Vec a, double s) { return {a.x * s, a.y * s}; }

struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  [[nodiscard]] bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
  [[nodiscard]] bool inside(const Box& o) const { return x0 >= o.x0 && x1 <= o.x1 && y0 >= o.y0 && y1 <= o.y1; }
};

struct Segment {
  Vec a, b;
};

std::string num(double v) { return fmt::format("{:.1f}", v); }

double text_width(std::string_view s, double font) {
  std::size_t points = 0;
  for (char c : s) points += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return static_cast<double>(points) * font * kCharWidth;
}

bool usable(double v) { return std::isfinite(v) && v > 0; }

// [lo, hi] in log10, widened to whole decades (a single value gets one decade each side).
std::pair<double, double> decade_range(const ChartAxis& axis, std::vector<double> data, const char* which) {
  double lo = axis.min, hi = axis.max;
  if (!std::isnan(lo) || !std::isnan(hi)) {
    if (!usable(lo) || !usable(hi) || lo >= hi)
      throw std::invalid_argument(std::string("chart: the ") + which + " axis range must be 0 < min < max");
  } else {
    data.erase(std::remove_if(data.begin(), data.end(), [](double v) { return !usable(v); }), data.end());
    if (data.empty()) throw std::invalid_argument(std::string("chart: no positive data for the ") + which + " axis");
    const auto [mn, mx] = std::minmax_element(data.begin(), data.end());
    lo = *mn;
    hi = *mx;
  }
  double l = std::floor(std::log10(lo) + 1e-9), h = std::ceil(std::log10(hi) - 1e-9);
  if (h <= l) {
    l -= 1;
    h += 1;
  }
  return {l, h};
}

// Liang–Barsky: the part of segment s inside box b, if any.
std::optional<Segment> clip(Segment s, const Box& b) {
  double t0 = 0, t1 = 1;
  const double dx = s.b.x - s.a.x, dy = s.b.y - s.a.y;
  const std::array<double, 4> p{-dx, dx, -dy, dy};
  const std::array<double, 4> q{s.a.x - b.x0, b.x1 - s.a.x, s.a.y - b.y0, b.y1 - s.a.y};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return std::nullopt;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0)
      t0 = std::max(t0, t);
    else
      t1 = std::min(t1, t);
    if (t0 > t1) return std::nullopt;
  }
  return Segment{s.a + Vec{dx, dy} * t0, s.a + Vec{dx, dy} * t1};
}

std::string tick_text(const ChartAxis& axis, double value) {
  return axis.si_prefix ? units::si(value, axis.unit, 3) : format_plain(value, 3);
}

std::string axis_title(const ChartAxis& axis) {
  if (axis.unit.empty()) return axis.title;
  return axis.title.empty() ? axis.unit : axis.title + " (" + axis.unit + ")";
}

// Keeps only what an SVG id may hold.
std::string safe_id(std::string_view id) {
  std::string out;
  for (char c : id) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  if (!out.empty() && !std::isalpha(static_cast<unsigned char>(out[0]))) out.insert(0, "id-");
  return out;
}

class Writer {
 public:
  Writer(const Chart& c, std::ostream& out) : m_c(c), m_out(out) {}

  void write() {
    layout();
    m_out << R"(<?xml version="1.0" encoding="UTF-8"?>)" << '\n'
          << R"(<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width=")" << m_c.width << R"(" height=")"
          << m_c.height << R"(" viewBox="0 0 )" << m_c.width << ' ' << m_c.height
          << R"(" font-family="DejaVu Sans, Verdana, Arial, sans-serif" font-size=")" << kFont << R"(">)" << '\n';
    if (!m_c.title.empty()) m_out << "<title>" << xml_escape(m_c.title) << "</title>\n";
    m_out << R"(<rect x="0" y="0" width=")" << m_c.width << R"(" height=")" << m_c.height << R"(" fill="#ffffff"/>)"
          << '\n';
    m_out << R"(<defs><clipPath id="plot-area"><rect x=")" << num(m_plot.x0) << R"(" y=")" << num(m_plot.y0)
          << R"(" width=")" << num(m_plot.x1 - m_plot.x0) << R"(" height=")" << num(m_plot.y1 - m_plot.y0)
          << R"("/></clipPath></defs>)" << '\n';
    titles();
    axes();
    lines();
    legend();  // before labels, so labels keep out of it
    line_labels();
    points();
    m_out << "</svg>\n";
  }

 private:
  [[nodiscard]] double px(double x) const {
    return m_plot.x0 + (std::log10(x) - m_lx0) / (m_lx1 - m_lx0) * (m_plot.x1 - m_plot.x0);
  }
  [[nodiscard]] double py(double y) const {
    return m_plot.y1 - (std::log10(y) - m_ly0) / (m_ly1 - m_ly0) * (m_plot.y1 - m_plot.y0);
  }

  void layout() {
    std::vector<double> xs, ys;
    for (const ChartLine& l : m_c.lines)
      for (const ChartXY& p : l.points) {
        xs.push_back(p.x);
        ys.push_back(p.y);
      }
    for (const ChartPoint& p : m_c.points) {
      xs.push_back(p.x);
      ys.push_back(p.y);
    }
    std::tie(m_lx0, m_lx1) = decade_range(m_c.x, xs, "x");
    std::tie(m_ly0, m_ly1) = decade_range(m_c.y, ys, "y");
    m_label_step = m_ly1 - m_ly0 > 10 ? 2 : 1;

    double tick_w = 0;
    for (double e = m_ly0; e <= m_ly1 + 1e-9; e += 1)
      tick_w = std::max(tick_w, text_width(tick_text(m_c.y, std::pow(10.0, e)), kFont));
    const double top = 14 + (m_c.title.empty() ? 0 : 24) + (m_c.subtitle.empty() ? 0 : 18);
    const double left = 12 + kAxisTitleFont + 10 + tick_w + 10;
    // The last x tick label is centred on the right edge: leave room for half of it.
    const double right = std::max(24.0, text_width(tick_text(m_c.x, std::pow(10.0, m_lx1)), kFont) / 2 + 8);
    const double bottom = 10 + kFont + 10 + kAxisTitleFont + 12;
    m_plot = Box{left, top, m_c.width - right, m_c.height - bottom};
  }

  void text(Vec at, std::string_view s, const char* cls, const char* anchor, double font = kFont,
            const char* extra = "") {
    m_out << "<text class=\"" << cls << "\" x=\"" << num(at.x) << "\" y=\"" << num(at.y) << "\" text-anchor=\""
          << anchor << '"';
    if (font != kFont) m_out << " font-size=\"" << font << '"';
    m_out << extra << '>' << xml_escape(s) << "</text>\n";
  }

  void titles() {
    const double mid = m_c.width / 2.0;
    double y = 14;
    if (!m_c.title.empty()) {
      y += 18;
      text({mid, y}, m_c.title, "title", "middle", kTitleFont, " font-weight=\"bold\"");
    }
    if (!m_c.subtitle.empty()) {
      y += 18;
      text({mid, y}, m_c.subtitle, "subtitle", "middle", kSubtitleFont, " fill=\"#555555\"");
    }
  }

  void axes() {
    m_out << "<g class=\"axes\" stroke-width=\"1\">\n";
    // Grid and ticks: major at every decade, minor at 2..9 × each decade.
    for (double e = m_lx0; e <= m_lx1 + 1e-9; e += 1) {
      const double x = px(std::pow(10.0, e));
      m_out << "<line class=\"grid\" x1=\"" << num(x) << "\" y1=\"" << num(m_plot.y0) << "\" x2=\"" << num(x)
            << "\" y2=\"" << num(m_plot.y1) << "\" stroke=\"#e3e3e3\"/>\n";
      m_out << "<line class=\"tick\" x1=\"" << num(x) << "\" y1=\"" << num(m_plot.y1) << "\" x2=\"" << num(x)
            << "\" y2=\"" << num(m_plot.y1 + 6) << "\" stroke=\"#333333\"/>\n";
      text({x, m_plot.y1 + 8 + kFont}, tick_text(m_c.x, std::pow(10.0, e)), "tick-label", "middle");
      for (int m = 2; m <= 9 && e < m_lx1 - 1e-9; ++m) {
        const double xm = px(m * std::pow(10.0, e));
        m_out << "<line class=\"minor-tick\" x1=\"" << num(xm) << "\" y1=\"" << num(m_plot.y1) << "\" x2=\"" << num(xm)
              << "\" y2=\"" << num(m_plot.y1 + 3) << "\" stroke=\"#333333\"/>\n";
      }
    }
    int i = 0;
    for (double e = m_ly0; e <= m_ly1 + 1e-9; e += 1, ++i) {
      const double y = py(std::pow(10.0, e));
      m_out << "<line class=\"grid\" x1=\"" << num(m_plot.x0) << "\" y1=\"" << num(y) << "\" x2=\"" << num(m_plot.x1)
            << "\" y2=\"" << num(y) << "\" stroke=\"#e3e3e3\"/>\n";
      m_out << "<line class=\"tick\" x1=\"" << num(m_plot.x0 - 6) << "\" y1=\"" << num(y) << "\" x2=\""
            << num(m_plot.x0) << "\" y2=\"" << num(y) << "\" stroke=\"#333333\"/>\n";
      if (i % m_label_step == 0) text({m_plot.x0 - 9, y + 4}, tick_text(m_c.y, std::pow(10.0, e)), "tick-label", "end");
      for (int m = 2; m <= 9 && e < m_ly1 - 1e-9; ++m) {
        const double ym = py(m * std::pow(10.0, e));
        m_out << "<line class=\"minor-tick\" x1=\"" << num(m_plot.x0 - 3) << "\" y1=\"" << num(ym) << "\" x2=\""
              << num(m_plot.x0) << "\" y2=\"" << num(ym) << "\" stroke=\"#333333\"/>\n";
      }
    }
    m_out << "<rect class=\"frame\" x=\"" << num(m_plot.x0) << "\" y=\"" << num(m_plot.y0) << "\" width=\""
          << num(m_plot.x1 - m_plot.x0) << "\" height=\"" << num(m_plot.y1 - m_plot.y0)
          << "\" fill=\"none\" stroke=\"#333333\"/>\n";
    m_out << "</g>\n";
    text({(m_plot.x0 + m_plot.x1) / 2, static_cast<double>(m_c.height) - 12}, axis_title(m_c.x), "axis-title", "middle",
         kAxisTitleFont);
    const Vec yt{12 + kAxisTitleFont, (m_plot.y0 + m_plot.y1) / 2};
    text(yt, axis_title(m_c.y), "axis-title", "middle", kAxisTitleFont,
         fmt::format(" transform=\"rotate(-90 {} {})\"", num(yt.x), num(yt.y)).c_str());
  }

  // The visible pixel segments of a line.
  std::vector<Segment> visible(const ChartLine& l) const {
    std::vector<Segment> out;
    for (std::size_t i = 0; i + 1 < l.points.size(); ++i) {
      const ChartXY& a = l.points[i];
      const ChartXY& b = l.points[i + 1];
      if (!usable(a.x) || !usable(a.y) || !usable(b.x) || !usable(b.y)) continue;
      if (auto s = clip(Segment{{px(a.x), py(a.y)}, {px(b.x), py(b.y)}}, m_plot)) out.push_back(*s);
    }
    return out;
  }

  void lines() {
    m_out << "<g class=\"lines\" clip-path=\"url(#plot-area)\" fill=\"none\">\n";
    for (const ChartLine& l : m_c.lines) {
      const std::vector<Segment> segs = visible(l);
      m_segments.insert(m_segments.end(), segs.begin(), segs.end());
      std::string d;
      Vec last{NAN, NAN};
      for (const Segment& s : segs) {
        if (std::hypot(s.a.x - last.x, s.a.y - last.y) > 0.05 || std::isnan(last.x))
          d += "M" + num(s.a.x) + " " + num(s.a.y) + " ";
        d += "L" + num(s.b.x) + " " + num(s.b.y) + " ";
        last = s.b;
      }
      if (!d.empty()) d.pop_back();
      m_out << "<path class=\"line" << (l.css_class.empty() ? "" : " " + xml_escape(l.css_class)) << '"';
      if (!l.id.empty()) m_out << " id=\"" << safe_id(l.id) << '"';
      m_out << " d=\"" << (d.empty() ? "M0 0" : d) << "\" stroke=\"" << xml_escape(l.color) << "\" stroke-width=\""
            << l.width << '"' << (l.dashed ? " stroke-dasharray=\"7 4\"" : "")
            << (d.empty() ? " visibility=\"hidden\"" : "") << "/>\n";
    }
    m_out << "</g>\n";
  }

  void line_labels() {
    for (const ChartLine& l : m_c.lines) {
      if (l.label.empty()) continue;
      const std::vector<Segment> segs = visible(l);
      if (segs.empty()) continue;
      const Segment& s = l.label_at == LabelAt::kStart ? segs.front() : segs.back();
      const double len = std::hypot(s.b.x - s.a.x, s.b.y - s.a.y);
      if (len < 1) continue;
      const Vec u = (s.b - s.a) * (1 / len);
      Vec n{u.y, -u.x};  // perpendicular, pointing up on screen
      if (n.y > 0) n = n * -1;
      const double w = text_width(l.label, kFont);
      const bool start = l.label_at == LabelAt::kStart;
      const Vec base = (start ? s.a + u * 8 : s.b - u * 8) + n * 5;
      const Vec from = start ? base : base - u * w;
      const Vec to = from + u * w;
      std::array<Vec, 4> corners{from, to, from + n * kFont, to + n * kFont};
      Box box{1e9, 1e9, -1e9, -1e9};
      for (const Vec& c : corners) {
        box.x0 = std::min(box.x0, c.x);
        box.y0 = std::min(box.y0, c.y);
        box.x1 = std::max(box.x1, c.x);
        box.y1 = std::max(box.y1, c.y);
      }
      m_placed.push_back(box);
      const double angle = std::atan2(u.y, u.x) * 180.0 / std::numbers::pi;
      text(base, l.label, "line-label", start ? "start" : "end", kFont,
           fmt::format(" fill=\"{}\" transform=\"rotate({:.2f} {} {})\"", xml_escape(l.color), angle, num(base.x),
                       num(base.y))
               .c_str());
    }
  }

  // How badly a label box would sit: outside the plot, on another label, across a line.
  double cost(const Box& b) const {
    double c = b.inside(m_plot) ? 0 : 100;
    for (const Box& p : m_placed) c += b.overlaps(p) ? 10 : 0;
    for (const Segment& s : m_segments) c += clip(s, b) ? 1 : 0;
    return c;
  }

  void points() {
    m_out << "<g class=\"points\">\n";
    for (const ChartPoint& p : m_c.points) {
      if (!usable(p.x) || !usable(p.y)) continue;
      const Vec c{px(p.x), py(p.y)};
      if (c.x < m_plot.x0 - 0.5 || c.x > m_plot.x1 + 0.5 || c.y < m_plot.y0 - 0.5 || c.y > m_plot.y1 + 0.5) continue;
      m_out << "<circle class=\"point" << (p.css_class.empty() ? "" : " " + xml_escape(p.css_class)) << "\" cx=\""
            << num(c.x) << "\" cy=\"" << num(c.y) << "\" r=\"" << p.radius << '"'
            << (p.hollow ? " fill=\"#ffffff\" stroke=\"" + xml_escape(p.color) + "\" stroke-width=\"1.5\""
                         : " fill=\"" + xml_escape(p.color) + "\"");
      for (const auto& [name, value] : p.data) m_out << " data-" << name << "=\"" << xml_escape(value) << '"';
      m_out << "/>\n";
      m_placed.push_back(Box{c.x - p.radius, c.y - p.radius, c.x + p.radius, c.y + p.radius});
    }
    for (const ChartPoint& p : m_c.points) {
      if (p.label.empty() || !usable(p.x) || !usable(p.y)) continue;
      const Vec c{px(p.x), py(p.y)};
      if (c.x < m_plot.x0 - 0.5 || c.x > m_plot.x1 + 0.5 || c.y < m_plot.y0 - 0.5 || c.y > m_plot.y1 + 0.5) continue;
      const double w = text_width(p.label, kFont), r = p.radius, h = kFont;
      // Candidate baselines and anchors: right, below right, above right, left, below left, above left.
      struct Place {
        Vec at;
        bool end;
      };
      const std::array<Place, 6> places{
          Place{{c.x + r + 4, c.y + 4}, false},     Place{{c.x + r + 2, c.y + r + h}, false},
          Place{{c.x + r + 2, c.y - r - 3}, false}, Place{{c.x - r - 4, c.y + 4}, true},
          Place{{c.x - r - 2, c.y + r + h}, true},  Place{{c.x - r - 2, c.y - r - 3}, true}};
      std::size_t best = 0;
      double best_cost = 1e300;
      Box best_box;
      for (std::size_t i = 0; i < places.size(); ++i) {
        const Place& pl = places[i];
        const Box b{pl.end ? pl.at.x - w : pl.at.x, pl.at.y - h + 2, pl.end ? pl.at.x : pl.at.x + w, pl.at.y + 3};
        const double k = cost(b);
        if (k < best_cost) {
          best = i;
          best_cost = k;
          best_box = b;
        }
        if (k == 0) break;
      }
      m_placed.push_back(best_box);
      text(places[best].at, p.label, "point-label", places[best].end ? "end" : "start", kFont,
           p.label_bold ? " font-weight=\"bold\"" : "");
    }
    m_out << "</g>\n";
  }

  void legend() {
    struct Entry {
      std::string text;
      const ChartLine* line = nullptr;
      const ChartPoint* point = nullptr;
    };
    std::vector<Entry> entries;
    std::set<std::string> seen;
    for (const ChartLine& l : m_c.lines)
      if (!l.legend.empty()) entries.push_back({l.legend, &l, nullptr});
    for (const ChartPoint& p : m_c.points)
      if (!p.legend.empty() && seen.insert(p.legend).second) entries.push_back({p.legend, nullptr, &p});
    if (entries.empty() || m_c.legend == LegendAt::kNone) return;
    double w = 0;
    for (const Entry& e : entries) w = std::max(w, text_width(e.text, kFont));
    w += 44;
    const double h = static_cast<double>(entries.size()) * kLegendRow + 10;
    const bool left = m_c.legend == LegendAt::kTopLeft || m_c.legend == LegendAt::kBottomLeft;
    const bool top = m_c.legend == LegendAt::kTopLeft || m_c.legend == LegendAt::kTopRight;
    const double x = left ? m_plot.x0 + 10 : m_plot.x1 - 10 - w;
    const double y = top ? m_plot.y0 + 10 : m_plot.y1 - 10 - h;
    m_placed.push_back(Box{x, y, x + w, y + h});
    m_out << "<g class=\"legend\">\n<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(w)
          << "\" height=\"" << num(h) << "\" fill=\"#ffffff\" fill-opacity=\"0.9\" stroke=\"#999999\"/>\n";
    double row = y + 5 + kLegendRow / 2;
    for (const Entry& e : entries) {
      if (e.line) {
        m_out << "<line x1=\"" << num(x + 8) << "\" y1=\"" << num(row) << "\" x2=\"" << num(x + 32) << "\" y2=\""
              << num(row) << "\" stroke=\"" << xml_escape(e.line->color) << "\" stroke-width=\"" << e.line->width << '"'
              << (e.line->dashed ? " stroke-dasharray=\"7 4\"" : "") << "/>\n";
      } else {
        const ChartPoint& p = *e.point;
        m_out << "<circle cx=\"" << num(x + 20) << "\" cy=\"" << num(row) << "\" r=\"" << p.radius << '"'
              << (p.hollow ? " fill=\"#ffffff\" stroke=\"" + xml_escape(p.color) + "\" stroke-width=\"1.5\""
                           : " fill=\"" + xml_escape(p.color) + "\"")
              << "/>\n";
      }
      text({x + 38, row + 4}, e.text, "legend-label", "start");
      row += kLegendRow;
    }
    m_out << "</g>\n";
  }

  const Chart& m_c;
  std::ostream& m_out;
  Box m_plot;
  double m_lx0 = 0, m_lx1 = 1, m_ly0 = 0, m_ly1 = 1;
  int m_label_step = 1;
  std::vector<Box> m_placed;        // labels, markers and the legend already drawn
  std::vector<Segment> m_segments;  // visible line segments
};

}  // namespace

void write_svg(const Chart& chart, std::ostream& out) { Writer(chart, out).write(); }

std::string format_plain(double value, int significant) {
  if (std::isnan(value)) return "-";
  if (value == 0) return "0";
  const double a = std::fabs(value);
  if (a < 1e-4 || a >= 1e15) return fmt::format("{:.{}g}", value, significant);
  const int mag = static_cast<int>(std::floor(std::log10(a)));
  const int decimals = std::max(0, significant - 1 - mag);
  std::string s = fmt::format("{:.{}f}", a, decimals);
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  const std::size_t dot = s.find('.');
  const std::string int_part = s.substr(0, dot);
  const std::string grouped = group_thousands(std::stoll(int_part));
  return (value < 0 ? "-" : "") + grouped + (dot == std::string::npos ? "" : s.substr(dot));
}

std::string xml_escape(std::string_view raw) {
  // The one place SVG and HTML text is written: valid UTF-8 first, then only XML 1.0 characters.
  std::string repaired;
  std::string_view text = raw;
  if (!core::valid_utf8(raw)) text = repaired = core::repair_utf8(raw);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
          out += ' ';  // XML 1.0 allows no C0 control character but tab, LF and CR
        } else if (c == '\xC2' && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
          out += ' ';  // a C1 control (U+0080..U+009F): allowed by XML 1.0 but not by HTML
          ++i;
        } else if (c == '\xEF' && i + 2 < text.size() && text[i + 1] == '\xBF' &&
                   (text[i + 2] == '\xBE' || text[i + 2] == '\xBF')) {
          out += "\xEF\xBF\xBD";  // U+FFFE and U+FFFF are not XML characters either
          i += 2;
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace gpuscope::render
