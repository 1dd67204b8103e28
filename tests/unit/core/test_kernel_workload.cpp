// gpuscope kernels' estimated speedup (core/kernel_derive) and the compute-workload and
// warp-state derivations (core/kernel_workload) on hand-made counter values whose results
// can be computed by hand. The compute and warps values are made up for the test; they have
// the shapes Nsight Compute reports. The same analysis on counters recorded on an H100 (with
// ncu's beside them): tests/unit/analyze/test_kernel_sets_recorded.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/kernel_derive.hpp"
#include "core/kernel_metric_sets.hpp"
#include "core/kernel_workload.hpp"
#include "kernel_derive_fixtures.hpp"

namespace gpuscope::core::kernels {
namespace {

using namespace testing;

// 100 µs; DRAM 1.5e8 B (floor 1.5e8 / 3.0e12 B/s = 50 µs), L2 2e8 B (20 µs), L1 3e8 B
// (10 µs), FP32 2·ffma FLOP / 60e12 FLOP/s.
MetricValues hand_kernel(double ffma) {
  return {{"gpu__time_duration.sum", 1e5},
          {"dram__bytes_read.sum", 1e8},
          {"dram__bytes_write.sum", 5e7},
          {"lts__t_bytes.sum", 2e8},
          {"l1tex__t_bytes.sum", 3e8},
          {"sm__warps_active.avg.pct_of_peak_sustained_active", 50},
          {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", ffma}};
}

TEST(KernelSpeedup, DramFloorIsBytesOverTheDramCeiling) {
  // FP32: 2 × 1.2e9 / 60e12 = 40 µs < DRAM's 50 µs: DRAM bounds it.
  KernelDerived d = derive(hand_kernel(1.2e9), big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kDram);
  EXPECT_NEAR(d.floor_s, 50e-6, 1e-12);
  EXPECT_EQ(d.floor_unit, "DRAM");
  EXPECT_NEAR(d.est_speedup_pct, 50.0, 1e-9);
  EXPECT_TRUE(std::isnan(d.time_share_pct));
  EXPECT_TRUE(std::isnan(d.program_gain_pct));
  set_time_share(d, 40.0);  // 40 % of the GPU time × 50 % = 20 % of the program's GPU time
  EXPECT_DOUBLE_EQ(d.time_share_pct, 40.0);
  EXPECT_NEAR(d.program_gain_pct, 20.0, 1e-9);
}

TEST(KernelSpeedup, ComputeFloorWinsWhenLarger) {
  // FP32: 2 × 2.1e9 / 60e12 = 70 µs > DRAM's 50 µs.
  KernelDerived d = derive(hand_kernel(2.1e9), big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.bound, Bound::kCompute);
  EXPECT_NEAR(d.floor_s, 70e-6, 1e-12);
  EXPECT_EQ(d.floor_unit, "FP32");
  EXPECT_NEAR(d.est_speedup_pct, 30.0, 1e-9);
  set_time_share(d, 10.0);
  EXPECT_NEAR(d.program_gain_pct, 3.0, 1e-9);
}

TEST(KernelSpeedup, AtOrAboveTheCeilingGainsNothing) {
  MetricValues v = hand_kernel(0);
  v["dram__bytes_read.sum"] = 2.8e8;  // 3.3e8 B in 100 µs: 110 % of 3.0e12 B/s
  KernelDerived d = derive(v, big_grid(), h100_device(), h100(), "measured");
  EXPECT_NEAR(d.floor_s, 110e-6, 1e-12);
  EXPECT_DOUBLE_EQ(d.est_speedup_pct, 0.0);
  set_time_share(d, 100.0);
  EXPECT_DOUBLE_EQ(d.program_gain_pct, 0.0);
}

TEST(KernelSpeedup, UnknownWithoutDurationOrShare) {
  MetricValues v = hand_kernel(1e9);
  v.erase("gpu__time_duration.sum");
  KernelDerived d = derive(v, big_grid(), h100_device(), h100(), "measured");
  EXPECT_TRUE(std::isnan(d.floor_s));
  EXPECT_TRUE(std::isnan(d.est_speedup_pct));
  set_time_share(d, 50.0);
  EXPECT_DOUBLE_EQ(d.time_share_pct, 50.0);
  EXPECT_TRUE(std::isnan(d.program_gain_pct));
  set_time_share(d, std::nan(""));
  EXPECT_TRUE(std::isnan(d.time_share_pct));
}

TEST(KernelSpeedup, SpeedOfLightUsesThePercentOfPeak) {
  KernelDerived d = derive(sol_memory(), big_grid(), h100_device(), h100(), "measured");
  ASSERT_FALSE(d.utilizations.empty());
  EXPECT_NEAR(d.floor_s, 1e-4 * d.utilizations.front().pct / 100.0, 1e-15);
  EXPECT_NEAR(d.est_speedup_pct, 100.0 - d.utilizations.front().pct, 1e-9);
}

std::string pipe_inst(std::string_view pipe) {
  return std::string(metric::k_pipe_inst_prefix) + std::string(pipe) + std::string(metric::k_pipe_suffix);
}
std::string pipe_cycles(std::string_view pipe) {
  return std::string(metric::k_pipe_cycles_prefix) + std::string(pipe) + "_cycles_active" +
         std::string(metric::k_pipe_suffix);
}
std::string stall(std::string_view reason) {
  return std::string(metric::k_stall_prefix) + std::string(reason) + std::string(metric::k_stall_suffix);
}

// An FMA loop as Compute Workload Analysis shows one (hand-made values).
MetricValues fma_loop_compute() {
  return {{"gpu__time_duration.sum", 4e4},
          {std::string(metric::k_ipc_elapsed), 3.1},
          {std::string(metric::k_ipc_active), 3.2},
          {std::string(metric::k_issued_ipc), 3.25},
          {std::string(metric::k_sm_busy), 81.0},
          {std::string(metric::k_issue_slots), 80.5},
          {pipe_inst("fma"), 79.0},
          {pipe_cycles("fma"), 80.0},
          {pipe_inst("alu"), 20.0},
          {pipe_inst("lsu"), 2.0},
          {pipe_inst("fp64"), 0.0},
          {pipe_cycles("fp64"), 0.0},
          {pipe_inst("xu"), 1.0},
          {pipe_cycles("shared"), 3.0}};
}

TEST(KernelWorkload, BusiestPipeTakesTheLargerOfInstructionsAndCycles) {
  const ComputeWorkload w = compute_workload(fma_loop_compute());
  ASSERT_TRUE(w.collected());
  EXPECT_DOUBLE_EQ(w.ipc_elapsed, 3.1);
  EXPECT_DOUBLE_EQ(w.ipc_active, 3.2);
  EXPECT_DOUBLE_EQ(w.issued_ipc_active, 3.25);
  EXPECT_DOUBLE_EQ(w.sm_busy_pct, 81.0);
  EXPECT_DOUBLE_EQ(w.issue_slots_busy_pct, 80.5);
  ASSERT_EQ(w.pipes.size(), 6u);  // fma, alu, lsu, xu, fp64, shared
  EXPECT_EQ(w.pipes[0].pipe, "fma");
  EXPECT_EQ(w.pipes[0].label, "FMA");
  EXPECT_DOUBLE_EQ(w.pipes[0].inst_pct, 79.0);
  EXPECT_DOUBLE_EQ(w.pipes[0].cycles_pct, 80.0);
  EXPECT_DOUBLE_EQ(w.pipes[0].pct, 80.0);
  EXPECT_EQ(w.pipes[1].pipe, "alu");
  EXPECT_TRUE(std::isnan(w.pipes[1].cycles_pct));
  EXPECT_EQ(w.pipes[2].pipe, "shared");  // cycles only: 3 %
  EXPECT_EQ(w.pipes[3].pipe, "lsu");
  EXPECT_EQ(w.pipes[4].pipe, "xu");
  EXPECT_EQ(w.pipes[5].pipe, "fp64");
}

TEST(KernelWorkload, NothingCollected) {
  const ComputeWorkload w = compute_workload(copy_1gib());
  EXPECT_FALSE(w.collected());
  EXPECT_TRUE(w.pipes.empty());
  EXPECT_FALSE(warp_states(copy_1gib()).collected());
}

// A kernel that waits on __syncthreads (hand-made values): 20 cycles per issued
// instruction, 12 of them at the barrier.
MetricValues barrier_warps() {
  return {{"gpu__time_duration.sum", 5e4},
          {std::string(metric::k_warp_cycles_per_issue), 20.0},
          {std::string(metric::k_issue_active), 0.25},
          {std::string(metric::k_eligible_warps), 0.4},
          {stall("barrier"), 12.0},
          {stall("long_scoreboard"), 4.0},
          {stall("not_selected"), 1.0},
          {stall("wait"), 2.0},
          {stall("selected"), 1.0}};
}

TEST(KernelWorkload, StallReasonsRankedByCyclesWithShares) {
  const WarpStates w = warp_states(barrier_warps());
  ASSERT_TRUE(w.collected());
  EXPECT_DOUBLE_EQ(w.cycles_per_issued, 20.0);
  EXPECT_DOUBLE_EQ(w.issue_active, 0.25);
  EXPECT_DOUBLE_EQ(w.eligible_warps, 0.4);
  EXPECT_DOUBLE_EQ(w.selected_cycles, 1.0);  // listed apart, never ranked as a stall
  ASSERT_EQ(w.stalls.size(), 4u);
  EXPECT_EQ(w.stalls[0].reason, "barrier");
  EXPECT_DOUBLE_EQ(w.stalls[0].share_pct, 60.0);  // 12 / 20
  EXPECT_EQ(w.stalls[1].reason, "long_scoreboard");
  EXPECT_EQ(w.stalls[1].label, "long scoreboard");
  EXPECT_DOUBLE_EQ(w.stalls[1].share_pct, 20.0);
  EXPECT_EQ(w.stalls[2].reason, "wait");
  EXPECT_EQ(w.stalls[3].reason, "not_selected");
  EXPECT_DOUBLE_EQ(w.stalls[3].share_pct, 5.0);
}

TEST(KernelWorkload, SharesOfTheSumWithoutTheTotal) {
  MetricValues v = barrier_warps();
  v.erase(std::string(metric::k_warp_cycles_per_issue));
  const WarpStates w = warp_states(v);
  ASSERT_FALSE(w.stalls.empty());
  EXPECT_DOUBLE_EQ(w.stalls[0].share_pct, 60.0);  // 12 / (12 + 4 + 1 + 2 + 1)
}

TEST(KernelWorkload, DeriveCarriesThemAndTheSetsNameEveryMetricItReads) {
  MetricValues v = fma_loop_compute();
  for (const auto& [k, x] : barrier_warps()) v[k] = x;
  const KernelDerived d = derive(v, big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(d.compute.pipes.front().pipe, "fma");
  EXPECT_EQ(d.warps.stalls.front().reason, "barrier");
  EXPECT_EQ(d.bound, Bound::kUnknown);  // no bytes, FLOPs or Speed of Light: no ceiling to compare
  // Every pipe and stall metric the derivations read is in a set, so --list-sets documents it.
  const auto compute = set_metric_names(*find_metric_set("compute"));
  const auto warps = set_metric_names(*find_metric_set("warps"));
  const auto detailed = set_metric_names(*find_metric_set("detailed"));
  auto in = [](const std::vector<std::string>& set, const std::string& m) {
    return std::find(set.begin(), set.end(), m) != set.end();
  };
  for (std::string_view r : stall_reasons()) {
    EXPECT_TRUE(in(warps, stall(r))) << r;
    EXPECT_TRUE(in(detailed, stall(r))) << r;
  }
  for (const char* p : {"fma", "alu", "lsu", "tma", "adu", "cbu", "tex", "uniform", "xu", "fp64", "tensor"})
    EXPECT_TRUE(in(compute, pipe_inst(p))) << p;
  for (const MetricSet& s : metric_sets())
    for (const std::string& m : set_metric_names(s)) EXPECT_TRUE(in(detailed, m)) << s.name << " " << m;
}

}  // namespace
}  // namespace gpuscope::core::kernels
