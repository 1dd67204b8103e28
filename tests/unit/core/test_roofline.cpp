// Roofline arithmetic on hand-computed cases.
#include "core/roofline.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gpuscope::core::roofline {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

MachineProfile profile(std::initializer_list<std::pair<const char*, double>> ceilings) {
  MachineProfile p;
  for (const auto& [name, value] : ceilings) {
    Ceiling c;
    c.name = name;
    c.measured = value;
    p.ceilings.push_back(c);
  }
  return p;
}

TEST(Roofline, RidgePoint) {
  EXPECT_DOUBLE_EQ(ridge_point(1000, 100), 10.0);
  // H100-like: 66 TFLOP/s FP32 over 3.01 TB/s DRAM copy = 21.93 FLOP/B.
  EXPECT_NEAR(ridge_point(66e12, 3.01e12), 21.927, 1e-3);
  // 790 TFLOP/s BF16 tensor over 3.01 TB/s = 262.5 FLOP/B.
  EXPECT_NEAR(ridge_point(790e12, 3.01e12), 262.458, 1e-3);
}

TEST(Roofline, RidgePointOfUnusableInputsIsNaN) {
  EXPECT_TRUE(std::isnan(ridge_point(0, 100)));
  EXPECT_TRUE(std::isnan(ridge_point(1000, 0)));
  EXPECT_TRUE(std::isnan(ridge_point(-1, 100)));
  EXPECT_TRUE(std::isnan(ridge_point(kNaN, 100)));
  EXPECT_TRUE(std::isnan(ridge_point(1000, kNaN)));
}

TEST(Roofline, AttainableOnBothSidesOfTheRidge) {
  // compute 1000 FLOP/s, bandwidth 100 B/s → ridge at 10 FLOP/B.
  EXPECT_DOUBLE_EQ(attainable(5, 1000, 100), 500.0);    // memory side: 5 × 100
  EXPECT_DOUBLE_EQ(attainable(0.25, 1000, 100), 25.0);  // far left
  EXPECT_DOUBLE_EQ(attainable(10, 1000, 100), 1000.0);  // at the ridge both agree
  EXPECT_DOUBLE_EQ(attainable(20, 1000, 100), 1000.0);  // compute side: flat
  EXPECT_DOUBLE_EQ(attainable(1e9, 1000, 100), 1000.0);
  EXPECT_DOUBLE_EQ(attainable(kInf, 1000, 100), 1000.0);  // no bytes at all
}

TEST(Roofline, AttainableEdgeCases) {
  EXPECT_EQ(attainable(0, 1000, 100), 0.0);  // no arithmetic: 0 FLOP/s
  EXPECT_TRUE(std::isnan(attainable(-1, 1000, 100)));
  EXPECT_TRUE(std::isnan(attainable(kNaN, 1000, 100)));
  EXPECT_TRUE(std::isnan(attainable(5, 0, 100)));
  EXPECT_TRUE(std::isnan(attainable(5, 1000, 0)));
  EXPECT_TRUE(std::isnan(attainable(5, kNaN, 100)));
  EXPECT_TRUE(std::isnan(attainable(5, 1000, kNaN)));
  EXPECT_TRUE(std::isnan(attainable(0, 1000, kNaN)));  // a missing ceiling wins over intensity 0
}

TEST(Roofline, ChartLinesInOrderOnlyMeasured) {
  const MachineProfile p = profile({{"tensor_fp8", 1.35e15},
                                    {"fp32_fma", 66e12},
                                    {"l2_read", 10.5e12},
                                    {"dram_copy", 3.01e12},
                                    {"shared_memory", kNaN},  // not measured: no line
                                    {"tensor_fp16", 780e12},
                                    {"tensor_bf16", 790e12},
                                    {"h2d_pinned", 53e9},  // not a roofline ceiling
                                    {"tensor_int8", 1.4e15}});
  const std::vector<Line> lines = chart_lines(p);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].ceiling, "dram_copy");
  EXPECT_EQ(lines[0].label, "DRAM copy");
  EXPECT_EQ(lines[0].kind, CeilingKind::kMemory);
  EXPECT_EQ(lines[1].ceiling, "l2_read");
  EXPECT_EQ(lines[2].ceiling, "fp32_fma");
  EXPECT_EQ(lines[2].kind, CeilingKind::kCompute);
  EXPECT_EQ(lines[3].ceiling, "tensor_bf16");  // the faster of fp16 (780) and bf16 (790)
  EXPECT_DOUBLE_EQ(lines[3].value, 790e12);
  EXPECT_EQ(lines[4].ceiling, "tensor_fp8");
}

TEST(Roofline, ChartLinesPicksFp16WhenFasterOrAlone) {
  EXPECT_EQ(chart_lines(profile({{"tensor_fp16", 800e12}, {"tensor_bf16", 790e12}}))[0].ceiling, "tensor_fp16");
  EXPECT_EQ(chart_lines(profile({{"tensor_fp16", 800e12}}))[0].ceiling, "tensor_fp16");
  EXPECT_EQ(chart_lines(profile({{"tensor_bf16", 1.0}, {"tensor_fp16", kNaN}}))[0].ceiling, "tensor_bf16");
  EXPECT_TRUE(chart_lines(MachineProfile{}).empty());
  EXPECT_TRUE(chart_lines(profile({{"dram_copy", 0.0}, {"fp32_fma", -1.0}})).empty());
}

// dram_copy 100 B/s, fp32_fma 1000 FLOP/s: ridge at 10 FLOP/B.
const MachineProfile kSmall = profile({{"dram_copy", 100}, {"fp32_fma", 1000}});

TEST(Roofline, PlaceMemoryBound) {
  // 500 FLOP over 100 B in 2 s: intensity 5, 250 FLOP/s, 50 B/s → 50 % of DRAM.
  const Placement p = place(kSmall, 500, 100, 2, "fp32_fma");
  EXPECT_EQ(p.bound, Bound::kMemory);
  EXPECT_DOUBLE_EQ(p.intensity, 5.0);
  EXPECT_DOUBLE_EQ(p.achieved_flops, 250.0);
  EXPECT_DOUBLE_EQ(p.achieved_bandwidth, 50.0);
  EXPECT_DOUBLE_EQ(p.attainable, 500.0);
  EXPECT_EQ(p.ceiling, "dram_copy");
  EXPECT_DOUBLE_EQ(p.ceiling_value, 100.0);
  EXPECT_DOUBLE_EQ(p.pct_of_ceiling, 50.0);
}

TEST(Roofline, PlaceComputeBound) {
  // 4000 FLOP over 100 B in 10 s: intensity 40, 400 FLOP/s → 40 % of FP32.
  const Placement p = place(kSmall, 4000, 100, 10, "fp32_fma");
  EXPECT_EQ(p.bound, Bound::kCompute);
  EXPECT_DOUBLE_EQ(p.intensity, 40.0);
  EXPECT_DOUBLE_EQ(p.attainable, 1000.0);
  EXPECT_EQ(p.ceiling, "fp32_fma");
  EXPECT_DOUBLE_EQ(p.pct_of_ceiling, 40.0);
  // Exactly at the ridge: compute-bound.
  EXPECT_EQ(place(kSmall, 1000, 100, 1, "fp32_fma").bound, Bound::kCompute);
}

TEST(Roofline, PlacePureCopyAndPureCompute) {
  // A copy: no FLOP, memory-bound by definition; attainable is in B/s.
  const Placement copy = place(kSmall, 0, 50, 1, "fp32_fma");
  EXPECT_EQ(copy.bound, Bound::kMemory);
  EXPECT_DOUBLE_EQ(copy.intensity, 0.0);
  EXPECT_DOUBLE_EQ(copy.attainable, 100.0);
  EXPECT_DOUBLE_EQ(copy.pct_of_ceiling, 50.0);
  // Copy needs no compute ceiling.
  EXPECT_EQ(place(kSmall, 0, 50, 1, "tensor_bf16").bound, Bound::kMemory);
  // No bytes: compute-bound, no memory ceiling needed.
  const Placement math = place(kSmall, 500, 0, 1, "fp32_fma", "l2_read");
  EXPECT_EQ(math.bound, Bound::kCompute);
  EXPECT_TRUE(std::isinf(math.intensity));
  EXPECT_DOUBLE_EQ(math.pct_of_ceiling, 50.0);
}

TEST(Roofline, PlaceWithMissingCeilingsIsUnknown) {
  const Placement p = place(kSmall, 500, 100, 2, "tensor_bf16");
  EXPECT_EQ(p.bound, Bound::kUnknown);
  EXPECT_TRUE(std::isnan(p.pct_of_ceiling));
  EXPECT_TRUE(std::isnan(p.attainable));
  EXPECT_DOUBLE_EQ(p.achieved_flops, 250.0);  // what was achieved is still known
  EXPECT_EQ(place(kSmall, 500, 100, 2, "fp32_fma", "l2_read").bound, Bound::kUnknown);
  EXPECT_EQ(place(kSmall, 0, 100, 2, "fp32_fma", "l2_read").bound, Bound::kUnknown);
  EXPECT_EQ(place(profile({{"dram_copy", kNaN}, {"fp32_fma", 1000}}), 500, 100, 2, "fp32_fma").bound, Bound::kUnknown);
}

TEST(Roofline, PlaceRejectsUnusableWork) {
  for (const auto& [flops, bytes, seconds] : std::vector<std::tuple<double, double, double>>{
           {500, 100, 0}, {500, 100, -1}, {500, 100, kNaN}, {-1, 100, 1}, {500, -1, 1}, {kNaN, 100, 1}, {0, 0, 1}}) {
    const Placement p = place(kSmall, flops, bytes, seconds, "fp32_fma");
    EXPECT_EQ(p.bound, Bound::kUnknown) << flops << " " << bytes << " " << seconds;
    EXPECT_TRUE(std::isnan(p.intensity));
    EXPECT_TRUE(std::isnan(p.pct_of_ceiling));
  }
}

}  // namespace
}  // namespace gpuscope::core::roofline
