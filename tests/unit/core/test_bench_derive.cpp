#include "core/bench_derive.hpp"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

namespace gpuscope::core {
namespace {

DeviceFacts h100() {
  DeviceFacts d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-aaaa";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.l2_bytes = 50 << 20;
  d.memory_bus_width_bits = 5120;
  d.max_sm_clock_mhz = 1980;
  d.max_mem_clock_mhz = 2619;
  return d;
}

Ceiling ceiling(std::string name, double value) {
  Ceiling c;
  c.name = std::move(name);
  c.measured = value;
  return c;
}

MachineProfile profile() {
  MachineProfile p;
  p.device = h100();
  p.ceilings = {ceiling("dram_read", 3.2e12),     ceiling("dram_write", 3.1e12),     ceiling("dram_copy", 3.0e12),
                ceiling("l2_read", 10e12),        ceiling("fp32_fma", 60e12),        ceiling("tensor_bf16", 800e12),
                ceiling("launch_rate", 250000.0), ceiling("graph_kernel_cost", 1e-6)};
  return p;
}

BenchTiming timing(std::string mode, double median_s) {
  BenchTiming t;
  t.mode = std::move(mode);
  t.median_s = median_s;
  return t;
}

TEST(BenchDerive, LargeCopyIsMemoryBoundAgainstDramCopy) {
  BenchWork w;
  w.bytes_read = w.bytes_written = 1 << 30;  // 2^28 floats in and out
  const BenchDerived d = derive(w, timing("cold", 0.75e-3), profile(), "measured");
  EXPECT_DOUBLE_EQ(d.bandwidth, 2147483648.0 / 0.75e-3);  // 2.863 TB/s
  EXPECT_DOUBLE_EQ(d.flop_rate, 0.0);
  EXPECT_DOUBLE_EQ(d.intensity, 0.0);
  EXPECT_EQ(d.ceiling, "dram_copy");
  EXPECT_DOUBLE_EQ(d.ceiling_value, 3.0e12);
  EXPECT_NEAR(d.pct_of_ceiling, 95.4437, 1e-3);
  EXPECT_EQ(d.bound, "memory");
  EXPECT_EQ(d.ceiling_source, "measured");
}

TEST(BenchDerive, GemmIsComputeBoundAgainstItsTensorCeiling) {
  BenchWork w;
  w.flops = 2.0 * 8192.0 * 8192.0 * 8192.0;  // 1.0995e12 FLOP
  w.bytes_read = 2.0 * 8192 * 8192 * 2;      // A and B in bf16
  w.bytes_written = 8192.0 * 8192 * 2;       // C
  w.compute_ceiling = "tensor_bf16";
  const BenchDerived d = derive(w, timing("cold", 1.5e-3), profile(), "measured");
  EXPECT_NEAR(d.flop_rate, 733.0e12, 0.1e12);
  EXPECT_NEAR(d.intensity, 2730.67, 0.01);  // 2 * 8192 / 6
  EXPECT_EQ(d.ceiling, "tensor_bf16");
  EXPECT_NEAR(d.pct_of_ceiling, 91.626, 1e-3);  // 1.0995e12 FLOP / 1.5 ms / 800 TFLOP/s
  EXPECT_EQ(d.bound, "compute");
}

TEST(BenchDerive, MemoryCeilingFollowsTheAccessPatternAndMode) {
  BenchWork reduce;
  reduce.bytes_read = 4.0 * (1 << 28);
  reduce.bytes_written = 4;
  EXPECT_EQ(memory_ceiling_for(reduce, "cold", 50 << 20), "dram_read");
  BenchWork fill;
  fill.bytes_written = 1 << 30;
  EXPECT_EQ(memory_ceiling_for(fill, "cold", 50 << 20), "dram_write");
  BenchWork small;
  small.bytes_read = small.bytes_written = 4 << 20;  // 8 MiB per call, fits in half of 50 MiB
  EXPECT_EQ(memory_ceiling_for(small, "hot", 50 << 20), "l2_read");
  EXPECT_EQ(memory_ceiling_for(small, "graph", 50 << 20), "l2_read");
  EXPECT_EQ(memory_ceiling_for(small, "cold", 50 << 20), "dram_copy");  // L2 flushed
  EXPECT_EQ(memory_ceiling_for(small, "hot", 0), "dram_copy");          // L2 size unknown
  const BenchDerived d = derive(small, timing("hot", 2e-6), profile(), "measured");
  EXPECT_EQ(d.ceiling, "l2_read");
  EXPECT_NEAR(d.pct_of_ceiling, 8388608.0 / 2e-6 / 10e12 * 100, 1e-9);  // 41.9 %
  // A ceiling the profile lacks falls back to dram_copy.
  MachineProfile no_l2 = profile();
  std::erase_if(no_l2.ceilings, [](const Ceiling& c) { return c.name == "l2_read"; });
  EXPECT_EQ(derive(small, timing("hot", 2e-6), no_l2, "measured").ceiling, "dram_copy");
}

TEST(BenchDerive, LatencyBoundByLaunchCostOrIdleChip) {
  BenchWork tiny;
  tiny.bytes_read = 256;
  tiny.bytes_written = 128;
  tiny.flops = 32;
  // Hot: 1 / launch_rate = 4 us; a 6 us median is within 2x of it.
  EXPECT_DOUBLE_EQ(launch_cost_s(profile(), "hot"), 4e-6);
  EXPECT_DOUBLE_EQ(launch_cost_s(profile(), "graph"), 1e-6);
  EXPECT_EQ(derive(tiny, timing("hot", 6e-6), profile(), "measured").bound, "latency");
  // Graph: 1 us launch cost; 5 us is not within 2x, but 384 B in 5 us is far below 10 % of
  // every ceiling, so still latency.
  EXPECT_EQ(derive(tiny, timing("graph", 5e-6), profile(), "measured").bound, "latency");
  // A serial <<<1,1>>> kernel over 4 MiB: long, but uses a sliver of the chip.
  BenchWork serial;
  serial.bytes_read = 8 << 20;
  serial.bytes_written = 4 << 20;
  serial.flops = 1 << 20;
  const BenchDerived d = derive(serial, timing("cold", 0.05), profile(), "measured");
  EXPECT_EQ(d.bound, "latency");
  EXPECT_EQ(d.ceiling, "dram_copy");  // the roofline ceiling stays reported
  EXPECT_NEAR(d.pct_of_ceiling, 12582912.0 / 0.05 / 3e12 * 100, 1e-12);
  // Just above 10 % of the memory ceiling: memory-bound.
  BenchWork copy;
  copy.bytes_read = copy.bytes_written = 1 << 30;
  const double t_at_11pct = 2147483648.0 / (0.11 * 3e12);
  EXPECT_EQ(derive(copy, timing("cold", t_at_11pct), profile(), "measured").bound, "memory");
  EXPECT_EQ(derive(copy, timing("cold", 2147483648.0 / (0.09 * 3e12)), profile(), "measured").bound, "latency");
}

TEST(BenchDerive, NoTimingGivesNanAndUnknownBound) {
  BenchWork w;
  w.bytes_read = 100;
  const BenchDerived d = derive(w, timing("cold", NAN), profile(), "measured");
  EXPECT_TRUE(std::isnan(d.bandwidth));
  EXPECT_TRUE(std::isnan(d.pct_of_ceiling));
  EXPECT_EQ(d.bound, "");
  MachineProfile empty;
  const BenchDerived e = derive(w, timing("cold", 1e-3), empty, "measured");
  EXPECT_DOUBLE_EQ(e.bandwidth, 1e5);
  EXPECT_EQ(e.bound, "");
  EXPECT_TRUE(std::isnan(e.pct_of_ceiling));
}

TEST(BenchDerive, TheoreticalCeilingsMatchTheDatasheet) {
  const DeviceFacts d = h100();
  // 2 × 2619 MHz × 5120 bit / 8 = 3.352 TB/s (H100 SXM datasheet: 3.35 TB/s).
  EXPECT_DOUBLE_EQ(theoretical_ceiling(d, "dram_copy", 1980), 2.0 * 2619e6 * 640);
  // 132 SMs × 256 FLOP/clock × 1980 MHz = 66.9 TFLOP/s (datasheet FP32: 67 TFLOP/s).
  EXPECT_DOUBLE_EQ(theoretical_ceiling(d, "fp32_fma", 1980), 132.0 * 256 * 1980e6);
  // 132 × 4096 × 1830 MHz = 989.4 TFLOP/s dense BF16 (datasheet: 989 TFLOP/s).
  EXPECT_NEAR(theoretical_ceiling(d, "tensor_bf16", 1830), 989.4e12, 0.1e12);
  EXPECT_DOUBLE_EQ(theoretical_ceiling(d, "shared_memory", 1980), 132.0 * 128 * 1980e6);
  EXPECT_TRUE(std::isnan(theoretical_ceiling(d, "l2_read", 1980)));
  EXPECT_TRUE(std::isnan(theoretical_ceiling(d, "launch_rate", 1980)));
  EXPECT_TRUE(std::isnan(theoretical_ceiling(d, "fp32_fma", NAN)));
  DeviceFacts unknown = d;
  unknown.cc_major = 5;
  EXPECT_TRUE(std::isnan(theoretical_ceiling(unknown, "fp32_fma", 1980)));
  const MachineProfile p = theoretical_profile(d, 1980);
  ASSERT_NE(p.find("dram_copy"), nullptr);
  ASSERT_NE(p.find("tensor_fp8"), nullptr);
  EXPECT_EQ(p.find("l2_read"), nullptr);
  // A100 (8.0): 108 × 2048 × 1410 MHz = 312 TFLOP/s FP16 tensor.
  DeviceFacts a100 = d;
  a100.cc_major = 8;
  a100.sm_count = 108;
  EXPECT_NEAR(theoretical_ceiling(a100, "tensor_fp16", 1410), 312e12, 0.5e12);
}

TEST(BenchDerive, DeriveRunWithoutProfileUsesTheoreticalAndWarns) {
  BenchRun run;
  run.device = h100();
  BenchCase c;
  c.op = "copy";
  c.work.bytes_read = c.work.bytes_written = 1 << 30;
  c.timing = timing("cold", 0.75e-3);
  c.timing.sm_clock_mhz_before = 1755;
  run.cases.push_back(c);
  derive_run(run, nullptr);
  const BenchDerived& d = run.cases[0].derived;
  EXPECT_EQ(d.ceiling_source, "theoretical");
  EXPECT_EQ(d.ceiling, "dram_copy");
  EXPECT_DOUBLE_EQ(d.ceiling_value, 2.0 * 2619e6 * 640);
  ASSERT_EQ(run.warnings.size(), 1u);
  EXPECT_NE(run.warnings[0].find("gpuscope peak"), std::string::npos);
  EXPECT_NE(run.warnings[0].find("theoretical"), std::string::npos);
}

TEST(BenchDerive, DeriveRunWithAProfileOfAnotherGpuWarns) {
  BenchRun run;
  run.device = h100();
  run.device.uuid = "GPU-bbbb";
  BenchCase c;
  c.work.bytes_read = 1 << 20;
  c.timing = timing("cold", 1e-3);
  run.cases.push_back(c);
  const MachineProfile p = profile();
  derive_run(run, &p);
  EXPECT_EQ(run.cases[0].derived.ceiling_source, "measured");
  ASSERT_EQ(run.warnings.size(), 1u);
  EXPECT_NE(run.warnings[0].find("GPU-aaaa"), std::string::npos);
  EXPECT_NE(run.warnings[0].find("GPU-bbbb"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::core
