#include "core/sample_stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "core/stats.hpp"

namespace gpuscope::core::stats {
namespace {

constexpr double kZ = 2.5758293035489004;

std::vector<double> normal_samples(std::size_t n, double mean, double sigma, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(mean, sigma);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

TEST(MedianStderr, TooFewSamplesOrNonPositiveMedianIsNan) {
  EXPECT_TRUE(std::isnan(median_rel_stderr({})));
  const std::vector<double> two{1.0, 2.0};
  EXPECT_TRUE(std::isnan(median_rel_stderr(two)));
  EXPECT_TRUE(std::isnan(median_stderr(two)));
  const std::vector<double> zero_median{-1.0, 0.0, 1.0};
  EXPECT_TRUE(std::isnan(median_rel_stderr(zero_median)));
  EXPECT_FALSE(std::isnan(median_stderr(zero_median)));
}

TEST(MedianStderr, ConstantSamplesHaveNoNoise) {
  const std::vector<double> v(50, 2.5e-6);
  EXPECT_EQ(median_rel_stderr(v), 0.0);
}

TEST(MedianStderr, HandComputedOrderStatistics) {
  // n = 3: c = round(2 - 2.576 * 0.866) = round(-0.23) → clamped to 1: x(1), x(3).
  const std::vector<double> three{3.0, 1.0, 2.0};
  EXPECT_DOUBLE_EQ(median_stderr(three), (3.0 - 1.0) / (2 * kZ));
  EXPECT_DOUBLE_EQ(median_rel_stderr(three), (3.0 - 1.0) / (2 * kZ) / 2.0);
  // n = 100, values 1..100 shuffled: c = round(50.5 - 2.576 * 5) = round(37.62) = 38,
  // so x(38) = 38 and x(63) = 63.
  std::vector<double> v(100);
  std::iota(v.begin(), v.end(), 1.0);
  std::shuffle(v.begin(), v.end(), std::mt19937(7));
  const std::vector<double> copy = v;
  EXPECT_DOUBLE_EQ(median_stderr(v), (63.0 - 38.0) / (2 * kZ));
  EXPECT_DOUBLE_EQ(median_rel_stderr(v), (63.0 - 38.0) / (2 * kZ) / 50.5);
  EXPECT_EQ(v, copy);  // input untouched
}

TEST(MedianStderr, MatchesNormalTheoryOnNormalData) {
  // For normal data the standard error of the median is sqrt(pi/2) * sigma / sqrt(n).
  // One estimate varies by ~10 % (it rests on ~2z*sqrt(n)/2 order statistics), so
  // average 50 independent runs.
  const std::size_t n = 1000;
  double sum = 0.0;
  for (unsigned seed = 1; seed <= 50; ++seed) sum += median_stderr(normal_samples(n, 100.0, 1.0, seed));
  const double expected = std::sqrt(std::acos(-1.0) / 2.0) / std::sqrt(double(n));
  EXPECT_NEAR(sum / 50.0, expected, 0.07 * expected);
}

TEST(MedianStderr, IsCalibratedAgainstTheSpreadOfMediansAcrossRuns) {
  // 400 independent runs of 101 samples from a skewed (lognormal) distribution: the
  // estimator's average must match the actual standard deviation of the run medians.
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(0.0, 0.5);
  std::vector<double> medians, estimates;
  for (int run = 0; run < 400; ++run) {
    std::vector<double> v(101);
    for (double& x : v) x = dist(rng);
    medians.push_back(median(v));
    estimates.push_back(median_stderr(v));
  }
  const double actual = stddev(medians);
  EXPECT_NEAR(mean(estimates), actual, 0.2 * actual);
}

TEST(MedianStderr, HeavyTailsDoNotInflateIt) {
  // 5 % of samples 10x slower (preemption, clock dips): the mean's standard error is
  // dominated by them, the median's is not.
  auto v = normal_samples(1000, 100.0, 0.5, 3);
  for (std::size_t i = 0; i < v.size(); i += 20) v[i] = 1000.0;
  const double mean_rel = stddev(v) / std::sqrt(double(v.size())) / mean(v);
  const double median_rel = median_rel_stderr(v);
  EXPECT_LT(median_rel, 0.001);
  EXPECT_GT(mean_rel, 10 * median_rel);
}

TEST(StopRule, Names) {
  EXPECT_EQ(stop_rule_name(StopRule::kContinue), "continue");
  EXPECT_EQ(stop_rule_name(StopRule::kConverged), "converged");
  EXPECT_EQ(stop_rule_name(StopRule::kBudget), "budget");
  EXPECT_EQ(stop_rule_name(StopRule::kMaxSamples), "max_samples");
}

TEST(StopRule, ConstantStreamConvergesAtMinSamples) {
  std::vector<double> v;
  StopRule rule = StopRule::kContinue;
  while (rule == StopRule::kContinue) {
    v.push_back(1e-5);
    rule = stop_rule(v, 0.001 * double(v.size()), 0.005, 1.0, 10, 100000);
  }
  EXPECT_EQ(rule, StopRule::kConverged);
  EXPECT_EQ(v.size(), 10u);
}

// Feeds a sample stream to the rule the way the timing engine does; returns (rule, n).
template <class Next>
std::pair<StopRule, std::size_t> run_stream(Next next, double sample_cost_s, double budget_s, int min_samples,
                                            int max_samples, double max_rel = 0.005) {
  std::vector<double> v;
  for (;;) {
    v.push_back(next(v.size()));
    const StopRule rule = stop_rule(v, sample_cost_s * double(v.size()), max_rel, budget_s, min_samples, max_samples);
    if (rule != StopRule::kContinue) return {rule, v.size()};
  }
}

TEST(StopRule, NormalNoiseConvergesAfterTheExpectedNumberOfSamples) {
  // 2 % relative noise; 0.5 % target → n ≈ (1.2533 * 0.02 / 0.005)^2 ≈ 25.
  std::mt19937_64 rng(11);
  std::normal_distribution<double> dist(1.0, 0.02);
  const auto [rule, n] = run_stream([&](std::size_t) { return dist(rng); }, 1e-4, 1.0, 10, 100000);
  EXPECT_EQ(rule, StopRule::kConverged);
  EXPECT_GE(n, 12u);
  EXPECT_LE(n, 60u);
}

TEST(StopRule, HeavyTailedStreamStillConverges) {
  // Cauchy noise has no mean or variance; the median is still well defined.
  std::mt19937_64 rng(5);
  std::cauchy_distribution<double> dist(1.0, 0.01);
  const auto [rule, n] = run_stream([&](std::size_t) { return std::max(dist(rng), 0.5); }, 1e-4, 10.0, 10, 100000);
  EXPECT_EQ(rule, StopRule::kConverged);
  EXPECT_LE(n, 100u);
}

TEST(StopRule, DriftLargerThanTheTargetNeverLooksConverged) {
  // Times growing 1 % per sample (a heating GPU): the spread of the order statistics
  // grows with n as fast as the median, so the rule must not claim convergence and the
  // budget ends the run. (A drift far below the target noise is invisible to any
  // order-free estimator and ends as "converged".)
  const auto [rule, n] = run_stream([](std::size_t i) { return 1.0 + 1e-2 * double(i); }, 1e-3, 0.5, 10, 100000);
  EXPECT_EQ(rule, StopRule::kBudget);
  EXPECT_EQ(n, 500u);
}

TEST(StopRule, MaxSamplesAndBudgetOrder) {
  std::vector<double> noisy{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0};
  EXPECT_EQ(stop_rule(noisy, 0.5, 0.005, 1.0, 5, 20), StopRule::kContinue);
  EXPECT_EQ(stop_rule(noisy, 0.5, 0.005, 1.0, 5, 10), StopRule::kMaxSamples);
  EXPECT_EQ(stop_rule(noisy, 1.0, 0.005, 1.0, 5, 20), StopRule::kBudget);
  EXPECT_EQ(stop_rule(noisy, 2.0, 0.005, 1.0, 5, 10), StopRule::kMaxSamples);  // both: max first
  // A budget spent before min_samples still stops (a 0.6 s kernel with a 1 s budget).
  const std::vector<double> slow{0.6, 0.6};
  EXPECT_EQ(stop_rule(slow, 1.2, 0.005, 1.0, 10, 100), StopRule::kBudget);
  // Converged wins over the other reasons when it holds on the last sample.
  const std::vector<double> flat(10, 1.0);
  EXPECT_EQ(stop_rule(flat, 5.0, 0.005, 1.0, 5, 10), StopRule::kConverged);
}

TEST(StopRule, ConvergenceTestCadence) {
  // Above 127 samples the O(n) test runs every 2^(floor(log2 n) - 6) samples, and always
  // when the run would stop anyway.
  const std::vector<double> flat129(129, 1.0), flat130(130, 1.0), flat1025(1025, 1.0), flat1040(1040, 1.0);
  EXPECT_EQ(stop_rule(flat129, 0.1, 0.005, 1.0, 10, 100000), StopRule::kContinue);
  EXPECT_EQ(stop_rule(flat130, 0.1, 0.005, 1.0, 10, 100000), StopRule::kConverged);
  EXPECT_EQ(stop_rule(flat1025, 0.1, 0.005, 1.0, 10, 100000), StopRule::kContinue);
  EXPECT_EQ(stop_rule(flat1040, 0.1, 0.005, 1.0, 10, 100000), StopRule::kConverged);  // 1040 = 65 * 16
  EXPECT_EQ(stop_rule(flat129, 1.0, 0.005, 1.0, 10, 100000), StopRule::kConverged);
  EXPECT_EQ(stop_rule(flat129, 0.1, 0.005, 1.0, 10, 129), StopRule::kConverged);
}

TEST(StopRule, BadOptionsThrowNamingTheOption) {
  const std::vector<double> v{1.0, 1.0, 1.0};
  auto message = [&](auto call) {
    try {
      (void)call();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(message([&] { return stop_rule(v, 0, -0.1, 1.0, 1, 10); }).find("max_rel_stderr"), std::string::npos);
  EXPECT_NE(message([&] { return stop_rule(v, 0, NAN, 1.0, 1, 10); }).find("max_rel_stderr"), std::string::npos);
  EXPECT_NE(message([&] { return stop_rule(v, 0, 0.01, 0.0, 1, 10); }).find("budget_s"), std::string::npos);
  EXPECT_NE(message([&] { return stop_rule(v, 0, 0.01, 1.0, 0, 10); }).find("min_samples"), std::string::npos);
  EXPECT_NE(message([&] { return stop_rule(v, 0, 0.01, 1.0, 20, 10); }).find("max_samples"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::core::stats
