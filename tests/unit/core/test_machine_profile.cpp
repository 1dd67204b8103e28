// The ceiling catalog: every name the header lists, in its order, with consistent units.
#include "core/machine_profile.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace gpuscope {
namespace {

// The list in machine_profile.hpp's comment, in the order `gpuscope peak` prints.
const std::vector<std::string> kHeaderNames{
    "dram_read",  "dram_write",  "dram_copy",      "l2_read",           "shared_memory", "fp64_fma",     "fp32_fma",
    "fp16_fma",   "bf16_fma",    "int32_imad",     "sfu_expf",          "tensor_fp16",   "tensor_bf16",  "tensor_tf32",
    "tensor_fp8", "tensor_int8", "h2d_pinned",     "d2h_pinned",        "h2d_pageable",  "d2h_pageable", "bidir_pinned",
    "p2p",        "launch_rate", "launch_latency", "graph_kernel_cost", "stream_sync"};

TEST(CeilingCatalog, HoldsTheHeaderListInOrder) {
  std::vector<std::string> names;
  for (const CeilingInfo& c : ceiling_catalog()) names.emplace_back(c.name);
  EXPECT_EQ(names, kHeaderNames);
}

TEST(CeilingCatalog, UnitsMatchKinds) {
  for (const CeilingInfo& c : ceiling_catalog()) {
    SCOPED_TRACE(std::string(c.name));
    switch (c.kind) {
      case CeilingKind::kMemory:
      case CeilingKind::kTransfer:
        EXPECT_EQ(c.unit, "B/s");
        break;
      case CeilingKind::kCompute:
        EXPECT_TRUE(c.unit == "FLOP/s" || c.unit == "OP/s");
        break;
      case CeilingKind::kLatency:
        EXPECT_TRUE(c.unit == "launch/s" || c.unit == "s");
        break;
    }
    // Integer and SFU rates are OP/s, floating-point rates FLOP/s.
    const bool integer = c.name.find("int") != std::string_view::npos || c.name == "sfu_expf";
    if (c.kind == CeilingKind::kCompute) EXPECT_EQ(c.unit, integer ? "OP/s" : "FLOP/s");
  }
  EXPECT_EQ(find_ceiling_info("launch_rate")->unit, "launch/s");
  EXPECT_EQ(find_ceiling_info("stream_sync")->unit, "s");
}

TEST(CeilingCatalog, EveryEntryIsDescribedInOneSentence) {
  std::set<std::string_view> labels;
  for (const CeilingInfo& c : ceiling_catalog()) {
    SCOPED_TRACE(std::string(c.name));
    EXPECT_FALSE(c.label.empty());
    EXPECT_TRUE(labels.insert(c.label).second) << "label used twice";
    ASSERT_GT(c.description.size(), 40u);
    EXPECT_EQ(c.description.back(), '.');
    EXPECT_EQ(c.description.find(". "), std::string_view::npos) << "more than one sentence";
  }
  // The counting rule that makes copy bandwidth comparable: read + write bytes.
  EXPECT_NE(find_ceiling_info("dram_copy")->description.find("read + bytes written"), std::string_view::npos);
  EXPECT_NE(find_ceiling_info("fp32_fma")->description.find("2 FLOP"), std::string_view::npos);
}

TEST(CeilingCatalog, QuickSetHoldsWhatPeakQuickPromises) {
  std::set<std::string_view> quick;
  for (const CeilingInfo& c : ceiling_catalog())
    if (c.quick) quick.insert(c.name);
  for (const char* n : {"dram_copy", "l2_read", "fp32_fma", "tensor_bf16", "h2d_pinned", "d2h_pinned", "launch_rate"})
    EXPECT_TRUE(quick.count(n)) << n;
  // The expensive ones stay out of --quick.
  for (const char* n : {"fp64_fma", "tensor_fp8", "tensor_int8", "h2d_pageable", "p2p"})
    EXPECT_FALSE(quick.count(n)) << n;
}

TEST(CeilingCatalog, FindsByName) {
  ASSERT_NE(find_ceiling_info("tensor_bf16"), nullptr);
  EXPECT_EQ(find_ceiling_info("tensor_bf16")->kind, CeilingKind::kCompute);
  EXPECT_EQ(find_ceiling_info("tensor_bf16")->label, "BF16 tensor");
  EXPECT_EQ(find_ceiling_info("dram"), nullptr);
  EXPECT_EQ(find_ceiling_info(""), nullptr);
}

TEST(MachineProfile, PercentOfTheoreticalAndFind) {
  Ceiling c;
  c.measured = 90;
  EXPECT_TRUE(std::isnan(c.pct_of_theoretical()));
  c.theoretical = 100;
  EXPECT_DOUBLE_EQ(c.pct_of_theoretical(), 90.0);
  c.theoretical = 0;
  EXPECT_TRUE(std::isnan(c.pct_of_theoretical()));
  MachineProfile p;
  p.ceilings.push_back(Ceiling{.name = "dram_copy", .measured = 1.0});
  EXPECT_NE(p.find("dram_copy"), nullptr);
  EXPECT_EQ(p.find("l2_read"), nullptr);
}

TEST(MachineProfile, SlowestLinkIsAmongTheNamedGpusOnly) {
  MachineProfile p;
  p.peer_links = {{0, 1, "GPU-a", "GPU-b", 300e9, true},
                  {1, 0, "GPU-b", "GPU-a", 290e9, true},
                  {0, 2, "GPU-a", "GPU-c", 20e9, true},  // GPU-c is not in the job
                  {1, 2, "GPU-b", "", 10e9, true}};      // an unknown end never matches
  const std::vector<std::string> job{"GPU-a", "GPU-b"};
  const PeerLink* l = p.slowest_link(job);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->src, 1);
  EXPECT_EQ(l->dst, 0);
  EXPECT_DOUBLE_EQ(l->bytes_per_s, 290e9);
  const std::vector<std::string> alone{"GPU-a"};
  EXPECT_EQ(p.slowest_link(alone), nullptr);
}

}  // namespace
}  // namespace gpuscope
