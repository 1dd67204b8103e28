// gpuscope kernels' derivations on realistic H100 counter sets, hand-computed: the numbers,
// the bound and the notes' kinds (their sentences: tests/unit/analyze/test_kernel_explain.cpp).
#include "core/kernel_derive.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/bench_derive.hpp"
#include "kernel_derive_fixtures.hpp"

namespace gpuscope::core::kernels {
namespace {

using namespace testing;

// The derivation notes of `d` of one kind.
std::vector<DerivationNote> notes_of(const KernelDerived& d, NoteKind kind) {
  std::vector<DerivationNote> out;
  std::copy_if(d.notes.begin(), d.notes.end(), std::back_inserter(out),
               [&](const DerivationNote& n) { return n.kind == kind; });
  return out;
}

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
  EXPECT_DOUBLE_EQ(tensor_flops(v, "fp16", {}), 0.0);   // a zero count needs no factor
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
  EXPECT_NEAR(d.utilizations[0].achieved, 2 * kGiB / 0.72e-3, 1);  // B/s
  EXPECT_DOUBLE_EQ(d.utilizations[0].ceiling_value, 3.0e12);
  EXPECT_TRUE(d.utilizations[0].memory);
  ASSERT_FALSE(d.notes.empty());
  EXPECT_EQ(d.notes.back().kind, NoteKind::kFlopsNotCollected);
}

TEST(KernelDerive, ReadOnlyKernelUsesTheReadCeiling) {
  MetricValues v = copy_1gib();
  v["dram__bytes_write.sum"] = 1e6;  // a reduction: writes < 5 %
  const KernelDerived d = derive(v, big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.ceiling, "dram_read");
}

TEST(KernelDerive, GemmIsComputeBoundOnTensorCores) {
  const KernelDerived d = derive(gemm(), big_grid(), h100_device(), h100(), "measured", gemm_calibration());
  const double flop = gemm_flop();
  EXPECT_DOUBLE_EQ(d.tensor_flops, flop);  // the pipe counter is not added on top of hgmma
  EXPECT_DOUBLE_EQ(d.flops, flop + 6.7e7);
  EXPECT_EQ(d.bound, Bound::kCompute);
  EXPECT_EQ(d.bound_unit, "tensor");
  EXPECT_EQ(d.bound_label, "compute-bound (tensor)");
  EXPECT_EQ(d.ceiling, "tensor_bf16");
  EXPECT_NEAR(d.pct_of_ceiling, flop / 1.4e-3 / 790e12 * 100, 1e-6);
  EXPECT_NEAR(d.intensity_dram, (flop + 6.7e7) / 1.2e9, 1e-6);
  EXPECT_NEAR(d.intensity_dram, 916.4, 0.1);
  EXPECT_EQ(d.utilizations.front().unit, "tensor");
  EXPECT_DOUBLE_EQ(d.utilizations.front().ceiling_value, 790e12);
  EXPECT_FALSE(d.tensor_uncalibrated);
  EXPECT_TRUE(d.notes.empty());
}

TEST(KernelDerive, UncalibratedTensorCountersLeaveComputeUnknown) {
  MetricValues v = gemm();
  v["lts__t_bytes.sum"] = 2e9;  // L2 14 %: no memory level is busy
  const KernelDerived d = derive(v, big_grid(), h100_device(), h100(), "measured");
  EXPECT_TRUE(d.tensor_uncalibrated);
  EXPECT_TRUE(std::isnan(d.tensor_flops));
  EXPECT_EQ(d.bound, Bound::kComputeOrLatency);  // DRAM 29 % only, tensor unknown
  const std::vector<DerivationNote> uncalibrated = notes_of(d, NoteKind::kTensorUncalibrated);
  ASSERT_EQ(uncalibrated.size(), 1u);
  // The pipe counter is not used beside the hgmma ones; the fp16 counter is 0 and needs no factor.
  ASSERT_EQ(uncalibrated[0].counters.size(), 1u);
  EXPECT_EQ(uncalibrated[0].counters[0].first, "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum");
  EXPECT_DOUBLE_EQ(uncalibrated[0].counters[0].second, gemm_flop() / 512);
  // With a busy memory level the busiest known unit names the bound.
  const KernelDerived busy = derive(gemm(), big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(busy.bound, Bound::kL2);
  EXPECT_TRUE(busy.tensor_uncalibrated);
}

TEST(KernelDerive, TinyKernelIsLaunchBound) {
  const KernelDerived d = derive(tiny_kernel(), LaunchFacts{1, 32, 16, 0}, h100_device(), h100(), "measured");
  EXPECT_DOUBLE_EQ(launch_threshold_s(h100()), 5e-6);  // 2 × 1 / 400k
  EXPECT_DOUBLE_EQ(d.launch_threshold_s, 5e-6);
  EXPECT_DOUBLE_EQ(d.duration_s, 2e-6);
  EXPECT_EQ(d.bound, Bound::kLaunch);
  EXPECT_EQ(d.bound_label, "launch-bound");
}

TEST(KernelDerive, LaunchThresholdWithoutLaunchCostIsFiveMicroseconds) {
  EXPECT_DOUBLE_EQ(launch_threshold_s(MachineProfile{}), kLaunchBoundDefaultS);
}

TEST(KernelDerive, LowUtilizationWithEnoughWarpsIsLatencyBound) {
  const KernelDerived d = derive(fp32_chain(80), big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kLatency);
  EXPECT_EQ(d.utilizations.front().unit, "fp32");
  EXPECT_NEAR(d.utilizations.front().pct, 5.0, 1e-9);
  EXPECT_LT(d.utilizations.front().pct, kLatencyBelowPct);
  EXPECT_DOUBLE_EQ(d.occupancy.achieved_pct, 80.0);
}

TEST(KernelDerive, LowUtilizationAndLowOccupancyIsOccupancyBound) {
  const KernelDerived d = derive(fp32_chain(9), big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kOccupancy);
  EXPECT_DOUBLE_EQ(d.occupancy.achieved_pct, 9.0);
  EXPECT_LT(d.occupancy.achieved_pct, kLowOccupancyPct);
}

TEST(KernelDerive, SmallGridOnALongKernelIsOccupancyBound) {
  const KernelDerived d = derive(fp32_chain(80), LaunchFacts{16, 256, 32, 0}, h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kOccupancy);  // 16 blocks for 132 SMs, although 80 % of warp slots were active
  EXPECT_DOUBLE_EQ(d.occupancy.achieved_pct, 80.0);
}

TEST(KernelDerive, QuickSetWithLowMemoryCannotTellComputeFromLatency) {
  const KernelDerived d = derive(quick_chain(), big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kComputeOrLatency);
  EXPECT_EQ(bound_name(d.bound), "compute or latency");
  EXPECT_FALSE(d.flops_collected);
  EXPECT_TRUE(std::all_of(d.utilizations.begin(), d.utilizations.end(),
                          [](const Utilization& u) { return u.memory && u.pct < kLatencyBelowPct; }));
  ASSERT_EQ(notes_of(d, NoteKind::kFlopsNotCollected).size(), 1u);
}

TEST(KernelDerive, OccupancyLimiterFromLaunchFacts) {
  // 256 threads × 128 registers on cc 9.0: 2 blocks per SM = 16 warps of 64 = 25 %, registers.
  const KernelDerived d = derive(fp32_chain(20), LaunchFacts{132 * 8, 256, 128, 0}, h100_device(), h100(), "measured");
  ASSERT_TRUE(d.occupancy.computed);
  EXPECT_EQ(d.occupancy.computed->limiter, occupancy::Limiter::kRegisters);
  EXPECT_DOUBLE_EQ(d.occupancy.theoretical_pct, 25.0);
  EXPECT_FALSE(d.occupancy.theoretical_from_counter);
  EXPECT_DOUBLE_EQ(d.occupancy.waves, 4.0);  // 1056 blocks / (2 × 132)
}

TEST(KernelDerive, TheoreticalOccupancyCounterWins) {
  MetricValues v = fp32_chain(20);
  v["sm__maximum_warps_per_active_cycle_pct"] = 50;
  const KernelDerived d = derive(v, LaunchFacts{132 * 8, 256, 128, 0}, h100_device(), h100(), "measured");
  EXPECT_DOUBLE_EQ(d.occupancy.theoretical_pct, 50.0);
  EXPECT_TRUE(d.occupancy.theoretical_from_counter);
}

TEST(KernelDerive, SpeedOfLightPercentages) {
  const KernelDerived d = derive(sol_memory(), big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kDram);
  // The percentages as they are, levels given: no "memory" roll-up beside them.
  ASSERT_EQ(d.utilizations.size(), 4u);
  EXPECT_EQ(d.utilizations[0].unit, "dram");
  EXPECT_DOUBLE_EQ(d.utilizations[0].pct, 40.0);
  EXPECT_TRUE(d.utilizations[0].ceiling.empty());  // Speed of Light: no catalog ceiling
  EXPECT_TRUE(std::isnan(d.utilizations[0].achieved));
  EXPECT_EQ(d.utilizations[1].unit, "sm");
  EXPECT_TRUE(d.ceiling.empty());
  EXPECT_DOUBLE_EQ(d.pct_of_ceiling, 40.0);
}

TEST(KernelDerive, SpeedOfLightComputeBound) {
  const KernelDerived d = derive(sol_compute(), big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kCompute);
  EXPECT_EQ(d.bound_unit, "sm");
  ASSERT_EQ(d.utilizations.size(), 2u);
  EXPECT_EQ(d.utilizations[1].unit, "memory");  // no level given: the memory roll-up
  EXPECT_DOUBLE_EQ(d.utilizations[1].pct, 20.0);
}

TEST(KernelDerive, TheoreticalCeilingsAreSaidAndMissingOnesNoted) {
  const KernelDerived d = derive(copy_1gib(), big_grid(), h100_device(), h100_theoretical(), "theoretical");
  EXPECT_EQ(d.bound, Bound::kDram);
  EXPECT_EQ(d.ceiling_source, "theoretical");
  EXPECT_NEAR(d.pct_of_ceiling, 2 * kGiB / 0.72e-3 / 3.352e12 * 100, 0.1);
  const std::vector<DerivationNote> missing = notes_of(d, NoteKind::kMissingCeiling);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].subject, "l2_read");
  EXPECT_EQ(missing[0].unit_label, "L2");
  EXPECT_TRUE(missing[0].memory);
  EXPECT_FALSE(std::isnan(d.l2_bandwidth));  // the bandwidth is known, its utilization is not
  EXPECT_TRUE(
      std::none_of(d.utilizations.begin(), d.utilizations.end(), [](const Utilization& u) { return u.unit == "l2"; }));
}

TEST(KernelDerive, NoDurationIsUnknown) {
  MetricValues v = copy_1gib();
  v.erase("gpu__time_duration.sum");
  const KernelDerived d = derive(v, big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kUnknown);
  EXPECT_TRUE(d.utilizations.empty());
  EXPECT_TRUE(std::isnan(d.duration_s));
  EXPECT_TRUE(std::isnan(d.dram_bandwidth));
  EXPECT_EQ(d.bound_label, "unknown");
  ASSERT_FALSE(d.notes.empty());
  EXPECT_EQ(d.notes.back().kind, NoteKind::kNoDuration);
}

TEST(KernelDerive, SeveralPassesAndImpossibleHitRatesAreNoted) {
  LaunchFacts launch = big_grid();
  launch.passes = 1;
  MetricValues v = copy_1gib();
  v["lts__t_sector_hit_rate.pct"] = 99.5;
  KernelDerived d = derive(v, launch, h100_device(), h100(), "measured");
  EXPECT_TRUE(notes_of(d, NoteKind::kReplayPasses).empty());
  EXPECT_TRUE(notes_of(d, NoteKind::kImpossibleHitRate).empty());
  launch.passes = 4;
  v["lts__t_sector_hit_rate.pct"] = 100.6;  // measured on H100 with the 4-pass memory set
  d = derive(v, launch, h100_device(), h100(), "measured");
  const std::vector<DerivationNote> passes = notes_of(d, NoteKind::kReplayPasses);
  ASSERT_EQ(passes.size(), 1u);
  EXPECT_EQ(passes[0].count, 4);
  const std::vector<DerivationNote> hit = notes_of(d, NoteKind::kImpossibleHitRate);
  ASSERT_EQ(hit.size(), 1u);
  EXPECT_EQ(hit[0].subject, "lts__t_sector_hit_rate.pct");
}

TEST(KernelDerive, UnknownRegistersLeaveTheoreticalOccupancyUncomputed) {
  const KernelDerived d = derive(fp32_chain(20), LaunchFacts{132 * 8, 256, -1, 0}, h100_device(), h100(), "measured");
  EXPECT_FALSE(d.occupancy.computed);
  EXPECT_TRUE(std::isnan(d.occupancy.theoretical_pct));
  EXPECT_TRUE(std::isnan(d.occupancy.waves));
  EXPECT_EQ(notes_of(d, NoteKind::kLaunchFactsUnknown).size(), 1u);
}

TEST(KernelDerive, MeanLaunchKeepsTotalRates) {
  const std::vector<MetricValues> launches{{{"gpu__time_duration.sum", 1000},
                                            {"dram__bytes_read.sum", 100},
                                            {"sm__warps_active.avg.pct_of_peak_sustained_active", 10}},
                                           {{"gpu__time_duration.sum", 3000},
                                            {"dram__bytes_read.sum", 500},
                                            {"sm__warps_active.avg.pct_of_peak_sustained_active", 50}}};
  const MetricValues m = mean_launch(launches);
  EXPECT_DOUBLE_EQ(m.at("gpu__time_duration.sum"), 2000);
  EXPECT_DOUBLE_EQ(m.at("dram__bytes_read.sum"), 300);                              // 600 bytes / 4000 ns as a rate
  EXPECT_DOUBLE_EQ(m.at("sm__warps_active.avg.pct_of_peak_sustained_active"), 40);  // (10·1 + 50·3) / 4
  EXPECT_TRUE(mean_launch({}).empty());
}

}  // namespace
}  // namespace gpuscope::core::kernels
