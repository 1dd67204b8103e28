#include "render/flame_svg.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "render/svg_chart.hpp"

namespace gpuscope::render {
namespace {

constexpr double kWidth = 1100;
constexpr double kX0 = 10, kX1 = 1090;
constexpr double kRowH = 18, kTop = 22;
constexpr double kCharPx = 6.6;  // average advance at 11 px
constexpr int kMaxDepth = 64;    // deeper frames are left out (counted)

struct Node {
  std::string name;
  double ns = 0;
  std::map<std::string, std::unique_ptr<Node>> children;
};

// The file part of "file.py:LINE function" ("" when the text has no ':'), for the colour.
std::string file_of(const std::string& frame) {
  const std::size_t colon = frame.find(':');
  return colon == std::string::npos ? std::string() : frame.substr(0, colon);
}

// A warm hue per file (stable: a hash of the name); a thread's root box grey.
std::string colour(const std::string& frame, bool thread_root) {
  if (thread_root) return "#c9ced6";
  const std::size_t h = std::hash<std::string>{}(file_of(frame));
  const int hue = 10 + static_cast<int>(h % 45);  // red-orange-yellow
  const int light = 62 + static_cast<int>((h / 45) % 14);
  return fmt::format("hsl({},75%,{}%)", hue, light);
}

std::string ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

}  // namespace

void write_flame_svg(const std::vector<core::PageIdleStack>& stacks, double total_ns, std::ostream& out) {
  if (stacks.empty()) return;
  Node root;
  int depth_cut = 0;
  for (const core::PageIdleStack& s : stacks) {
    if (s.idle_ns <= 0) continue;
    root.ns += s.idle_ns;
    Node* at = &root;
    int depth = 0;
    for (const std::string& f : s.frames) {
      if (depth++ == kMaxDepth) {
        ++depth_cut;
        break;
      }
      auto& child = at->children[f];
      if (!child) {
        child = std::make_unique<Node>();
        child->name = f;
      }
      child->ns += s.idle_ns;
      at = child.get();
    }
  }
  if (total_ns <= 0)  // the most sampled thread's time
    for (const auto& [name, t] : root.children) total_ns = std::max(total_ns, t->ns);
  if (total_ns <= 0) return;
  const double scale = (kX1 - kX0) / total_ns;

  struct Box {
    const Node* node;
    double x;
    int row;
    bool thread_root = false;
  };
  std::vector<Box> boxes;
  int hidden = 0;
  // Each thread (a root's child) is its own icicle, scaled to the window's idle time, below the
  // previous one: its rows are from `row` down; returns the deepest row used.
  std::function<int(const Node&, double, int)> place = [&](const Node& n, double x, int row) {
    std::vector<const Node*> kids;
    for (const auto& [name, c] : n.children) kids.push_back(c.get());
    std::sort(kids.begin(), kids.end(),
              [](const Node* a, const Node* b) { return a->ns != b->ns ? a->ns > b->ns : a->name < b->name; });
    int deepest = row - 1;
    for (const Node* k : kids) {
      const double w = k->ns * scale;
      if (w < kMinFlamePx) {
        ++hidden;
        continue;
      }
      boxes.push_back({k, x, row});
      deepest = std::max({deepest, row, place(*k, x, row + 1)});
      x += w;
    }
    return deepest;
  };
  std::vector<const Node*> threads;
  for (const auto& [name, c] : root.children) threads.push_back(c.get());
  std::sort(threads.begin(), threads.end(),
            [](const Node* a, const Node* b) { return a->ns != b->ns ? a->ns > b->ns : a->name < b->name; });
  int row = 0;
  for (const Node* t : threads) {
    boxes.push_back({t, kX0, row, true});
    row = place(*t, kX0, row + 1) + 2;  // a blank row between threads
  }
  const int max_depth = row - 2;
  const double height = kTop + (max_depth + 1) * kRowH + 24;
  out << fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {:.0f}\" width=\"100%\" role=\"img\" "
      "aria-label=\"Python stacks sampled while the GPU idled\" font-family=\"sans-serif\" font-size=\"11\">\n",
      kWidth, height);
  out << fmt::format(
      "<text x=\"{}\" y=\"14\" font-size=\"12\">Width: the share of the GPU idle time ({}) charged to each "
      "frame; one block per thread, callers above callees; hover a box for its time.</text>\n",
      kX0, ms(total_ns));
  for (const Box& b : boxes) {
    const double w = b.node->ns * scale;
    const double y = kTop + b.row * kRowH;
    const std::string tip = b.node->name + ": " + ms(b.node->ns) + " of GPU idle time (" +
                            fmt::format("{:.1f} %", 100.0 * b.node->ns / total_ns) + ")";
    out << fmt::format(
        "<g><title>{}</title><rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" "
        "fill=\"{}\" stroke=\"#fff\" stroke-width=\"0.5\"/>",
        xml_escape(tip), b.x, y, w, kRowH - 1, colour(b.node->name, b.thread_root));
    const auto fit = static_cast<std::size_t>((w - 6) / kCharPx);
    if (fit >= 4) {
      std::string label = b.node->name;
      if (label.size() > fit) {
        std::size_t cut = fit - 1;
        while (cut > 0 && (static_cast<unsigned char>(label[cut]) & 0xC0) == 0x80) --cut;  // a whole code point
        label = label.substr(0, cut) + "\u2026";
      }
      out << fmt::format("<text x=\"{:.2f}\" y=\"{:.1f}\">{}</text>", b.x + 3, y + kRowH - 5, xml_escape(label));
    }
    out << "</g>\n";
  }
  std::string caption;
  if (hidden > 0) caption += fmt::format("{} frames narrower than {} px not drawn", hidden, kMinFlamePx);
  if (depth_cut > 0)
    caption += fmt::format("{}{} stacks cut at {} frames", caption.empty() ? "" : "; ", depth_cut, kMaxDepth);
  if (!caption.empty())
    out << fmt::format("<text x=\"{}\" y=\"{:.0f}\" fill=\"#555\">{}</text>\n", kX0, height - 6, xml_escape(caption));
  out << "</svg>\n";
}

}  // namespace gpuscope::render

namespace gpuscope::render {

void write_python_nav(const core::ReportPage& page, std::ostream& out) {
  if (page.python_idle.empty()) return;
  out << "\n    <a href=\"#python\">Python while idle</a>";
}

void write_python_section(const core::ReportPage& page, std::ostream& out) {
  if (page.python_idle.empty()) return;
  out << "\n  <section id=\"python\"><h2>Where Python was while the GPU idled</h2>\n"
         "<p class=\"explain\">The Python stacks sampled (<code>gpuscope trace --python-sampling</code>) while the "
         "GPU sat idle in the judged window: each idle gap's time is split among the samples one thread took in it "
         "(as <code>gpuscope stats -r gpu_idle_py</code>). A box's width is the idle time charged to its frame and "
         "the frames it called; the widest boxes at the bottom of a tower are the lines the GPU waited on.</p>\n"
         "<div class=\"flame-chart\">";
  write_flame_svg(page.python_idle, page.python_idle_ns, out);
  out << "</div></section>";
}

}  // namespace gpuscope::render
