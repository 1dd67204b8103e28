// docs/metrics.md's tables of gpuscope kernels' metric sets are generated from
// src/core/kernel_metric_sets.cpp; this test fails when they drift apart.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/kernel_metric_sets.hpp"
#include "render/report_render.hpp"

namespace gpuscope::core::kernels {
namespace {

std::string generated() {
  std::ostringstream out;
  for (const MetricSet& s : metric_sets()) {
    render::render(metric_set_report(s), render::Format::kMarkdown, out);
    out << "\n";
  }
  return out.str();
}

TEST(KernelMetricDocs, MetricsMdHoldsTheGeneratedTables) {
  std::ifstream in(std::string(GPUSCOPE_SOURCE_DIR) + "/docs/metrics.md");
  ASSERT_TRUE(in) << "docs/metrics.md not found";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const std::string begin = "<!-- BEGIN kernel metric sets";
  const std::string end = "<!-- END kernel metric sets -->";
  const auto b = doc.find(begin);
  ASSERT_NE(b, std::string::npos) << "no '" << begin << "' marker in docs/metrics.md";
  const auto body = doc.find('\n', b) + 1;
  const auto e = doc.find(end, body);
  ASSERT_NE(e, std::string::npos) << "no '" << end << "' marker in docs/metrics.md";
  EXPECT_EQ(doc.substr(body, e - body), generated())
      << "docs/metrics.md is out of date: replace the text between the markers with every "
         "kernels::metric_set_report() rendered as markdown, each followed by a blank line";
}

TEST(KernelMetricDocs, SetReportShape) {
  const Report r = metric_set_report(*find_metric_set("quick"));
  EXPECT_EQ(r.name, "metric_set_quick");
  ASSERT_EQ(r.columns.size(), 5u);
  EXPECT_EQ(r.rows.size(), 6u);
  EXPECT_EQ(std::get<std::string>(r.rows[1][0]), "dram__bytes_read.sum");
  EXPECT_EQ(std::get<std::string>(r.rows[1][1]), "bytes");
  EXPECT_EQ(std::get<std::string>(r.rows[1][4]), "DRAM Read");  // the header in kernels' table
  // Every metric of every set has a short header, none the raw metric name.
  for (const MetricSet& s : metric_sets())
    for (const MetricInfo& m : s.metrics) EXPECT_NE(metric_header(m.name), m.name) << m.name;
  EXPECT_EQ(metric_header("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"), "Pipe FMA Cyc");
  EXPECT_EQ(metric_header("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"), "Stall barrier");
  EXPECT_EQ(metric_header("unknown__metric.sum"), "unknown__metric.sum");
}

}  // namespace
}  // namespace gpuscope::core::kernels
