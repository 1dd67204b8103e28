// gpuscope kernels' sentences (analyze/kernel_explain) about the numbers core/kernel_derive
// computes, on the realistic H100 counter sets of tests/unit/core/kernel_derive_fixtures.hpp.
// The expected texts are whole: what `gpuscope kernels` printed for these launches when the
// explanations were still written by core/kernel_derive.
#include "analyze/kernels/kernel_explain.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../core/kernel_derive_fixtures.hpp"
#include "core/kernel_metric_sets.hpp"

namespace gpuscope::analyze {
namespace {

using namespace kernels;
using namespace kernels::testing;

std::string explain(const MetricValues& v, const LaunchFacts& launch, const MachineProfile& ceilings,
                    std::string_view source = "measured", const TensorCalibration& calibration = {}) {
  return kernel_explanation(derive(v, launch, h100_device(), ceilings, source, calibration), launch, h100_device());
}

std::vector<std::string> notes(const MetricValues& v, const LaunchFacts& launch, const MachineProfile& ceilings,
                               std::string_view source = "measured", const TensorCalibration& calibration = {}) {
  return derivation_notes(derive(v, launch, h100_device(), ceilings, source, calibration));
}

// Occupancy of a 256-thread block of 32 registers on an H100: warps limit it to 100 %.
constexpr std::string_view kFullOccupancy = "theoretical 100 % (limited by warps: 256 threads per block).";

constexpr std::string_view kFlopsNotCollected =
    "FLOPs were not collected (this metric set has no FLOP counters): classified on bytes per second against the "
    "memory ceilings; run with --set roofline to place it on the roofline";

TEST(KernelExplain, CopyNearTheDramCeiling) {
  EXPECT_EQ(explain(copy_1gib(), big_grid(), h100()),
            "memory 99 % of its ceiling, compute not collected: dram-bound; DRAM at 99 % of the measured DRAM copy "
            "ceiling (2.98 TB/s of 3 TB/s) — close to the limit: only moving fewer bytes (fusion, reuse in cache, "
            "smaller types) makes it faster. Next busiest: L2 30 %. Achieved occupancy 85 % of the SM's warp slots, " +
                std::string(kFullOccupancy));
  EXPECT_EQ(notes(copy_1gib(), big_grid(), h100()), std::vector<std::string>{std::string(kFlopsNotCollected)});
}

TEST(KernelExplain, GemmOnTensorCoresWithIntensityAndRidgePoint) {
  EXPECT_EQ(explain(gemm(), big_grid(), h100(), "measured", gemm_calibration()),
            "compute 99 % > memory 57 % of their ceilings: compute-bound (tensor); tensor at 99 % of the measured "
            "BF16 tensor ceiling (785 TFLOP/s of 790 TFLOP/s) — close to the limit: only less arithmetic or a faster "
            "unit (tensor cores, lower precision) makes it faster. Next busiest: L2 57 %. Arithmetic intensity 916 "
            "FLOP/B at DRAM, ridge point 263 FLOP/B. Achieved occupancy 12 % of the SM's warp slots, " +
                std::string(kFullOccupancy));
  EXPECT_TRUE(notes(gemm(), big_grid(), h100(), "measured", gemm_calibration()).empty());
}

TEST(KernelExplain, UncalibratedTensorCountersSayComputeIsUnknown) {
  MetricValues v = gemm();
  v["lts__t_bytes.sum"] = 2e9;  // L2 14 %: no memory level is busy
  EXPECT_EQ(explain(v, big_grid(), h100()),
            "not memory-bound: DRAM 29 %, L2 14 %, L1/shared 4.8 % of the measured ceilings, all below 30 %; the "
            "tensor cores ran but their FLOPs are unknown (no calibration factor), so compute-bound and latency-bound "
            "cannot be told apart (run `gpuscope kernels --set roofline`). Achieved occupancy 12 % of the SM's warp "
            "slots, " +
                std::string(kFullOccupancy));
  const std::string uncalibrated =
      "tensor-core counters ran (sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum = 2147483648) but no calibration "
      "factor was given: tensor FLOPs unknown; calibrate each counter against a GEMM of known 2·M·N·K FLOP";
  EXPECT_EQ(notes(v, big_grid(), h100()), std::vector<std::string>{uncalibrated});
  // With a busy memory level, the text says that compute is unknown rather than comparing
  // with the FP32 share alone.
  EXPECT_EQ(explain(gemm(), big_grid(), h100()),
            "memory 57 % of its ceiling, compute unknown (the tensor cores ran, their FLOPs are uncalibrated): "
            "l2-bound; L2 at 57 % of the measured L2 read ceiling (5.71 TB/s of 10 TB/s) — below the limit: more "
            "bytes in flight (more warps, wider or vectorized accesses, coalescing) could raise it. Next busiest: "
            "DRAM 29 %. Achieved occupancy 12 % of the SM's warp slots, " +
                std::string(kFullOccupancy));
}

TEST(KernelExplain, TinyKernelIsLaunchBound) {
  EXPECT_EQ(explain(tiny_kernel(), LaunchFacts{1, 32, 16, 0}, h100()),
            "launch-bound: it ran 2 µs, about what launching a kernel costs (threshold 5 µs), on a grid of 1 block "
            "for 132 SMs; the busiest unit, DRAM, is at 0.0 % of its ceiling. Fuse it with its neighbours, give it "
            "more work per launch, or capture the launches in a CUDA graph. Achieved occupancy 1.5 % of the SM's "
            "warp slots, theoretical 50 % (limited by blocks: 32 threads per block).");
}

TEST(KernelExplain, LatencyBoundWithEnoughWarps) {
  EXPECT_EQ(explain(fp32_chain(80), big_grid(), h100()),
            "latency-bound: every unit is below 30 % of its ceiling (busiest: FP32 5.0 %), with enough warps "
            "resident: the warps wait on dependent instructions, memory latency or synchronization. Achieved "
            "occupancy 80 % of the SM's warp slots, " +
                std::string(kFullOccupancy));
}

TEST(KernelExplain, OccupancyBoundByTooFewWarps) {
  EXPECT_EQ(explain(fp32_chain(9), big_grid(), h100()),
            "occupancy-bound: every unit is below 30 % of its ceiling (busiest: FP32 5.0 %); achieved occupancy "
            "9.0 % is too few warps to hide memory and instruction latency. Achieved occupancy 9.0 % of the SM's "
            "warp slots, " +
                std::string(kFullOccupancy));
}

TEST(KernelExplain, OccupancyBoundByASmallGrid) {
  const LaunchFacts small{16, 256, 32, 0};
  EXPECT_EQ(explain(fp32_chain(80), small, h100()),
            "occupancy-bound: every unit is below 30 % of its ceiling (busiest: FP32 5.0 %); a grid of 16 blocks for "
            "132 SMs leaves 116 SMs idle: launch more blocks. Achieved occupancy 80 % of the SM's warp slots, " +
                std::string(kFullOccupancy));
  // Both reasons: the second joins with "and".
  EXPECT_EQ(explain(fp32_chain(9), small, h100()),
            "occupancy-bound: every unit is below 30 % of its ceiling (busiest: FP32 5.0 %); a grid of 16 blocks for "
            "132 SMs leaves 116 SMs idle: launch more blocks; and achieved occupancy 9.0 % is too few warps to hide "
            "memory and instruction latency. Achieved occupancy 9.0 % of the SM's warp slots, " +
                std::string(kFullOccupancy));
}

TEST(KernelExplain, QuickSetCannotTellComputeFromLatency) {
  EXPECT_EQ(explain(quick_chain(), big_grid(), h100()),
            "not memory-bound: DRAM 0.7 %, L2 0.2 %, L1/shared 0.1 % of the measured ceilings, all below 30 %; FLOPs "
            "were not collected, so compute-bound and latency-bound cannot be told apart (run `gpuscope kernels --set "
            "roofline`). Achieved occupancy 50 % of the SM's warp slots, " +
                std::string(kFullOccupancy));
  EXPECT_EQ(notes(quick_chain(), big_grid(), h100()), std::vector<std::string>{std::string(kFlopsNotCollected)});
}

TEST(KernelExplain, OccupancyLimiterNamesItsCause) {
  const std::string low =
      "occupancy-bound: every unit is below 30 % of its ceiling (busiest: FP32 5.0 %); achieved "
      "occupancy 20 % is too few warps to hide memory and instruction latency. Achieved occupancy "
      "20 % of the SM's warp slots";
  // 256 threads × 128 registers on cc 9.0: 2 blocks per SM = 25 %.
  EXPECT_EQ(explain(fp32_chain(20), LaunchFacts{132 * 8, 256, 128, 0}, h100()),
            low + ", theoretical 25 % (limited by registers: 128 registers per thread).");
  EXPECT_EQ(explain(fp32_chain(20), LaunchFacts{132 * 8, 256, 32, 100000}, h100()),
            low + ", theoretical 25 % (limited by shared memory: 100 kB per block).");
  // Registers unknown: no theoretical occupancy, and a note that says why.
  EXPECT_EQ(explain(fp32_chain(20), LaunchFacts{132 * 8, 256, -1, 0}, h100()), low + ".");
  EXPECT_EQ(notes(fp32_chain(20), LaunchFacts{132 * 8, 256, -1, 0}, h100()),
            std::vector<std::string>{"registers or shared memory per block unknown (a runtime launch from a statically "
                                     "linked CUDA runtime names no CUfunction): theoretical occupancy not computed"});
}

TEST(KernelExplain, SpeedOfLightPercentagesAreOfThePeak) {
  EXPECT_EQ(explain(sol_memory(), big_grid(), h100()),
            "memory 40 % > compute 33 % of peak: dram-bound; DRAM at 40 % of its theoretical peak (Nsight Compute "
            "Speed of Light) — below the limit: more bytes in flight (more warps, wider or vectorized accesses, "
            "coalescing) could raise it. Next busiest: SM (compute) 33 %. Theoretical occupancy 100 % (limited by "
            "warps: 256 threads per block). (Speed-of-Light percentages are of the theoretical peak, not of the "
            "measured ceilings.)");
}

TEST(KernelExplain, SpeedOfLightComputeBound) {
  EXPECT_EQ(explain(sol_compute(), big_grid(), h100()),
            "compute 85 % > memory 20 % of peak: compute-bound (sm); SM (compute) at 85 % of its theoretical peak "
            "(Nsight Compute Speed of Light) — close to the limit: only less arithmetic or a faster unit (tensor "
            "cores, lower precision) makes it faster. Next busiest: memory 20 %. Theoretical occupancy 100 % "
            "(limited by warps: 256 threads per block). (Speed-of-Light percentages are of the theoretical peak, not "
            "of the measured ceilings.)");
}

TEST(KernelExplain, TheoreticalCeilingsAreSaidAndMissingOnesNoted) {
  const std::string theoretical =
      " (Ceilings are theoretical: no machine profile; run `gpuscope peak` for measured ones.)";
  const std::string no_l2 =
      "no l2_read ceiling in the theoretical ceilings: L2 utilization unknown (run `gpuscope peak` to measure it)";
  EXPECT_EQ(explain(copy_1gib(), big_grid(), h100_theoretical(), "theoretical"),
            "memory 89 % of its ceiling, compute not collected: dram-bound; DRAM at 89 % of the theoretical DRAM copy "
            "ceiling (2.98 TB/s of 3.35 TB/s) — close to the limit: only moving fewer bytes (fusion, reuse in cache, "
            "smaller types) makes it faster. Next busiest: L1/shared 4.5 %. Achieved occupancy 85 % of the SM's warp "
            "slots, " +
                std::string(kFullOccupancy) + theoretical);
  EXPECT_EQ(notes(copy_1gib(), big_grid(), h100_theoretical(), "theoretical"),
            (std::vector<std::string>{std::string(kFlopsNotCollected), no_l2}));
  EXPECT_EQ(explain(gemm(), big_grid(), h100_theoretical(), "theoretical", gemm_calibration()),
            "compute 73 % > memory 26 % of their ceilings: compute-bound (tensor); tensor at 73 % of the theoretical "
            "BF16 tensor ceiling (785 TFLOP/s of 1.07 PFLOP/s) — below the limit: instruction dependencies or too few "
            "warps keep the unit from its peak. Next busiest: DRAM 26 %. Arithmetic intensity 916 FLOP/B at DRAM, "
            "ridge point 319 FLOP/B. Achieved occupancy 12 % of the SM's warp slots, " +
                std::string(kFullOccupancy) + theoretical);
}

TEST(KernelExplain, MissingComputeCeilingsAreNotedWithoutThePeakHint) {
  MachineProfile no_fp32 = h100();
  std::erase_if(no_fp32.ceilings, [](const Ceiling& c) { return c.name == "fp32_fma"; });
  EXPECT_EQ(notes(fp32_chain(80), big_grid(), no_fp32),
            std::vector<std::string>{"no fp32_fma ceiling in the measured ceilings: FP32 utilization unknown"});
  MachineProfile no_bf16 = h100();
  std::erase_if(no_bf16.ceilings, [](const Ceiling& c) { return c.name == "tensor_bf16"; });
  EXPECT_EQ(notes(gemm(), big_grid(), no_bf16, "measured", gemm_calibration()),
            std::vector<std::string>{"no tensor_bf16 ceiling in the measured ceilings: tensor utilization unknown"});
  EXPECT_EQ(explain(gemm(), big_grid(), no_bf16, "measured", gemm_calibration()),
            "memory 57 % > compute 0.1 % of their ceilings: l2-bound; L2 at 57 % of the measured L2 read ceiling "
            "(5.71 TB/s of 10 TB/s) — below the limit: more bytes in flight (more warps, wider or vectorized accesses, "
            "coalescing) could raise it. Next busiest: DRAM 29 %. Achieved occupancy 12 % of the SM's warp slots, " +
                std::string(kFullOccupancy));
}

TEST(KernelExplain, UnknownBoundSaysWhy) {
  MetricValues v = copy_1gib();
  v.erase("gpu__time_duration.sum");
  EXPECT_EQ(explain(v, big_grid(), h100()),
            "unknown: gpu__time_duration.sum was not collected, so no rate can be computed. Achieved occupancy 85 % "
            "of the SM's warp slots, " +
                std::string(kFullOccupancy));
  EXPECT_EQ(notes(v, big_grid(), h100()),
            (std::vector<std::string>{std::string(kFlopsNotCollected),
                                      "gpu__time_duration.sum was not collected: no rates"}));
  EXPECT_EQ(explain(MetricValues{{"gpu__time_duration.sum", 1e6}}, big_grid(), h100()),
            "unknown: no unit has both a counter and a ceiling to compare it with. Theoretical occupancy 100 % "
            "(limited by warps: 256 threads per block).");
}

TEST(KernelExplain, SeveralPassesAndImpossibleHitRatesAreNoted) {
  LaunchFacts launch = big_grid();
  launch.passes = 4;
  MetricValues v = copy_1gib();
  v["lts__t_sector_hit_rate.pct"] = 100.6;  // measured on H100 with the 4-pass memory set
  EXPECT_EQ(notes(v, launch, h100()),
            (std::vector<std::string>{
                std::string(kFlopsNotCollected),
                "the metrics took 4 replay passes: each pass reran the kernel after CUPTI restored device memory, so "
                "counters of different passes saw different cache states; for kernels that move little data, DRAM "
                "and L2 figures and hit rates can be off by more than 3 % (measured against ncu on H100: DRAM writes "
                "of megabytes where a kernel writes kilobytes, the restore written back; throughput percentages "
                "5-10 % apart); --cache-control all flushes L2 before every pass, and a one-pass metric list (--set "
                "quick, --set occupancy) does not have this",
                "lts__t_sector_hit_rate.pct above 100 % in a launch: impossible in one run; its counters came from "
                "different replay passes (collect it alone, or with --set memory's byte counts only)"}));
}

// --cache-control all: the passes start from an empty L2, and the note says what that route
// costs instead (CUPTI's user-replay triggers), not the restore traffic it removed.
TEST(KernelExplain, FlushedPassesAreNotedForWhatTheyAdd) {
  LaunchFacts launch = big_grid();
  launch.passes = 4;
  launch.passes_flushed = true;
  const auto got = notes(copy_1gib(), launch, h100());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1],
            "the metrics took 4 replay passes, each from the same saved memory and an empty L2 (--cache-control all), "
            "so DRAM bytes do not carry the restore of memory; CUPTI's user replay under it adds about 8 instructions "
            "per warp and one global store per kernel to what is counted, which shows in instruction counts and rates "
            "of kernels with few instructions per warp");
  launch.passes = 1;  // one pass: nothing to say, flushed or not
  EXPECT_EQ(notes(copy_1gib(), launch, h100()).size(), 1u);
}

TEST(KernelExplain, NoteTextOfEachKindStandsAlone) {
  DerivationNote n;
  n.kind = NoteKind::kMissingCeiling;
  n.subject = "dram_copy";
  n.unit_label = "DRAM";
  n.memory = true;
  EXPECT_EQ(note_text(n, "measured"), "no dram_copy ceiling in the measured ceilings: DRAM utilization unknown");
  n.kind = NoteKind::kTensorUncalibrated;
  // Counts of a mean launch need not be whole: three significant digits (units::real3).
  n.counters = {{"sm__inst_executed_pipe_tensor.sum", 4.2e6}, {"sm__ops_path_tensor_op_hgmma_src_fp8.sum", 12.46}};
  EXPECT_EQ(note_text(n, "measured"),
            "tensor-core counters ran (sm__inst_executed_pipe_tensor.sum = 4200000, "
            "sm__ops_path_tensor_op_hgmma_src_fp8.sum = 12.5) but no calibration factor was given: tensor FLOPs "
            "unknown; calibrate each counter against a GEMM of known 2·M·N·K FLOP");
}

// The estimated speedup: said in the results, where the time share is known. 100 µs, DRAM
// 1.5e8 B against 3.0e12 B/s: 50 µs at the ceiling; 40 % of the GPU time → 20 %.
TEST(KernelExplain, EstimatedSpeedupWithTheProgramGain) {
  const MetricValues v{{"gpu__time_duration.sum", 1e5},
                       {"dram__bytes_read.sum", 1e8},
                       {"dram__bytes_write.sum", 5e7},
                       {"sm__warps_active.avg.pct_of_peak_sustained_active", 50}};
  KernelDerived d = derive(v, big_grid(), h100_device(), h100(), "measured");
  EXPECT_EQ(kernel_explanation(d, big_grid(), h100_device()).find("estimated speedup"), std::string::npos);
  set_time_share(d, 40.0);
  const std::string e = kernel_explanation(d, big_grid(), h100_device());
  EXPECT_TRUE(e.ends_with(
      " At the DRAM ceiling it would take 50 µs instead of 100 µs: estimated speedup 50 % of its time; as it holds "
      "40 % of the profiled GPU time, the program's GPU time would shrink by 20 %."))
      << e;
  // A kernel above the measured ceiling (a ceiling measured a little low) runs at it already.
  MetricValues above = v;
  above["dram__bytes_read.sum"] = 2.8e8;  // 3.3e8 B in 100 µs: 110 % of 3.0e12 B/s
  KernelDerived a = derive(above, big_grid(), h100_device(), h100(), "measured");
  set_time_share(a, 40.0);
  const std::string ea = kernel_explanation(a, big_grid(), h100_device());
  EXPECT_TRUE(ea.ends_with(" It runs at the DRAM ceiling already: estimated speedup 0 %.")) << ea;
}

std::string pipe_inst(std::string_view pipe) {
  return std::string(metric::k_pipe_inst_prefix) + std::string(pipe) + std::string(metric::k_pipe_suffix);
}
std::string stall(std::string_view reason) {
  return std::string(metric::k_stall_prefix) + std::string(reason) + std::string(metric::k_stall_suffix);
}

// --set compute (hand-made values of an FMA loop): the busiest pipe is named.
TEST(KernelExplain, ComputeWorkloadNamesTheBusiestPipe) {
  const MetricValues v{{"gpu__time_duration.sum", 4e4},
                       {std::string(metric::k_ipc_elapsed), 3.1},
                       {std::string(metric::k_ipc_active), 3.2},
                       {std::string(metric::k_issued_ipc), 3.25},
                       {std::string(metric::k_sm_busy), 81.0},
                       {std::string(metric::k_issue_slots), 80.5},
                       {pipe_inst("fma"), 85.0},
                       {pipe_inst("alu"), 20.0},
                       {pipe_inst("lsu"), 2.0}};
  EXPECT_EQ(explain(v, big_grid(), h100()),
            "Compute workload: busiest pipe FMA at 85 % of its peak (then ALU 20 %, LSU 2.0 %); executed IPC 3.20 warp "
            "instructions per active cycle (3.10 per elapsed cycle), issued IPC 3.25, SM busy 81 %, issue slots busy "
            "80 %. The FMA pipe is close to its limit: fewer instructions on it, or work moved to another pipe, would "
            "make it faster. " +
                std::string("Theoretical occupancy 100 % (limited by warps: 256 threads per block)."));
}

// --set warps (hand-made values of a kernel waiting on __syncthreads): the top reasons,
// each in plain words with what to try.
TEST(KernelExplain, WarpStatesExplainTheTopStallReasons) {
  const MetricValues v{{"gpu__time_duration.sum", 5e4},
                       {std::string(metric::k_warp_cycles_per_issue), 20.0},
                       {std::string(metric::k_issue_active), 0.25},
                       {stall("barrier"), 12.0},
                       {stall("long_scoreboard"), 4.0},
                       {stall("not_selected"), 1.0},
                       {stall("selected"), 1.0}};
  const std::string e = explain(v, big_grid(), h100());
  EXPECT_TRUE(
      e.starts_with("Warp states: a warp issued an instruction every 20.0 cycles; barrier 12.0 cycles (60 %): "
                    "waiting at __syncthreads for the slowest warps of the block"))
      << e;
  EXPECT_TRUE(has(e, "; then long scoreboard 4.00 cycles (20 %): waiting for data from global or local memory")) << e;
  EXPECT_FALSE(has(e, "not selected")) << e;  // 5 %: below the 10 % that is said after the first
  EXPECT_FALSE(has(e, "mostly hidden")) << e;
  // Schedulers issuing almost every cycle: the stalls are hidden, and the text says so.
  MetricValues busy = v;
  busy[std::string(metric::k_issue_active)] = 0.9;
  EXPECT_TRUE(has(explain(busy, big_grid(), h100()),
                  "The schedulers issued on 90 % of the cycles, so these stalls "
                  "are mostly hidden."));
}

}  // namespace
}  // namespace gpuscope::analyze
