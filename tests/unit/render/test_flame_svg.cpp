// The report page's flame graph of the Python stacks sampled while the GPU idled
// (render/flame_svg.hpp): merged by frame text, widths proportional to the idle time, the
// section only on a page that has such stacks.
#include "render/flame_svg.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "render/html_report.hpp"

namespace gpuscope::render {
namespace {

std::vector<core::PageIdleStack> stacks() {
  // Thread 7: 6 ms in load (called from <module>), 2 ms in step; thread 8: 2 ms with no frame.
  return {
      {{"thread 7", "train.py:57 <module>", "data.py:12 load"}, 6e6},
      {{"thread 7", "train.py:57 <module>", "train.py:30 step"}, 2e6},
      {{"thread 8", "(no Python frame)"}, 2e6},
  };
}

// The width of the box whose tooltip starts with `frame`.
double width_of(const std::string& svg, const std::string& frame) {
  const std::size_t at = svg.find("<title>" + frame + ":");
  if (at == std::string::npos) return -1;
  std::smatch m;
  const std::string rest = svg.substr(at);
  if (!std::regex_search(rest, m, std::regex("width=\"([0-9.]+)\""))) return -1;
  return std::stod(m[1]);
}

TEST(FlameSvg, MergesStacksAndScalesWidthsToTheIdleTime) {
  std::ostringstream out;
  write_flame_svg(stacks(), 20e6, out);  // 10 ms of the window's 20 ms idle time were sampled
  const std::string svg = out.str();
  ASSERT_EQ(svg.rfind("<svg", 0), 0U) << svg;
  // One box per distinct frame path: 2 threads, <module>, load, step, (no Python frame).
  std::size_t rects = 0;
  for (std::size_t at = svg.find("<rect "); at != std::string::npos; at = svg.find("<rect ", at + 1)) ++rects;
  EXPECT_EQ(rects, 6U);
  const double plot = 1080;  // px from x 10 to 1090
  EXPECT_NEAR(width_of(svg, "thread 7"), plot * 8 / 20, 0.01);
  EXPECT_NEAR(width_of(svg, "train.py:57 &lt;module&gt;"), plot * 8 / 20, 0.01);
  EXPECT_NEAR(width_of(svg, "data.py:12 load"), plot * 6 / 20, 0.01);
  EXPECT_NEAR(width_of(svg, "train.py:30 step"), plot * 2 / 20, 0.01);
  EXPECT_NE(svg.find("<title>data.py:12 load: 6.000 ms of GPU idle time (30.0 %)</title>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("the share of the GPU idle time (20.000 ms)"), std::string::npos);
  // One block per thread: thread 8 starts at the left edge below thread 7's three rows.
  EXPECT_NE(svg.find("<title>thread 8: 2.000 ms of GPU idle time (10.0 %)</title><rect x=\"10.00\" y=\"94.0\""),
            std::string::npos)
      << svg;
}

TEST(FlameSvg, NarrowFramesAreCountedNotDrawn) {
  std::vector<core::PageIdleStack> s = stacks();
  s.push_back({{"thread 7", "train.py:57 <module>", "tiny.py:1 blip"}, 1.0});  // 1 ns of 10 ms
  std::ostringstream out;
  write_flame_svg(s, 0, out);  // 0: the stacks' own sum
  EXPECT_EQ(out.str().find("tiny.py"), std::string::npos);
  EXPECT_NE(out.str().find("1 frames narrower than 0.5 px not drawn"), std::string::npos);
}

TEST(FlameSvg, TheSectionOnlyWithStacks) {
  core::ReportPage page;
  std::ostringstream without;
  write_html_report(page, without);
  EXPECT_EQ(without.str().find("id=\"python\""), std::string::npos);
  EXPECT_EQ(without.str().find("@@PYTHON"), std::string::npos);
  page.python_idle = stacks();
  page.python_idle_ns = 20e6;
  std::ostringstream with;
  write_html_report(page, with);
  EXPECT_NE(with.str().find("<section id=\"python\"><h2>Where Python was while the GPU idled</h2>"), std::string::npos);
  EXPECT_NE(with.str().find("<a href=\"#python\">"), std::string::npos);
  EXPECT_NE(with.str().find("data.py:12 load"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::render
