// gpuscope kernels' metric sets: definitions are complete and consistent.
#include "core/kernel_metric_sets.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

namespace gpuscope::core::kernels {
namespace {

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(KernelMetricSets, NamesAndOrder) {
  std::vector<std::string> names;
  for (const MetricSet& s : metric_sets()) names.emplace_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"quick", "roofline", "sol", "memory", "occupancy", "compute", "warps",
                                             "detailed"}));
  EXPECT_EQ(find_metric_set("roofline")->name, "roofline");
  EXPECT_EQ(find_metric_set("nope"), nullptr);
  EXPECT_EQ(find_metric_set("Quick"), nullptr);  // exact, case-sensitive
}

TEST(KernelMetricSets, NoDuplicatesAndEveryMetricDescribed) {
  for (const MetricSet& s : metric_sets()) {
    SCOPED_TRACE(std::string(s.name));
    EXPECT_FALSE(s.summary.empty());
    std::set<std::string_view> seen;
    for (const MetricInfo& m : s.metrics) {
      SCOPED_TRACE(std::string(m.name));
      EXPECT_TRUE(seen.insert(m.name).second) << "duplicate";
      EXPECT_FALSE(m.unit.empty());
      EXPECT_FALSE(m.description.empty());
      EXPECT_FALSE(m.source.empty());
      EXPECT_NE(m.name.find("__"), std::string_view::npos);  // unit__counter, Nsight Compute style
      // A rollup is always given, except for Nsight Compute's derived ratios named *_pct.
      EXPECT_TRUE(m.name.find('.') != std::string_view::npos || m.name.ends_with("_pct"));
      EXPECT_EQ(m.description.back(), '.');
    }
    EXPECT_EQ(set_metric_names(s).size(), s.metrics.size());
  }
}

TEST(KernelMetricSets, QuickIsTheSixOnePassMetrics) {
  const auto quick = set_metric_names(*find_metric_set("quick"));
  EXPECT_EQ(quick, (std::vector<std::string>{"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
                                             "lts__t_bytes.sum", "l1tex__t_bytes.sum",
                                             "sm__warps_active.avg.pct_of_peak_sustained_active"}));
}

TEST(KernelMetricSets, RooflineIncludesQuickAndFlopCounters) {
  const auto quick = set_metric_names(*find_metric_set("quick"));
  const auto roofline = set_metric_names(*find_metric_set("roofline"));
  for (const std::string& m : quick) EXPECT_TRUE(contains(roofline, m)) << m;
  for (const char* op : {"ffma", "fadd", "fmul", "dfma", "dadd", "dmul", "hfma", "hadd", "hmul"})
    EXPECT_TRUE(contains(roofline, std::string("smsp__sass_thread_inst_executed_op_") + op + "_pred_on.sum")) << op;
  EXPECT_TRUE(contains(roofline, "sm__inst_executed_pipe_tensor.sum"));
  EXPECT_TRUE(contains(roofline, "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum"));
  EXPECT_TRUE(contains(roofline, "sm__ops_path_tensor_src_fp8.sum"));
}

TEST(KernelMetricSets, EverySetHasTheDuration) {
  for (const MetricSet& s : metric_sets())
    EXPECT_TRUE(contains(set_metric_names(s), "gpu__time_duration.sum")) << s.name;
}

TEST(KernelMetricSets, FindMetricInfo) {
  const MetricInfo* m = find_metric_info("dram__bytes_read.sum");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->unit, "bytes");
  EXPECT_EQ(find_metric_info("lts__t_sector_hit_rate.pct")->unit, "%");
  EXPECT_EQ(find_metric_info("dram__bytes_read"), nullptr);
  // The same metric in two sets carries one description.
  const MetricSet* quick = find_metric_set("quick");
  const MetricSet* memory = find_metric_set("memory");
  for (const MetricInfo& a : quick->metrics)
    for (const MetricInfo& b : memory->metrics)
      if (a.name == b.name) {
        EXPECT_EQ(a.description, b.description);
      }
}

}  // namespace
}  // namespace gpuscope::core::kernels
