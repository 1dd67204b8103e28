// MetricCatalog: the CUPTI profiler host API without a GPU (chip GH100).
#include <gtest/gtest.h>

#include <algorithm>

#include "collect/metric_catalog.hpp"

namespace gpuscope::collect {
namespace {

TEST(MetricCatalog, KnowsNsightComputeNamesOfGH100) {
  const MetricCatalog c("GH100");
  EXPECT_TRUE(c.is_valid("dram__bytes_read.sum"));
  EXPECT_TRUE(c.is_valid("sm__warps_active.avg.pct_of_peak_sustained_active"));
  EXPECT_TRUE(c.is_valid("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"));
  EXPECT_FALSE(c.is_valid("dram__byte_read.sum"));
  EXPECT_FALSE(c.is_valid("dram__bytes_read.nonsense"));
}

TEST(MetricCatalog, ClosestNamesLeadWithTheIntendedOne) {
  const MetricCatalog c("GH100");
  const auto close = c.closest("dram__byte_read.sum", 3);
  ASSERT_FALSE(close.empty());
  EXPECT_EQ(close.front(), "dram__bytes_read.sum");
}

TEST(MetricCatalog, DescribeFiltersOnTheBaseNameWithUnits) {
  const MetricCatalog c("GH100");
  const auto list = c.describe("dram__bytes_read.sum");
  ASSERT_FALSE(list.empty());
  for (const auto& d : list) EXPECT_NE(d.name.find("dram__bytes_read.sum"), std::string::npos) << d.name;
  EXPECT_EQ(list.front().dim_unit, "byte");
  EXPECT_EQ(list.front().type, "counter");
}

// Pass counts measured with this API (../shared/CUPTI_NOTES.md): the quick set is one pass;
// SASS-instrumented FLOP counters cannot share a pass with hardware counters.
TEST(MetricCatalog, PassCounts) {
  const MetricCatalog c("GH100");
  const std::vector<std::string> quick = {
      "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
      "lts__t_bytes.sum",       "l1tex__t_bytes.sum",   "sm__warps_active.avg.pct_of_peak_sustained_active"};
  EXPECT_EQ(c.passes(quick), 1u);
  auto with_flops = quick;
  with_flops.push_back("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
  EXPECT_EQ(c.passes(with_flops), 2u);
}

TEST(MetricCatalog, UnknownChipNamesTheSupportedOnes) {
  try {
    const MetricCatalog c("NOTACHIP");
    FAIL() << "no error";
  } catch (const MetricCatalogError& e) {
    EXPECT_NE(std::string(e.what()).find("GH100"), std::string::npos) << e.what();
  }
}

TEST(EditDistance, HandComputed) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("same", "same"), 0u);
}

}  // namespace
}  // namespace gpuscope::collect
