// The sweep chart (render/bench_sweep_svg.hpp via cli/bench_chart.hpp) from the committed
// results tests/data/bench-copy-sweep.json.
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "analyze/bench/bench_analysis.hpp"
#include "cli/bench_chart.hpp"
#include "render/bench_sweep_svg.hpp"
#include "store/bench_result_json.hpp"

namespace gpuscope::cli {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(BenchChart, SweepSvgFromCommittedResults) {
  const BenchRun run = store::read_bench_run(std::string(GPUSCOPE_SOURCE_DIR) + "/tests/data/bench-copy-sweep.json");
  const std::vector<analyze::SweepAnalysis> sweeps = analyze::analyze_sweeps(run);
  const SweepChartBuild b = sweep_chart_input(run, sweeps);
  EXPECT_EQ(b.left_out, 0);
  ASSERT_EQ(b.input.series.size(), 2u);
  EXPECT_EQ(b.input.y_unit, "B/s");
  EXPECT_EQ(b.input.series[0].label, "copy grid_stride_vec4 f32 cold");
  EXPECT_EQ(b.input.series[0].ceiling_label, "DRAM copy");

  std::ostringstream svg;
  render::write_bench_sweep_svg(b.input, svg);
  const std::string s = svg.str();
  EXPECT_EQ(s.rfind("<?xml", 0), 0u);
  EXPECT_NE(s.find("</svg>"), std::string::npos);
  EXPECT_EQ(count(s, "id=\"ceiling-dram_copy\""), 1u);  // shared by both series
  EXPECT_EQ(count(s, "id=\"series-0\""), 1u);
  EXPECT_EQ(count(s, "id=\"series-1\""), 1u);
  EXPECT_EQ(count(s, "class=\"point at-90\""), 2u);  // one 90 % marker per series
  EXPECT_EQ(count(s, "class=\"point\""), 12u);       // the other 6 sizes of each
  EXPECT_NE(s.find("DRAM copy 3.01 TB/s (measured)"), std::string::npos);
  EXPECT_NE(s.find("copy memcpy f32 cold"), std::string::npos);  // legend
}

TEST(BenchChart, NothingToDraw) {
  render::SweepChartInput in;
  in.series.push_back(render::SweepChartSeries{});
  EXPECT_THROW((void)render::bench_sweep_chart(in), std::invalid_argument);
}

}  // namespace
}  // namespace gpuscope::cli
