// core/iteration_detector on hand-built launch sequences: a loop with jitter and a different
// warm-up, nested loops (layers inside a step, decode steps inside a request), two streams and
// two threads, occasional extra kernels, no repeat at all, tiny inputs and a million launches.
#include "core/iteration_detector.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace gpuscope::core {
namespace {

// Builds one process's launches: each kernel runs `dur` ns after the previous one ends plus
// `gap` ns; idle() adds GPU idle (a host sync, Python between steps).
struct Trace {
  std::vector<LaunchToken> v;
  std::int64_t t = 1'000'000;
  std::uint64_t rng = 12345;

  std::int64_t jitter(std::int64_t ns, int percent) {  // ns ± percent, deterministic
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    const auto r = static_cast<std::int64_t>((rng >> 33) % (2 * percent + 1)) - percent;
    return ns + ns * r / 100;
  }
  void kernel(std::int64_t token, std::int64_t dur = 10'000, std::int64_t lane = 1, std::int64_t gap = 1'000) {
    v.push_back({token, t, t + dur, lane, 0});
    t += dur + gap;
  }
  void idle(std::int64_t ns) { t += ns; }
  // A unit of `n` launches: tokens first..first+n-1, the first one repeated every 7 (as an
  // elementwise kernel is, several times per step).
  void unit(std::int64_t first, int n, int percent = 0) {
    for (int i = 0; i < n; ++i) kernel(i % 7 == 3 ? first : first + i, jitter(10'000, percent));
  }
};

// The iterations found in the trace's launches (a failure, and no iterations, when none).
IterationStructure found_in(const Trace& tr) {
  const IterationDetection d = detect_iterations(tr.v);
  if (!d.found) ADD_FAILURE() << "no iterations found";
  return d.found.value_or(IterationStructure{});
}

TEST(IterationDetector, LoopWithJitterAndDifferentWarmup) {
  Trace tr;
  for (int i = 0; i < 30; ++i) tr.kernel(5000 + i % 11);  // initialisation: not a loop
  for (int w = 0; w < 2; ++w) {                           // warm-up: the step plus autotuning kernels in its middle
    tr.unit(100, 20);
    for (int a = 0; a < 12; ++a) tr.kernel(900 + a, 50'000);
    tr.unit(120, 27);
    tr.idle(200'000);
  }
  std::vector<std::int64_t> starts;
  for (int s = 0; s < 20; ++s) {
    starts.push_back(tr.t);
    tr.unit(100, 20, 10);
    tr.unit(120, 27, 10);
    tr.idle(tr.jitter(200'000, 10));
  }
  const IterationStructure s = found_in(tr);
  EXPECT_EQ(s.unit_launches, 47u);
  EXPECT_EQ(s.steady, 20u);
  EXPECT_EQ(s.warmup, 2u);
  EXPECT_EQ(s.outliers, 0u);
  ASSERT_EQ(s.iterations.size(), 22u);
  EXPECT_EQ(s.lane, 1);
  EXPECT_EQ(s.inner_unit_launches, 0u);
  // Iterations begin at the step's first kernel (the idle before it), on the trace clock.
  for (int k = 0; k < 20; ++k)
    EXPECT_EQ(s.iterations[2 + static_cast<std::size_t>(k)].start_ns, starts[static_cast<std::size_t>(k)]);
  EXPECT_GT(s.iterations[0].differences, 10u);
  const auto w = steady_iterations_window(s);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->first, starts.front());
  EXPECT_EQ(w->second, s.iterations.back().end_ns);
  EXPECT_NEAR(static_cast<double>(s.median_wall_ns), 47 * 11'000 + 200'000, 40'000);
}

TEST(IterationDetector, LoopWithoutIdleStartsAtTheFirstLaunchAndCpuGapsSetThePhase) {
  Trace tr;  // GPU-bound, never idle: the iteration begins with the kernel the lane ran first
  for (int s = 0; s < 5; ++s)
    for (int k = 0; k < 3; ++k) tr.kernel(10 + k, 10'000, 1, 0);
  IterationDetection d = detect_iterations(tr.v);
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.found->unit_launches, 3u);
  EXPECT_EQ(d.found->iterations.size(), 5u);
  EXPECT_EQ(d.found->iterations[0].first, 0u);

  // Same GPU work, but the host pauses 300 µs before each kernel 12: iterations start there.
  std::int64_t cpu = 1;
  for (std::size_t i = 0; i < tr.v.size(); ++i) {
    cpu += tr.v[i].token == 12 ? 300'000 : 4'000;
    tr.v[i].launch_ns = cpu;
  }
  d = detect_iterations(tr.v);
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.found->iterations.size(), 4u);  // 10, 11 before the first 12 and the last 12 alone are no whole iteration
  EXPECT_EQ(d.found->iterations[0].first, 2u);
  EXPECT_EQ(d.found->iterations[1].first, 5u);
}

TEST(IterationDetector, IterationsStartAfterTheBlockingCopy) {
  Trace tr;  // forward, a pause before the optimizer (longer than the one after the copy), .item()
  std::vector<std::int64_t> starts;
  for (int s = 0; s < 6; ++s) {
    starts.push_back(tr.t);
    for (int k = 0; k < 5; ++k) tr.kernel(10 + k);
    tr.idle(500'000);
    for (int k = 0; k < 3; ++k) tr.kernel(20 + k);
    tr.kernel(-1, 2'000);
    tr.v.back().blocking = true;
    tr.idle(300'000);
  }
  IterationDetection d = detect_iterations(tr.v);
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.found->unit_launches, 9u);
  ASSERT_EQ(d.found->iterations.size(), 6u);
  for (std::size_t k = 0; k < 6; ++k) EXPECT_EQ(d.found->iterations[k].start_ns, starts[k]);
  for (LaunchToken& l : tr.v) l.blocking = false;  // no copy the host waited for: the longest pause wins
  d = detect_iterations(tr.v);
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.found->iterations[0].first, 5u);
}

TEST(IterationDetector, OtherThreadsWorkBelongsToTheIteration) {
  Trace tr;  // PyTorch's autograd thread launches the backward pass while the main thread waits
  for (int s = 0; s < 5; ++s) {
    for (int k = 0; k < 4; ++k)
      tr.v.push_back({10 + k, tr.t + k * 20'000, tr.t + k * 20'000 + 10'000, 1, tr.t + k * 20'000 - 5'000});
    tr.t += 80'000;
    for (int k = 0; k < 6; ++k)
      tr.v.push_back({30 + k, tr.t + k * 20'000, tr.t + k * 20'000 + 10'000, 2, tr.t + k * 20'000 - 5'000});
    tr.t += 120'000 + 400'000;  // 400 µs of Python before the optimizer: longer than between steps
    for (int k = 0; k < 2; ++k)
      tr.v.push_back({50 + k, tr.t + k * 20'000, tr.t + k * 20'000 + 10'000, 1, tr.t + k * 20'000 - 5'000});
    tr.t += 40'000;
    tr.v.push_back({-1, tr.t, tr.t + 2'000, 1, tr.t - 5'000, true});
    tr.t += 300'000;
  }
  const IterationStructure s = found_in(tr);
  EXPECT_EQ(s.lane, 1);
  EXPECT_EQ(s.unit_launches, 7u);
  EXPECT_EQ(s.unit_other_launches, 6u);
  ASSERT_EQ(s.iterations.size(), 5u);
  EXPECT_EQ(s.iterations[0].first, 0u);
  EXPECT_EQ(s.iterations[0].start_ns, tr.v[0].start_ns);
  EXPECT_EQ(s.iterations[0].end_ns, tr.v[12].end_ns);  // the .item() copy
}

TEST(IterationDetector, AnOuterLoopOfTwoRepeatsIsNotTheIteration) {
  Trace tr;  // 2 epochs of 10 steps and an evaluation: the step is the iteration
  for (int e = 0; e < 2; ++e) {
    for (int s = 0; s < 10; ++s) {
      for (int k = 0; k < 5; ++k) tr.kernel(10 + k);
      tr.idle(50'000);
    }
    for (int k = 0; k < 30; ++k) tr.kernel(500 + k % 4);
  }
  const IterationDetection d = detect_iterations(tr.v);
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.found->unit_launches, 5u);
  EXPECT_EQ(d.found->iterations.size(), 20u);
  EXPECT_GE(d.found->steady, 18u);
}

TEST(IterationDetector, SlowFirstIterationIsWarmupAndSlowLaterOneIsOutlier) {
  Trace tr;
  for (int s = 0; s < 10; ++s) {
    for (int i = 0; i < 8; ++i) tr.kernel(10 + i, s == 0 ? 80'000 : 10'000);  // step 0: 8x slower
    if (s == 6) tr.idle(2'000'000);                                           // a pause after step 6
    tr.idle(100'000);
  }
  const IterationStructure s = found_in(tr);
  EXPECT_EQ(s.unit_launches, 8u);
  ASSERT_EQ(s.iterations.size(), 10u);
  EXPECT_EQ(s.iterations[0].kind, IterationKind::kWarmup);
  EXPECT_EQ(s.iterations[0].differences, 0u);  // same kernels: warm-up by its time alone
  EXPECT_EQ(s.iterations[6].kind, IterationKind::kOutlier);
  EXPECT_EQ(s.steady, 8u);
}

// A loop whose iteration (`unit` launches, `iterations` of them) holds an inner unit repeated.
void expect_nested(const IterationDetection& d, std::size_t unit, std::size_t iterations, std::size_t inner,
                   std::size_t repeats) {
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.found->unit_launches, unit);
  EXPECT_EQ(d.found->iterations.size(), iterations);
  EXPECT_EQ(d.found->steady, iterations);
  EXPECT_EQ(d.found->inner_unit_launches, inner);
  EXPECT_EQ(d.found->inner_repeats, repeats);
}

// One request of a decode loop: it arrives, its prefill (8 launches), `tokens` decode steps (6).
void request(Trace& tr, int tokens) {
  tr.idle(1'000'000);
  for (int k = 0; k < 8; ++k) tr.kernel(200 + k, 40'000);
  for (int t = 0; t < tokens; ++t) {
    for (int k = 0; k < 6; ++k) tr.kernel(300 + k);
    tr.idle(50'000);
  }
}

TEST(IterationDetector, LayersInsideAStepPickTheStepAndNameTheLayer) {
  Trace tr;
  for (int s = 0; s < 6; ++s) {
    tr.kernel(1);  // embedding
    for (int l = 0; l < 12; ++l)
      for (int k = 0; k < 20; ++k) tr.kernel(100 + k);  // 12 identical layers
    tr.kernel(2);                                       // head
    tr.idle(300'000);
  }
  const IterationDetection d = detect_iterations(tr.v);
  expect_nested(d, 242, 6, 20, 12);
  EXPECT_EQ(d.found->iterations[0].first, 0u);  // the step starts at the embedding
}

TEST(IterationDetector, DecodeLoopIsOneIterationPerRequestWithTokensInside) {
  Trace tr;
  for (int r = 0; r < 5; ++r) request(tr, 10);
  const IterationDetection d = detect_iterations(tr.v);
  expect_nested(d, 68, 5, 6, 10);
  for (const Iteration& it : d.found->iterations) EXPECT_EQ(it.first % 68, 0u);  // each begins at its prefill
}

TEST(IterationDetector, DecodeLoopWithATokenCopyPerStepIsStillPerRequest) {
  Trace tr;  // each decode step ends copying its token to the host, which waits for it
  for (int r = 0; r < 6; ++r) {
    tr.idle(2'000'000);
    for (int k = 0; k < 30; ++k) tr.kernel(200 + k % 17, 30'000);
    tr.kernel(99, 2'000);
    tr.v.back().blocking = true;
    for (int t = 0; t < 20; ++t) {
      for (int k = 0; k < 25; ++k) tr.kernel(300 + k % 11);
      tr.kernel(99, 2'000);
      tr.v.back().blocking = true;
      tr.idle(80'000);
    }
  }
  const IterationDetection d = detect_iterations(tr.v);
  expect_nested(d, 551, 6, 26, 20);
  for (const Iteration& it : d.found->iterations) EXPECT_EQ(it.first % 551, 0u);  // after the request's idle
}

TEST(IterationDetector, TorchCompileFirstStepsRunOtherKernels) {
  Trace tr;  // two eager steps (and compilation) before the compiled graph's 30 fused kernels
  for (int s = 0; s < 2; ++s) {
    for (int k = 0; k < 120; ++k) tr.kernel(1000 + k % 23);
    tr.kernel(99, 2'000);
    tr.v.back().blocking = true;
    tr.idle(5'000'000);
  }
  for (int s = 0; s < 30; ++s) {
    for (int k = 0; k < 30; ++k) tr.kernel(2000 + k, 20'000);
    tr.kernel(99, 2'000);
    tr.v.back().blocking = true;
    tr.idle(200'000);
  }
  const IterationStructure s = found_in(tr);
  EXPECT_EQ(s.unit_launches, 31u);
  ASSERT_EQ(s.iterations.size(), 31u);  // the first eager step has no copy before it: not an iteration
  EXPECT_EQ(s.iterations[0].first, 121u);
  EXPECT_EQ(s.iterations[0].kind, IterationKind::kWarmup);
  EXPECT_EQ(s.iterations[1].first, 242u);
  EXPECT_EQ(s.steady, 30u);
}

TEST(IterationDetector, DecodeLoopOfUnequalRequestsIsPerToken) {
  Trace tr;
  for (int n : {9, 14, 6, 11}) request(tr, n);
  const IterationStructure s = found_in(tr);
  EXPECT_EQ(s.unit_launches, 6u);  // requests differ in length: the token step is the unit
  EXPECT_EQ(s.iterations.size(), 40u);
  // The step before each next request's prefill waits for it: those are outliers.
  EXPECT_EQ(s.outliers, 3u);
  EXPECT_EQ(s.steady, 37u);
}

TEST(IterationDetector, TwoStreamsFromOneThread) {
  Trace tr;
  for (int s = 0; s < 10; ++s) {
    const std::int64_t t0 = tr.t;
    tr.v.push_back({1, t0, t0 + 30'000, 7, 0});           // stream 1
    tr.v.push_back({2, t0 + 1'000, t0 + 9'000, 7, 0});    // stream 2, overlapping
    tr.v.push_back({3, t0 + 30'000, t0 + 40'000, 7, 0});  // stream 1
    tr.v.push_back({4, t0 + 9'000, t0 + 12'000, 7, 0});   // stream 2
    tr.t = t0 + 100'000;
  }
  const IterationDetection d = detect_iterations(tr.v);
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.found->unit_launches, 4u);
  EXPECT_EQ(d.found->iterations.size(), 10u);
  EXPECT_EQ(d.found->steady, 10u);
  EXPECT_EQ(d.found->iterations[3].start_ns, 1'000'000 + 3 * 100'000);
  EXPECT_EQ(d.found->iterations[3].end_ns, 1'000'000 + 3 * 100'000 + 40'000);
}

TEST(IterationDetector, TwoThreadsPickTheOneWithMoreSteadyWork) {
  Trace tr;
  for (int s = 0; s < 12; ++s) {
    tr.kernel(-1, 5'000, /*lane=*/22);  // a loader thread's copy, once per step
    for (int k = 0; k < 6; ++k) tr.kernel(40 + k, 10'000, /*lane=*/11);
    tr.idle(100'000);
  }
  const IterationDetection d = detect_iterations(tr.v);
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.found->lane, 11);
  EXPECT_EQ(d.found->lanes, 2u);
  EXPECT_EQ(d.found->unit_launches, 6u);
  EXPECT_EQ(d.found->iterations.size(), 12u);
}

TEST(IterationDetector, OccasionalExtraLaunchesAreNoiseNotAnOuterLoop) {
  Trace tr;
  for (int s = 0; s < 30; ++s) {
    tr.unit(100, 20);
    if (s % 5 == 4) tr.kernel(-2, 3'000);  // a logging .item() copy every 5 steps
    if (s == 17) tr.kernel(777);           // a one-off kernel
    tr.unit(120, 27);
    tr.idle(150'000);
  }
  const IterationStructure s = found_in(tr);
  EXPECT_EQ(s.unit_launches, 47u);
  ASSERT_EQ(s.iterations.size(), 30u);
  EXPECT_EQ(s.steady, 30u);
  EXPECT_EQ(s.noisy, 7u);  // 6 with the copy, 1 with the one-off kernel
  EXPECT_EQ(s.iterations[4].differences, 1u);
  EXPECT_EQ(s.iterations[4].launches, 48u);
  EXPECT_EQ(s.inner_unit_launches, 0u);
}

TEST(IterationDetector, NoRepeatSaysSo) {
  Trace random;
  std::uint64_t x = 99;
  for (int i = 0; i < 2000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    random.kernel(static_cast<std::int64_t>((x >> 33) % 50));
  }
  IterationDetection d = detect_iterations(random.v);
  EXPECT_FALSE(d.found);
  EXPECT_EQ(d.why, NoIterations::kNoRepeat);
  EXPECT_EQ(d.launches, 2000u);

  Trace distinct;  // every kernel once: a program that runs straight through
  for (int i = 0; i < 500; ++i) distinct.kernel(i);
  d = detect_iterations(distinct.v);
  EXPECT_FALSE(d.found);
  EXPECT_EQ(d.why, NoIterations::kNoRepeat);
}

TEST(IterationDetector, TinyInputs) {
  EXPECT_EQ(detect_iterations({}).why, NoIterations::kTooFewLaunches);
  Trace two;
  two.kernel(1);
  two.kernel(1);
  EXPECT_FALSE(detect_iterations(two.v).found);
  EXPECT_EQ(detect_iterations(two.v).why, NoIterations::kTooFewLaunches);

  Trace abab;  // repeats twice only
  for (int i = 0; i < 2; ++i) {
    abab.kernel(1);
    abab.kernel(2);
  }
  EXPECT_FALSE(detect_iterations(abab.v).found);

  Trace three;  // three launches of one kernel: three iterations of one launch
  for (int i = 0; i < 3; ++i) three.kernel(5);
  const IterationDetection d = detect_iterations(three.v);
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.found->unit_launches, 1u);
  EXPECT_EQ(d.found->iterations.size(), 3u);

  Trace ab3;
  for (int i = 0; i < 3; ++i) {
    ab3.kernel(1);
    ab3.kernel(2);
  }
  ASSERT_TRUE(detect_iterations(ab3.v).found);
  EXPECT_EQ(detect_iterations(ab3.v).found->unit_launches, 2u);
}

TEST(IterationDetector, AMillionLaunches) {
  Trace tr;
  tr.v.reserve(1'010'000);
  for (int s = 0; s < 10'000; ++s) {
    for (int k = 0; k < 100; ++k) tr.kernel(k % 9 == 0 ? 1000 : 1000 + k, 5'000, 1, 500);
    if (s % 97 == 0) tr.kernel(-3, 2'000);
    tr.idle(20'000);
  }
  const IterationDetection d = detect_iterations(tr.v);
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.found->unit_launches, 100u);
  EXPECT_EQ(d.found->iterations.size(), 10'000u);
  EXPECT_GE(d.found->steady, 9'990u);
}

}  // namespace
}  // namespace gpuscope::core
