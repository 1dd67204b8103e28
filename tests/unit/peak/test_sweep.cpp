// The coarse-to-fine sweep of gpuscope peak (peak/sweep.hpp) and the DRAM configurations it
// times (peak/dram_configs.hpp): pruning, the budget, the choice of the best method.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <tuple>

#include "peak/dram_configs.hpp"
#include "peak/sweep.hpp"

using namespace gpuscope;
using peak::detail::Trial;

namespace {

Trial trial(std::string family, double coarse, double fine = kUnknown, bool verified = false) {
  return Trial{std::move(family), "cfg", coarse, fine, verified};
}

}  // namespace

TEST(SelectFinalists, EveryFamilysBestThenTheFastestWithinTheMargin) {
  const std::vector<Trial> trials{trial("memcpy", 4.20), trial("kernel", 4.00), trial("kernel", 4.30),
                                  trial("kernel", 4.25), trial("kernel", 4.10), trial("kernel", kUnknown),
                                  trial("cub", 3.00)};
  // Families' bests (memcpy 0, kernel 2, cub 6) always; then within 3 % of 4.30 (>= 4.171):
  // 3 (4.25) only, as 4 (4.10) is too slow.
  EXPECT_EQ(peak::detail::select_finalists(trials, 5, 0.03), (std::vector<std::size_t>{0, 2, 6, 3}));
  // The limit cuts the others, never a family's best.
  EXPECT_EQ(peak::detail::select_finalists(trials, 2, 0.03), (std::vector<std::size_t>{0, 2, 6}));
  // A NaN (untimed) trial is never a finalist, even alone.
  EXPECT_TRUE(peak::detail::select_finalists(std::vector<Trial>{trial("k", kUnknown)}, 3, 0.5).empty());
}

TEST(ChooseBest, FastestVerifiedWinsAnUnverifiedOnlyWhenNothingIsVerified) {
  std::vector<Trial> trials{trial("a", 1, 4.0, true), trial("b", 1, 4.5, false), trial("c", 1, 4.2, true),
                            trial("d", 1)};
  EXPECT_EQ(peak::detail::choose_best(trials), 2u);  // 4.5 failed its check
  trials[2].verified = false;
  trials[0].verified = false;
  EXPECT_EQ(peak::detail::choose_best(trials), 1u);  // nothing verified: the fastest shows the failure
  EXPECT_FALSE(peak::detail::choose_best(std::vector<Trial>{trial("d", 1)}).has_value());
}

TEST(RunCoarse, StopsAtTheBudgetButTimesEveryFamilyOnce) {
  std::vector<Trial> trials{trial("memcpy", kUnknown), trial("kernel", kUnknown), trial("kernel", kUnknown),
                            trial("kernel", kUnknown), trial("cub", kUnknown),    trial("cub", kUnknown)};
  double clock = 0;
  std::vector<std::size_t> measured;
  const auto stats = peak::detail::run_coarse(
      trials,
      [&](std::size_t i) {
        measured.push_back(i);
        clock += 1.0;  // every trial takes 1 s
        return 10.0 + static_cast<double>(i);
      },
      [&] { return clock; }, 2.5);
  // 0, 1, 2 fit in 2.5 s; 3 is skipped; 4 is cub's first (a family without a number); 5 skipped.
  EXPECT_EQ(measured, (std::vector<std::size_t>{0, 1, 2, 4}));
  EXPECT_EQ(stats.timed, 4u);
  EXPECT_EQ(stats.skipped, 2u);
  EXPECT_DOUBLE_EQ(stats.seconds, 4.0);
  EXPECT_TRUE(std::isnan(trials[3].coarse));
  EXPECT_DOUBLE_EQ(trials[4].coarse, 14.0);
}

TEST(RunCoarse, AFailingTrialStaysUntimedAndSaysWhy) {
  std::vector<Trial> trials{trial("k", kUnknown), trial("k", kUnknown)};
  const auto stats = peak::detail::run_coarse(
      trials,
      [](std::size_t i) -> double {
        if (i == 0) throw std::runtime_error("not supported");
        return 5.0;
      },
      [] { return 0.0; }, 10);
  EXPECT_EQ(stats.timed, 2u);
  EXPECT_TRUE(std::isnan(trials[0].coarse));
  EXPECT_NE(trials[0].label.find("failed: not supported"), std::string::npos);
  EXPECT_DOUBLE_EQ(trials[1].coarse, 5.0);
}

TEST(DescribeFamilies, EveryMethodFastestFirstWithItsCounts) {
  std::vector<Trial> trials{Trial{"cudaMemcpyAsync", "device to device", 4.2e12, 4.29e12, true},
                            Trial{"copy kernel", "16 B x 4", 4.0e12, 4.1e12, true},
                            Trial{"copy kernel", "16 B x 8", 3.9e12, kUnknown, false},
                            Trial{"cub::DeviceTransform", "words", 3.5e12, kUnknown, false}};
  peak::detail::CoarseStats stats;
  stats.timed = 4;
  stats.skipped = 1;
  EXPECT_EQ(peak::detail::describe_families(trials, stats, 1e-9, "GB/s"),
            "methods (GB/s): cudaMemcpyAsync 4290 [device to device], copy kernel 4100 [16 B x 4] (best of 2), "
            "cub::DeviceTransform 3500 coarse [words]; 4 of 4 configurations timed, 1 skipped (time budget)");
  trials[0].verified = false;
  EXPECT_NE(peak::detail::describe_families(trials, stats, 1e-9, "GB/s").find("4290 (NOT VERIFIED)"),
            std::string::npos);
}

TEST(ExplainRateGap, TheClockOrTheKernel) {
  Ceiling bf16, fp16;
  bf16.name = "tensor_bf16";
  fp16.name = "tensor_fp16";
  bf16.measured = 804e12;
  bf16.sm_clock_mhz_begin = bf16.sm_clock_mhz_end = 1755;
  // Same FLOP per cycle, lower clock: the clock (power).
  fp16.measured = 775e12;
  fp16.sm_clock_mhz_begin = fp16.sm_clock_mhz_end = 1755 * 775.0 / 804.0;
  const std::string clock = peak::detail::explain_rate_gap(fp16, bf16, 132);
  EXPECT_NE(clock.find("tensor_fp16 is 3.6 % below tensor_bf16 at the same work per cycle"), std::string::npos)
      << clock;
  EXPECT_NE(clock.find("power limit"), std::string::npos);
  // Same clock, lower rate: the kernel.
  fp16.sm_clock_mhz_begin = fp16.sm_clock_mhz_end = 1755;
  EXPECT_NE(peak::detail::explain_rate_gap(fp16, bf16, 132).find("kernels differ"), std::string::npos);
  // Within 2 %, or a clock unknown: nothing to explain.
  fp16.measured = 795e12;
  EXPECT_EQ(peak::detail::explain_rate_gap(fp16, bf16, 132), "");
  fp16.measured = 700e12;
  fp16.sm_clock_mhz_end = kUnknown;
  EXPECT_EQ(peak::detail::explain_rate_gap(fp16, bf16, 132), "");
}

TEST(DramConfigs, FullSweepCoversEveryDimensionOnceMostPromisingFirst) {
  using peak::detail::CacheHint;
  using peak::detail::DramConfig;
  using peak::detail::DramOp;
  auto occupancy = [](const DramConfig& c) { return c.width * c.unroll >= 16 ? 3 : 8; };
  const auto copy = peak::detail::dram_configs(DramOp::kCopy, false, occupancy);
  std::set<std::tuple<int, int, int, int>> seen;
  for (const DramConfig& c : copy) {
    EXPECT_EQ(c.op, DramOp::kCopy);
    EXPECT_TRUE(seen.insert({c.width, c.unroll, static_cast<int>(c.hint), c.blocks_per_sm}).second)
        << peak::detail::dram_label(c);
    EXPECT_LE(c.blocks_per_sm, occupancy(c));
  }
  // 4 hints x (5 (width, unroll) pairs with occupancy 8: one-shot, 8, 4, 2, 1 blocks per SM,
  // + 32 B x 8 with occupancy 3: one-shot, 3, 2, 1).
  EXPECT_EQ(copy.size(), 4u * (5 * 5 + 4));
  // First: 16-byte accesses, unroll 4 or 8, one-shot or fully occupied.
  EXPECT_EQ(copy.front().width, 1);
  EXPECT_TRUE(copy.front().blocks_per_sm == 0 || copy.front().blocks_per_sm == 8);
  EXPECT_EQ(copy.back().width, 2);
  // Writes have no loads: only the default and streaming stores.
  for (const DramConfig& c : peak::detail::dram_configs(DramOp::kWrite, false, occupancy))
    EXPECT_TRUE(c.hint == CacheHint::kDefault || c.hint == CacheHint::kStreaming);
  // --quick: a small subset.
  const auto quick = peak::detail::dram_configs(DramOp::kRead, true, occupancy);
  EXPECT_EQ(quick.size(), 2u * 3 * 2);  // unroll 4, 8 x 3 hints x (one-shot, fully occupied)
  for (const DramConfig& c : quick) EXPECT_EQ(c.width, 1);
  EXPECT_EQ(peak::detail::dram_label(DramConfig{DramOp::kCopy, 2, 8, CacheHint::kStreaming, 0}),
            "32 B x 8, streaming .cs, one-shot grid");
  EXPECT_DOUBLE_EQ(peak::detail::bytes_in_flight_per_sm(DramConfig{DramOp::kRead, 1, 4, CacheHint::kDefault, 0}, 8),
                   8.0 * 256 * 16 * 4);
}

TEST(RunFine, TheFastestVerifiedFinalistWithEveryMethodsResult) {
  std::vector<Trial> trials{Trial{"memcpy", "d2d", 4.2, kUnknown, false}, Trial{"kernel", "a", 4.3, kUnknown, false},
                            Trial{"kernel", "b", 4.25, kUnknown, false}};
  auto measure = [](std::size_t i) {
    if (i == 2) throw std::runtime_error("launch failed");
    Ceiling c;
    c.name = "dram_copy";
    c.measured = i == 0 ? 4.29 : 4.4;
    c.verified = i == 0;  // the kernel's result was wrong: memcpy wins
    c.method = "m" + std::to_string(i);
    return c;
  };
  const std::vector<std::size_t> finalists{0, 1, 2};
  const std::optional<Ceiling> best =
      peak::detail::run_fine(trials, finalists, measure, peak::detail::CoarseStats{3, 0, 1.0}, 1.0, "u");
  ASSERT_TRUE(best.has_value());
  EXPECT_DOUBLE_EQ(best->measured, 4.29);
  EXPECT_EQ(best->method.rfind("m0; methods (u): kernel 4.4 (NOT VERIFIED) [a] (best of 2), memcpy 4.29 [d2d]", 0), 0u)
      << best->method;
  EXPECT_NE(trials[2].label.find("failed: launch failed"), std::string::npos);
  EXPECT_TRUE(std::isnan(trials[2].fine));
  // No finalist could be timed: nothing to choose.
  std::vector<Trial> none{Trial{"k", "x", 1, kUnknown, false}};
  EXPECT_FALSE(peak::detail::run_fine(
                   none, std::vector<std::size_t>{0}, [](std::size_t) -> Ceiling { throw std::runtime_error("x"); }, {},
                   1.0, "u")
                   .has_value());
}

// The tensor ceilings' burst: a faster burst replaces the value, samples, spread and clocks and
// keeps the GEMM's check; a slower one only leaves a note.
TEST(WithBurst, AFasterBurstIsTheValueAndTheMethodSaysBoth) {
  Ceiling sustained;
  sustained.name = "tensor_bf16";
  sustained.measured = 743e12;
  sustained.samples = 10;
  sustained.rel_spread = 0.0024;
  sustained.sm_clock_mhz_begin = 1755;
  sustained.sm_clock_mhz_end = 1560;
  sustained.mem_clock_mhz = 2619;
  sustained.verified = true;
  sustained.method = "cuBLASLt matmul, NN layout";
  Ceiling burst;
  burst.measured = 790e12;
  burst.samples = 20;
  burst.rel_spread = 0.01;
  burst.sm_clock_mhz_begin = 1980;
  burst.sm_clock_mhz_end = 1755;

  using peak::detail::with_burst;
  const Ceiling out = with_burst(sustained, burst, 1.0, 1e-12, "TFLOP/s");
  EXPECT_DOUBLE_EQ(out.measured, 790e12);
  EXPECT_EQ(out.samples, 20);
  EXPECT_DOUBLE_EQ(out.rel_spread, 0.01);
  EXPECT_DOUBLE_EQ(out.sm_clock_mhz_begin, 1980);
  EXPECT_DOUBLE_EQ(out.sm_clock_mhz_end, 1755);
  EXPECT_DOUBLE_EQ(out.mem_clock_mhz, 2619);  // the burst read none: the sweep's stays
  EXPECT_TRUE(out.verified);
  EXPECT_EQ(out.method,
            "cuBLASLt matmul, NN layout; the value is a burst (median of 20 single GEMMs after 1 s idle, as "
            "torch.matmul is timed) at SM clock 1755 MHz; over the sweep's seconds of GEMMs (power-limited clock) "
            "it was 743 TFLOP/s at SM clock 1560 MHz");

  burst.measured = 700e12;
  const Ceiling kept = with_burst(sustained, burst, 1.0, 1e-12, "TFLOP/s");
  EXPECT_DOUBLE_EQ(kept.measured, 743e12);
  EXPECT_EQ(kept.samples, 10);
  EXPECT_EQ(kept.method,
            "cuBLASLt matmul, NN layout; a burst (median of 20 single GEMMs after 1 s idle, as torch.matmul is timed) "
            "reached 700 TFLOP/s at SM clock 1755 MHz: the sweep's value is kept");

  burst.measured = kUnknown;
  EXPECT_EQ(with_burst(sustained, burst, 1.0, 1e-12, "TFLOP/s").method, sustained.method);
}
