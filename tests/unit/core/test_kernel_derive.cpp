// gpuscope kernels' derivations on realistic H100 counter sets, hand-computed.
#include "core/kernel_derive.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/bench_derive.hpp"

namespace gpuscope::kernels {
namespace {

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// H100-like measured ceilings (B/s, FLOP/s); launch_rate 400k/s → launch threshold 5 µs.
MachineProfile h100() {
  MachineProfile p;
  p.device.name = "NVIDIA H100 80GB HBM3";
  p.device.uuid = "GPU-1";
  p.device.sm_count = 132;
  for (auto [name, v] : std::initializer_list<std::pair<const char*, double>>{{"dram_read", 3.1e12},
                                                                             {"dram_write", 3.0e12},
                                                                             {"dram_copy", 3.0e12},
                                                                             {"l2_read", 10e12},
                                                                             {"shared_memory", 30e12},
                                                                             {"fp64_fma", 50e12},
                                                                             {"fp32_fma", 60e12},
                                                                             {"fp16_fma", 120e12},
                                                                             {"tensor_fp16", 780e12},
                                                                             {"tensor_bf16", 790e12},
                                                                             {"tensor_fp8", 1500e12},
                                                                             {"launch_rate", 4e5}}) {
    Ceiling c;
    c.name = name;
    c.measured = v;
    p.ceilings.push_back(c);
  }
  return p;
}

KernelDevice h100_device() {
  KernelDevice d;
  d.sm_count = 132;
  d.limits.cc_major = 9;
  d.limits.max_warps_per_sm = 64;
  d.limits.max_blocks_per_sm = 32;
  d.limits.max_registers_per_sm = 65536;
  d.limits.max_registers_per_block = 65536;
  d.limits.max_shared_memory_per_sm = 233472;
  d.limits.max_threads_per_block = 1024;
  return d;
}

LaunchFacts big_grid() { return LaunchFacts{132 * 16, 256, 32, 0}; }

constexpr double kGiB = 1024.0 * 1024 * 1024;

TEST(KernelDerive, CudaCoreFlopsFollowTheNsightComputeConvention) {
  MetricValues v{{"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 100},
                 {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 10},
                 {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 5},
                 {"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", 7}};
  EXPECT_DOUBLE_EQ(cuda_core_flops(v, "fp32"), 215.0);  // 2·100 + 10 + 5
  EXPECT_DOUBLE_EQ(cuda_core_flops(v, "fp64"), 14.0);   // missing dadd/dmul count 0
  EXPECT_TRUE(std::isnan(cuda_core_flops(v, "fp16")));  // none collected
  EXPECT_TRUE(std::isnan(cuda_core_flops(v, "int8")));
}

TEST(KernelDerive, TensorFlopsNeedACalibrationFactor) {
  MetricValues v{{"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum", 1000},
                 {"sm__ops_path_tensor_op_hgmma_src_fp16.sum", 0}};
  EXPECT_TRUE(std::isnan(tensor_flops(v, "bf16", {})));
  EXPECT_DOUBLE_EQ(tensor_flops(v, "bf16", {{"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum", 512}}), 512000);
  EXPECT_DOUBLE_EQ(tensor_flops(v, "fp16", {}), 0.0);  // a zero count needs no factor
  EXPECT_TRUE(std::isnan(tensor_flops(v, "fp8", {})));  // not collected
}

TEST(KernelDerive, IntensityAtEachLevel) {
  MetricValues v{{"gpu__time_duration.sum", 1e6},
                 {"dram__bytes_read.sum", 60},
                 {"dram__bytes_write.sum", 40},
                 {"lts__t_bytes.sum", 200},
                 {"l1tex__t_bytes.sum", 400},
                 {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 100},
                 {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 0},
                 {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 0}};
  const KernelDerived d = derive(v, big_grid(), h100_device(), h100(), "measured");
  EXPECT_DOUBLE_EQ(d.flops, 200);
  EXPECT_DOUBLE_EQ(d.intensity_dram, 2.0);
  EXPECT_DOUBLE_EQ(d.intensity_l2, 1.0);
  EXPECT_DOUBLE_EQ(d.intensity_l1, 0.5);
  EXPECT_DOUBLE_EQ(d.duration_s, 1e-3);
  EXPECT_DOUBLE_EQ(d.dram_bandwidth, 100 / 1e-3);
  EXPECT_DOUBLE_EQ(d.flop_rate, 200 / 1e-3);
}

// A 1 GiB device-to-device copy: 2 GiB of DRAM traffic in 0.72 ms on a 3.0 TB/s ceiling.
MetricValues copy_1gib() {
  return {{"gpu__time_duration.sum", 0.72e6},
          {"dram__bytes_read.sum", kGiB},
          {"dram__bytes_write.sum", kGiB},
          {"lts__t_bytes.sum", 2 * kGiB},
          {"l1tex__t_bytes.sum", kGiB},
          {"sm__warps_active.avg.pct_of_peak_sustained_active", 85}};
}

TEST(KernelDerive, CopyIsDramBoundNearTheCeiling) {
  const KernelDerived d = derive(copy_1gib(), big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kDram);
  EXPECT_EQ(d.bound_label, "dram-bound");
  EXPECT_EQ(d.ceiling, "dram_copy");  // reads and writes both > 5 %
  EXPECT_NEAR(d.pct_of_ceiling, 2 * kGiB / 0.72e-3 / 3.0e12 * 100, 1e-9);
  EXPECT_NEAR(d.pct_of_ceiling, 99.4, 0.1);
  ASSERT_GE(d.utilizations.size(), 3u);
  EXPECT_EQ(d.utilizations[0].unit, "dram");
  EXPECT_EQ(d.utilizations[1].unit, "l2");
  EXPECT_NEAR(d.utilizations[1].pct, 29.8, 0.1);
  EXPECT_FALSE(d.flops_collected);
  EXPECT_TRUE(std::isnan(d.flops));
  EXPECT_TRUE(has(d.explanation, "dram-bound")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "99 % of the measured DRAM copy ceiling (2.98 TB/s of 3 TB/s)")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "close to the limit")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "compute not collected")) << d.explanation;
  ASSERT_FALSE(d.notes.empty());
  EXPECT_TRUE(has(d.notes.back(), "--set roofline"));
}

TEST(KernelDerive, ReadOnlyKernelUsesTheReadCeiling) {
  MetricValues v = copy_1gib();
  v["dram__bytes_write.sum"] = 1e6;  // a reduction: writes < 5 %
  const KernelDerived d = derive(v, big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.ceiling, "dram_read");
}

// bf16 GEMM 8192³ through wgmma: 2·8192³ FLOP in 1.4 ms.
MetricValues gemm() {
  const double flop = 2.0 * 8192.0 * 8192.0 * 8192.0;
  return {{"gpu__time_duration.sum", 1.4e6},
          {"dram__bytes_read.sum", 1.0e9},
          {"dram__bytes_write.sum", 0.2e9},
          {"lts__t_bytes.sum", 8e9},
          {"l1tex__t_bytes.sum", 2e9},
          {"sm__warps_active.avg.pct_of_peak_sustained_active", 12},
          {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 0},
          {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 0},
          {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 6.7e7},
          {"sm__inst_executed_pipe_tensor.sum", 4.2e6},
          {"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum", flop / 512},
          {"sm__ops_path_tensor_op_hgmma_src_fp16.sum", 0}};
}

TEST(KernelDerive, GemmIsComputeBoundOnTensorCores) {
  const TensorCalibration cal{{"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum", 512}};
  const KernelDerived d = derive(gemm(), big_grid(), h100_device(), h100(), "measured", cal);
  const double flop = 2.0 * 8192.0 * 8192.0 * 8192.0;
  EXPECT_DOUBLE_EQ(d.tensor_flops, flop);  // the pipe counter is not added on top of hgmma
  EXPECT_DOUBLE_EQ(d.flops, flop + 6.7e7);
  EXPECT_EQ(d.bound, Bound::kCompute);
  EXPECT_EQ(d.bound_unit, "tensor");
  EXPECT_EQ(d.bound_label, "compute-bound (tensor)");
  EXPECT_EQ(d.ceiling, "tensor_bf16");
  EXPECT_NEAR(d.pct_of_ceiling, flop / 1.4e-3 / 790e12 * 100, 1e-6);
  EXPECT_NEAR(d.intensity_dram, (flop + 6.7e7) / 1.2e9, 1e-6);
  EXPECT_TRUE(has(d.explanation, "compute ")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "BF16 tensor ceiling")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "ridge point")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "Arithmetic intensity 916 FLOP/B at DRAM")) << d.explanation;
  EXPECT_FALSE(d.tensor_uncalibrated);
}

TEST(KernelDerive, UncalibratedTensorCountersLeaveComputeUnknown) {
  MetricValues v = gemm();
  v["lts__t_bytes.sum"] = 2e9;  // L2 14 %: no memory level is busy
  const KernelDerived d = derive(v, big_grid(), h100_device(), h100(), "measured");
  EXPECT_TRUE(d.tensor_uncalibrated);
  EXPECT_TRUE(std::isnan(d.tensor_flops));
  EXPECT_EQ(d.bound, Bound::kComputeOrLatency);  // DRAM 29 % only, tensor unknown
  EXPECT_TRUE(has(d.explanation, "FLOPs are unknown (no calibration factor)")) << d.explanation;
  bool noted = false;
  for (const std::string& n : d.notes) noted |= has(n, "no calibration factor");
  EXPECT_TRUE(noted);
  // With a busy memory level the busiest known unit names the bound, and the text says
  // that compute is unknown rather than comparing with the FP32 share alone.
  const KernelDerived busy = derive(gemm(), big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(busy.bound, Bound::kL2);
  EXPECT_TRUE(has(busy.explanation, "compute unknown (the tensor cores ran")) << busy.explanation;
}

TEST(KernelDerive, TinyKernelIsLaunchBound) {
  const MetricValues v{{"gpu__time_duration.sum", 2000},
                       {"dram__bytes_read.sum", 128},
                       {"dram__bytes_write.sum", 128},
                       {"lts__t_bytes.sum", 256},
                       {"l1tex__t_bytes.sum", 256},
                       {"sm__warps_active.avg.pct_of_peak_sustained_active", 1.5}};
  const KernelDerived d = derive(v, LaunchFacts{1, 32, 16, 0}, h100_device(), h100(), "measured");
  EXPECT_DOUBLE_EQ(launch_threshold_s(h100()), 5e-6);  // 2 × 1 / 400k
  EXPECT_EQ(d.bound, Bound::kLaunch);
  EXPECT_TRUE(has(d.explanation, "launch-bound: it ran 2 µs")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "grid of 1 block for 132 SMs")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "CUDA graph")) << d.explanation;
}

TEST(KernelDerive, LaunchThresholdWithoutLaunchCostIsFiveMicroseconds) {
  EXPECT_DOUBLE_EQ(launch_threshold_s(MachineProfile{}), kLaunchBoundDefaultS);
}

// A dependent FP32 chain: 5 % of FP32, little memory traffic.
MetricValues fp32_chain(double achieved_occupancy) {
  return {{"gpu__time_duration.sum", 1e6},
          {"dram__bytes_read.sum", 1e7},
          {"dram__bytes_write.sum", 1e7},
          {"lts__t_bytes.sum", 2e7},
          {"l1tex__t_bytes.sum", 2e7},
          {"sm__warps_active.avg.pct_of_peak_sustained_active", achieved_occupancy},
          {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 1.5e9},
          {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 0},
          {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 0}};
}

TEST(KernelDerive, LowUtilizationWithEnoughWarpsIsLatencyBound) {
  const KernelDerived d = derive(fp32_chain(80), big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kLatency);
  EXPECT_EQ(d.utilizations.front().unit, "fp32");
  EXPECT_NEAR(d.utilizations.front().pct, 5.0, 1e-9);
  EXPECT_TRUE(has(d.explanation, "latency-bound: every unit is below 30 % of its ceiling (busiest: FP32 5.0 %)"))
      << d.explanation;
  EXPECT_TRUE(has(d.explanation, "Achieved occupancy 80 %")) << d.explanation;
}

TEST(KernelDerive, LowUtilizationAndLowOccupancyIsOccupancyBound) {
  const KernelDerived d = derive(fp32_chain(9), big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kOccupancy);
  EXPECT_TRUE(has(d.explanation, "achieved occupancy 9.0 % is too few warps")) << d.explanation;
}

TEST(KernelDerive, SmallGridOnALongKernelIsOccupancyBound) {
  const KernelDerived d = derive(fp32_chain(80), LaunchFacts{16, 256, 32, 0}, h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kOccupancy);
  EXPECT_TRUE(has(d.explanation, "grid of 16 blocks for 132 SMs leaves 116 SMs idle")) << d.explanation;
}

TEST(KernelDerive, QuickSetWithLowMemoryCannotTellComputeFromLatency) {
  MetricValues v = fp32_chain(50);
  for (const char* op : {"ffma", "fadd", "fmul"})
    v.erase(std::string("smsp__sass_thread_inst_executed_op_") + op + "_pred_on.sum");
  const KernelDerived d = derive(v, big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kComputeOrLatency);
  EXPECT_EQ(bound_name(d.bound), "compute or latency");
  EXPECT_TRUE(has(d.explanation, "not memory-bound")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "--set roofline")) << d.explanation;
}

TEST(KernelDerive, OccupancyLimiterFromLaunchFacts) {
  // 256 threads × 128 registers on cc 9.0: 2 blocks per SM = 16 warps of 64 = 25 %, registers.
  const KernelDerived d = derive(fp32_chain(20), LaunchFacts{132 * 8, 256, 128, 0}, h100_device(), h100(), "measured");
  ASSERT_TRUE(d.occupancy.computed);
  EXPECT_EQ(d.occupancy.computed->limiter, occupancy::Limiter::kRegisters);
  EXPECT_DOUBLE_EQ(d.occupancy.theoretical_pct, 25.0);
  EXPECT_FALSE(d.occupancy.theoretical_from_counter);
  EXPECT_DOUBLE_EQ(d.occupancy.waves, 4.0);  // 1056 blocks / (2 × 132)
  EXPECT_TRUE(has(d.explanation, "theoretical 25 % (limited by registers: 128 registers per thread)")) << d.explanation;
}

TEST(KernelDerive, TheoreticalOccupancyCounterWins) {
  MetricValues v = fp32_chain(20);
  v["sm__maximum_warps_per_active_cycle_pct"] = 50;
  const KernelDerived d = derive(v, LaunchFacts{132 * 8, 256, 128, 0}, h100_device(), h100(), "measured");
  EXPECT_DOUBLE_EQ(d.occupancy.theoretical_pct, 50.0);
  EXPECT_TRUE(d.occupancy.theoretical_from_counter);
}

TEST(KernelDerive, SpeedOfLightPercentages) {
  const MetricValues v{{"gpu__time_duration.sum", 1e5},
                       {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 33},
                       {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 40},
                       {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 40},
                       {"lts__throughput.avg.pct_of_peak_sustained_elapsed", 21},
                       {"l1tex__throughput.avg.pct_of_peak_sustained_elapsed", 15}};
  const KernelDerived d = derive(v, big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kDram);
  EXPECT_TRUE(has(d.explanation, "memory 40 % > compute 33 % of peak: dram-bound")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "theoretical peak")) << d.explanation;
}

TEST(KernelDerive, SpeedOfLightComputeBound) {
  const MetricValues v{{"gpu__time_duration.sum", 1e5},
                       {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 85},
                       {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 20}};
  const KernelDerived d = derive(v, big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kCompute);
  EXPECT_EQ(d.bound_unit, "sm");
  EXPECT_TRUE(has(d.explanation, "compute 85 % > memory 20 % of peak")) << d.explanation;
}

TEST(KernelDerive, TheoreticalCeilingsAreSaidAndMissingOnesNoted) {
  DeviceFacts dev;
  dev.cc_major = 9;
  dev.sm_count = 132;
  dev.max_mem_clock_mhz = 2619;
  dev.memory_bus_width_bits = 5120;
  const MachineProfile theo = core::theoretical_profile(dev, 1980);
  const KernelDerived d = derive(copy_1gib(), big_grid(), h100_device(), theo, "theoretical");
  EXPECT_EQ(d.bound, Bound::kDram);
  EXPECT_NEAR(d.pct_of_ceiling, 2 * kGiB / 0.72e-3 / 3.352e12 * 100, 0.1);
  EXPECT_TRUE(has(d.explanation, "of the theoretical DRAM copy ceiling")) << d.explanation;
  EXPECT_TRUE(has(d.explanation, "run `gpuscope peak`")) << d.explanation;
  bool l2_noted = false;
  for (const std::string& n : d.notes) l2_noted |= has(n, "no l2_read ceiling");
  EXPECT_TRUE(l2_noted);
}

TEST(KernelDerive, NoDurationIsUnknown) {
  MetricValues v = copy_1gib();
  v.erase("gpu__time_duration.sum");
  const KernelDerived d = derive(v, big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kUnknown);
  EXPECT_TRUE(d.utilizations.empty());
  EXPECT_TRUE(has(d.explanation, "gpu__time_duration.sum was not collected"));
}

TEST(KernelDerive, SeveralPassesAndImpossibleHitRatesAreNoted) {
  auto noted = [](const KernelDerived& d, std::string_view part) {
    return std::any_of(d.notes.begin(), d.notes.end(), [&](const std::string& n) { return has(n, part); });
  };
  LaunchFacts launch = big_grid();
  launch.passes = 1;
  MetricValues v = copy_1gib();
  v["lts__t_sector_hit_rate.pct"] = 99.5;
  KernelDerived d = derive(v, launch, h100_device(), h100(), "measured");
  EXPECT_FALSE(noted(d, "replay passes"));
  launch.passes = 4;
  v["lts__t_sector_hit_rate.pct"] = 100.6;  // measured on H100 with the 4-pass memory set
  d = derive(v, launch, h100_device(), h100(), "measured");
  EXPECT_TRUE(noted(d, "the metrics took 4 replay passes"));
  EXPECT_TRUE(noted(d, "lts__t_sector_hit_rate.pct above 100 %"));
}

TEST(KernelDerive, MeanLaunchKeepsTotalRates) {
  const std::vector<MetricValues> launches{
      {{"gpu__time_duration.sum", 1000}, {"dram__bytes_read.sum", 100}, {"sm__warps_active.avg.pct_of_peak_sustained_active", 10}},
      {{"gpu__time_duration.sum", 3000}, {"dram__bytes_read.sum", 500}, {"sm__warps_active.avg.pct_of_peak_sustained_active", 50}}};
  const MetricValues m = mean_launch(launches);
  EXPECT_DOUBLE_EQ(m.at("gpu__time_duration.sum"), 2000);
  EXPECT_DOUBLE_EQ(m.at("dram__bytes_read.sum"), 300);  // 600 bytes / 4000 ns as a rate
  EXPECT_DOUBLE_EQ(m.at("sm__warps_active.avg.pct_of_peak_sustained_active"), 40);  // (10·1 + 50·3) / 4
  EXPECT_TRUE(mean_launch({}).empty());
}

}  // namespace
}  // namespace gpuscope::kernels
