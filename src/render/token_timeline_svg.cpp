#include "render/token_timeline_svg.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "render/svg_chart.hpp"

namespace gpuscope::render {
namespace {

// Geometry of one chart (px; the SVG scales with its viewBox).
constexpr double kWidth = 1100, kHeight = 100;
constexpr double kPlotX0 = 12, kPlotX1 = 1076;
constexpr double kBarY = 24, kBarH = 32, kBusyInset = 5;
constexpr double kAxisY = kBarY + kBarH + 2;
constexpr double kMinOutlinedPx = 3;  // narrower steps get no separating outline
constexpr double kCharPx = 7.4;       // average advance at 12 px

// Colours: decode in the page's kernel blue, the prefill violet (the page's memset colour) and
// hatched, stand-outs in its data-loss red.
constexpr const char* kDecodeBusy = "#3b6fd8";
constexpr const char* kDecodeWall = "#d3dcec";
constexpr const char* kPrefillBusy = "#8b5cc7";
constexpr const char* kPrefillStripe = "#d2bff0";
constexpr const char* kPrefillWall = "#ece4f6";
constexpr const char* kStandOut = "#b3261e";

std::string num(double v) { return fmt::format("{:.2f}", v); }

std::string percent_text(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? fmt::format("{:.1f} %", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "- %";
}

// Tick spacing: 1, 2 or 5 x 10^k ms, about `want` ticks over [0, span_ms].
double tick_step(double span_ms, int want) {
  const double raw = span_ms / want;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

std::string step_name(const core::TokenStep& s) {
  return s.prefill ? "prefill (step 0)" : "decode step " + std::to_string(s.index);
}

std::string step_title(const core::TokenGeneration& g, const core::TokenStep& s,
                       const std::vector<std::string>& causes) {
  std::string t = step_name(s) + ": wall " + ms_text(s.wall_ns) + " (" + ms_text(s.start_ns) + " to " +
                  ms_text(s.start_ns + s.wall_ns) + (s.prefill ? ", TTFT" : ", its TPOT interval") + "); GPU busy " +
                  ms_text(s.gpu_busy_ns) + " (" + percent_text(s.gpu_busy_ns, s.wall_ns) + ")";
  if (s.cpu_window_ns > 0) {
    t += "; CPU " + ms_text(s.cpu_window_ns) + " (call to next call):";
    bool any = false;
    for (std::size_t k = 0; k < s.cpu_ns.size() && k < causes.size(); ++k) {
      if (s.cpu_ns[k] <= 0) continue;
      t += std::string(any ? "," : "") + " " + causes[k] + " " + ms_text(s.cpu_ns[k]);
      any = true;
    }
    if (!any) t += " nothing recorded";
  }
  if (s.stands_out) {
    if (!s.prefill && g.tpot_median_ns)
      t += fmt::format("; stands out: {:.1f} x the median decode step ({})",
                       static_cast<double>(s.wall_ns) / static_cast<double>(*g.tpot_median_ns),
                       ms_text(*g.tpot_median_ns));
    else
      t += "; stands out: over 1.5 x the median TTFT of the other generations";
  }
  return t;
}

// The plain-words line beside a generation's chart.
std::string generation_words(const core::TokenGeneration& g) {
  std::string w = "TTFT " + (g.ttft_ns ? ms_text(*g.ttft_ns) : std::string("- (the prefill is outside the capture)"));
  if (g.tpot_mean_ns)
    w += ", TPOT mean " + ms_text(*g.tpot_mean_ns) + " (median " + ms_text(g.tpot_median_ns.value_or(0)) + ")";
  w += ", " + std::to_string(g.tokens) + " tokens per sequence";
  if (g.batch) w += " (batch " + std::to_string(*g.batch) + ")";
  if (!g.steps.empty()) w += ", wall " + ms_text(g.steps.back().start_ns + g.steps.back().wall_ns);
  w += ". ";
  std::vector<const core::TokenStep*> out;
  for (const core::TokenStep& s : g.steps)
    if (s.stands_out) out.push_back(&s);
  if (out.empty()) {
    w += "No step stands out (none over 1.5 x the median decode step).";
  } else {
    constexpr std::size_t kListed = 8;
    w += "Stand out (over 1.5 x the median of their kind): ";
    for (std::size_t i = 0; i < out.size() && i < kListed; ++i)
      w += std::string(i == 0 ? "" : ", ") +
           (out[i]->prefill ? "the prefill" : "step " + std::to_string(out[i]->index)) + " (" +
           ms_text(out[i]->wall_ns) + ")";
    if (out.size() > kListed) w += " and " + std::to_string(out.size() - kListed) + " more";
    w += ".";
  }
  if (g.cold_tpot_ns && g.warm_tpot_ns)
    w += " Cold generation: TPOT mean " + ms_text(*g.cold_tpot_ns) + " against " + ms_text(*g.warm_tpot_ns) +
         " for the others (median); gpuscope stats -r llm_step_sum splits each step's CPU time by cause.";
  if (g.steps_total > static_cast<std::int64_t>(g.steps.size()))
    w += " The first " + std::to_string(g.steps.size()) + " of its " + std::to_string(g.steps_total) +
         " steps are drawn.";
  return w;
}

}  // namespace

std::string ms_text(std::int64_t ns) {
  // Rounded to the µs half up in integers, so 306.5 µs reads 0.307 ms as 2.5 µs reads 0.003 ms.
  const bool negative = ns < 0;
  const std::int64_t us = ((negative ? -ns : ns) + 500) / 1000;
  return fmt::format("{}{}.{:03d} ms", negative ? "-" : "", us / 1000, us % 1000);
}

void write_token_timeline_svg(const core::TokenGeneration& g, const std::vector<std::string>& causes,
                              std::ostream& out) {
  const std::int64_t span_ns =
      g.steps.empty() ? 0 : std::max<std::int64_t>(1, g.steps.back().start_ns + g.steps.back().wall_ns);
  const double span_ms = std::max(static_cast<double>(span_ns) / 1e6, 1e-6);
  const double step_ms = tick_step(span_ms, 8);
  const double axis_ms = std::ceil(span_ms / step_ms - 1e-9) * step_ms;
  const auto x_of = [&](std::int64_t ns) {
    return kPlotX0 + (static_cast<double>(ns) / 1e6) / axis_ms * (kPlotX1 - kPlotX0);
  };
  const std::string n = std::to_string(g.number);
  const std::string hatch = "tok-prefill-" + n;

  out << "<svg class=\"token-timeline\" data-generation=\"" << n
      << "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << kWidth << ' ' << kHeight
      << "\" width=\"100%\" style=\"max-width:" << kWidth
      << "px;height:auto\" font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\" font-size=\"12\" role=\"img\">";
  out << "<title>generation " << n << ": one segment per forward step, time in ms since its start</title>";
  out << "<defs><pattern id=\"" << hatch
      << "\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect "
         "width=\"6\" "
         "height=\"6\" fill=\""
      << kPrefillBusy << "\"/><rect width=\"2.5\" height=\"6\" fill=\"" << kPrefillStripe << "\"/></pattern></defs>\n";

  // Labels above the bar: "prefill" over the prefill, "decode steps" over the first decode step.
  double label_end = 0;
  for (const core::TokenStep& s : g.steps) {
    if (!s.prefill) continue;
    out << "<text class=\"kind-label\" x=\"" << num(x_of(s.start_ns)) << "\" y=\"12\" fill=\"" << kPrefillBusy
        << "\">prefill</text>";
    label_end = x_of(s.start_ns) + 7 * kCharPx + 8;
    break;
  }
  for (const core::TokenStep& s : g.steps) {
    if (s.prefill) continue;
    std::int64_t decodes = 0;
    for (const core::TokenStep& d : g.steps) decodes += d.prefill ? 0 : 1;
    out << "<text class=\"kind-label\" x=\"" << num(std::max(x_of(s.start_ns), label_end)) << "\" y=\"12\" fill=\""
        << kDecodeBusy << "\">decode steps (" << decodes << ")</text>\n";
    break;
  }

  for (const core::TokenStep& s : g.steps) {
    const double x0 = x_of(s.start_ns), x1 = x_of(s.start_ns + s.wall_ns);
    const double w = std::max(x1 - x0, 0.5);
    const double busy_w =
        s.wall_ns > 0 ? w * std::clamp(static_cast<double>(s.gpu_busy_ns) / static_cast<double>(s.wall_ns), 0.0, 1.0)
                      : 0.0;
    out << "<g class=\"token-step" << (s.stands_out ? " stands-out" : "") << "\" data-kind=\""
        << (s.prefill ? "prefill" : "decode") << "\" data-step=\"" << s.index << "\"><title>"
        << xml_escape(step_title(g, s, causes)) << "</title>";
    out << "<rect class=\"step-wall\" x=\"" << num(x0) << "\" y=\"" << num(kBarY) << "\" width=\"" << num(w)
        << "\" height=\"" << num(kBarH) << "\" fill=\"" << (s.prefill ? kPrefillWall : kDecodeWall) << '"';
    if (s.stands_out)
      out << " stroke=\"" << kStandOut << "\" stroke-width=\"2\"";
    else if (w >= kMinOutlinedPx)
      out << " stroke=\"#ffffff\" stroke-width=\"1\"";
    out << "/>";
    out << "<rect class=\"step-busy\" x=\"" << num(x0) << "\" y=\"" << num(kBarY + kBusyInset) << "\" width=\""
        << num(busy_w) << "\" height=\"" << num(kBarH - 2 * kBusyInset) << "\" fill=\""
        << (s.prefill ? "url(#" + hatch + ")" : std::string(kDecodeBusy)) << "\"/>";
    if (s.stands_out)
      out << "<rect class=\"stand-out-mark\" x=\"" << num(x0) << "\" y=\"" << num(kBarY - 7) << "\" width=\""
          << num(std::max(w, 3.0)) << "\" height=\"4\" fill=\"" << kStandOut << "\"/>";
    out << "</g>\n";
  }

  // The time axis.
  out << "<g class=\"axis\" fill=\"#333333\"><line x1=\"" << num(kPlotX0) << "\" y1=\"" << num(kAxisY) << "\" x2=\""
      << num(kPlotX1) << "\" y2=\"" << num(kAxisY) << "\" stroke=\"#333333\"/>";
  const int ticks = static_cast<int>(std::llround(axis_ms / step_ms));
  for (int k = 0; k <= ticks; ++k) {
    const double v = step_ms * k;
    const double x = kPlotX0 + v / axis_ms * (kPlotX1 - kPlotX0);
    out << "<line x1=\"" << num(x) << "\" y1=\"" << num(kAxisY) << "\" x2=\"" << num(x) << "\" y2=\"" << num(kAxisY + 5)
        << "\" stroke=\"#333333\"/><text class=\"tick-label\" x=\"" << num(x) << "\" y=\"" << num(kAxisY + 17)
        << "\" text-anchor=\""
        << (k == 0       ? "start"
            : k == ticks ? "end"
                         : "middle")
        << "\">" << format_plain(v, 3) << "</text>";
  }
  out << "<text class=\"axis-title\" x=\"" << num((kPlotX0 + kPlotX1) / 2) << "\" y=\"" << num(kHeight - 4)
      << "\" text-anchor=\"middle\" fill=\"#5b6472\">time since the generation's start (ms)</text></g></svg>";
}

void write_tokens_nav(const core::TokenTimeline& tokens, std::ostream& out) {
  if (tokens.generations.empty()) return;
  out << "\n    <a href=\"#tokens\">Tokens</a>";
}

void write_tokens_section(const core::TokenTimeline& tokens, std::ostream& out) {
  if (tokens.generations.empty()) return;
  out << "\n  <section id=\"tokens\"><h2>Tokens</h2>\n"
         "<p class=\"explain\">Each generation of the trace's generate loop (as <code>gpuscope stats -r llm_sum</code> "
         "finds it), forward step by forward step: the prefill from its model call to the first token done on the "
         "GPU (TTFT), then each decode step from one token done to the next (TPOT). Inside each step, the part the "
         "GPU was busy; hover a step for its times and its CPU time by cause (as <code>stats -r llm_step_sum</code>)."
         "</p>\n<p class=\"explain\">"
      << "<span class=\"legend-swatch\" style=\"background:repeating-linear-gradient(45deg," << kPrefillBusy
      << " 0 3px," << kPrefillStripe << " 3px 5px)\"></span>prefill, GPU busy (hatched)"
      << "<span class=\"legend-swatch\" style=\"background:" << kPrefillWall << ";border:1px solid " << kPrefillBusy
      << "\"></span>prefill, GPU idle"
      << "<span class=\"legend-swatch\" style=\"background:" << kDecodeBusy << "\"></span>decode step, GPU busy"
      << "<span class=\"legend-swatch\" style=\"background:" << kDecodeWall << "\"></span>decode step, GPU idle"
      << "<span class=\"legend-swatch\" style=\"background:#fff;border:2px solid " << kStandOut
      << "\"></span>stands out (red outline and mark: over 1.5 x the median of its kind)</p>\n";
  for (const core::TokenGeneration& g : tokens.generations) {
    out << "<h3>Generation " << g.number << " (PID " << g.pid;
    if (!g.model.empty()) out << ", model " << xml_escape(g.model);
    out << ")" << (g.cold_tpot_ns ? ", cold" : "")
        << "</h3>\n<div class=\"token-generation\" style=\"display:flex;flex-wrap:wrap;gap:6px 20px;align-items:"
           "flex-start\"><div style=\"flex:1 1 720px;max-width:1100px\">";
    write_token_timeline_svg(g, tokens.causes, out);
    out << "</div><p class=\"token-words\" style=\"flex:0 1 320px;margin:4px 0\">" << xml_escape(generation_words(g))
        << "</p></div>\n";
  }
  const auto drawn = static_cast<std::int64_t>(tokens.generations.size());
  if (tokens.generations_total > drawn)
    out << "<p class=\"explain\">" << tokens.generations_total - drawn << " more generation(s) left out: the first "
        << drawn << " of " << tokens.generations_total
        << " are drawn; <code>gpuscope stats -r llm_sum</code> lists every one.</p>\n";
  out << "</section>";
}

}  // namespace gpuscope::render
