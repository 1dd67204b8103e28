// core/metric_attribution on hand-computable cases: a kernel inside one sample, across two,
// in a gap, at the edges, bytes attribution, concurrent kernels, skipped samples, unsorted
// input, the device-wide window summary and trace-clock times (~1.7e18 ns).
#include "core/metric_attribution.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace gpuscope::core {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<KernelMetricShare> one_key(const std::vector<MetricSample>& s, const std::vector<KernelInterval>& k) {
  return attribute_metric(s, k, 1);
}

TEST(AttributeMetric, KernelInsideOneSampleGetsItsValue) {
  const auto r = one_key({{0, 100, 50.0}}, {{20, 60, 0}});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].instances, 1);
  EXPECT_EQ(r[0].kernel_ns, 40);
  EXPECT_EQ(r[0].metric.covered_ns, 40);
  EXPECT_DOUBLE_EQ(r[0].metric.weight_ns, 40.0);
  EXPECT_DOUBLE_EQ(r[0].metric.value_ns, 2000.0);
  EXPECT_DOUBLE_EQ(r[0].metric.mean(), 50.0);
  EXPECT_DOUBLE_EQ(r[0].metric.covered_share(r[0].kernel_ns), 1.0);
  EXPECT_EQ(r[0].concurrent_ns, 0);
}

TEST(AttributeMetric, KernelAcrossTwoSamplesIsTimeWeighted) {
  // 50 ns at 20 % and 50 ns at 60 %: (20·50 + 60·50) / 100 = 40 %.
  const auto r = one_key({{0, 100, 20.0}, {100, 200, 60.0}}, {{50, 150, 0}});
  EXPECT_EQ(r[0].metric.covered_ns, 100);
  EXPECT_DOUBLE_EQ(r[0].metric.mean(), 40.0);
  // 30 ns at 20 %, 70 ns at 60 %: (600 + 4200) / 100 = 48 %.
  EXPECT_DOUBLE_EQ(one_key({{0, 100, 20.0}, {100, 200, 60.0}}, {{70, 170, 0}})[0].metric.mean(), 48.0);
}

TEST(AttributeMetric, GapsBetweenSamplesAreUnknownNotZero) {
  const std::vector<MetricSample> s{{0, 100, 80.0}, {200, 300, 40.0}};
  const auto in_gap = one_key(s, {{120, 180, 0}});
  EXPECT_EQ(in_gap[0].kernel_ns, 60);
  EXPECT_EQ(in_gap[0].metric.covered_ns, 0);
  EXPECT_TRUE(std::isnan(in_gap[0].metric.mean()));
  EXPECT_TRUE(std::isnan(in_gap[0].metric.rate()));
  // [50, 250): 50 ns of each sample, the 100 ns gap unknown: the mean is of the 100 covered ns.
  const auto across = one_key(s, {{50, 250, 0}});
  EXPECT_EQ(across[0].metric.covered_ns, 100);
  EXPECT_DOUBLE_EQ(across[0].metric.covered_share(across[0].kernel_ns), 0.5);
  EXPECT_DOUBLE_EQ(across[0].metric.mean(), 60.0);
  // Before the first sample and after the last.
  EXPECT_EQ(one_key(s, {{-50, -10, 0}})[0].metric.covered_ns, 0);
  EXPECT_EQ(one_key(s, {{300, 400, 0}})[0].metric.covered_ns, 0);
}

TEST(AttributeMetric, SamplesTouchingAKernelsEdgesDoNotCover) {
  // Samples and kernels are half-open: [0, 100) and [100, 200) touch without overlapping.
  const std::vector<MetricSample> s{{0, 100, 10.0}, {200, 300, 30.0}};
  EXPECT_EQ(one_key(s, {{100, 200, 0}})[0].metric.covered_ns, 0);
  const auto edge = one_key(s, {{99, 201, 0}});
  EXPECT_EQ(edge[0].metric.covered_ns, 2);
  EXPECT_DOUBLE_EQ(edge[0].metric.mean(), 20.0);  // 1 ns at 10, 1 ns at 30
}

TEST(AttributeMetric, BytesAreTheOverlappingShareOfEachSample) {
  // 1000 bytes in [0, 100) and 4000 bytes in [100, 200): 10 and 40 bytes per ns.
  const std::vector<MetricSample> s{{0, 100, 1000.0}, {100, 200, 4000.0}};
  const auto r = one_key(s, {{0, 25, 0}});
  EXPECT_DOUBLE_EQ(r[0].metric.bytes, 250.0);
  EXPECT_DOUBLE_EQ(r[0].metric.rate(), 10.0);  // bytes per ns = GB/s
  const auto across = one_key(s, {{50, 150, 0}});
  EXPECT_DOUBLE_EQ(across[0].metric.bytes, 500.0 + 2000.0);
  EXPECT_DOUBLE_EQ(across[0].metric.rate(), 25.0);
  // A whole sample inside the kernel gives all its bytes.
  EXPECT_DOUBLE_EQ(one_key(s, {{-10, 300, 0}})[0].metric.bytes, 5000.0);
}

TEST(AttributeMetric, ConcurrentKernelsEachGetTheWholeShare) {
  // A [0, 100) and B [50, 150) under one sample of 2000 bytes over [0, 200).
  const std::vector<MetricSample> s{{0, 200, 2000.0}};
  const auto r = attribute_metric(s, std::vector<KernelInterval>{{0, 100, 0}, {50, 150, 1}}, 2);
  EXPECT_DOUBLE_EQ(r[0].metric.bytes, 1000.0);
  EXPECT_DOUBLE_EQ(r[1].metric.bytes, 1000.0);  // 2000 attributed, 1500 moved in [0, 150)
  EXPECT_EQ(r[0].concurrent_ns, 50);
  EXPECT_EQ(r[1].concurrent_ns, 50);
  EXPECT_EQ(r[0].metric.covered_ns, 100);
  EXPECT_EQ(r[1].metric.covered_ns, 100);
}

TEST(AttributeMetric, ConcurrencyIsPerKernelAndSummedPerKey) {
  // A [0, 100) with B [10, 20) and C [30, 40) inside it; B and C share key 1.
  const std::vector<KernelInterval> k{{0, 100, 0}, {10, 20, 1}, {30, 40, 1}};
  const auto r = attribute_metric({}, k, 2);
  EXPECT_EQ(r[0].instances, 1);
  EXPECT_EQ(r[0].concurrent_ns, 20);
  EXPECT_EQ(r[1].instances, 2);
  EXPECT_EQ(r[1].kernel_ns, 20);
  EXPECT_EQ(r[1].concurrent_ns, 20);
  // Back to back is not concurrent.
  const auto seq = attribute_metric({}, std::vector<KernelInterval>{{0, 10, 0}, {10, 20, 1}}, 2);
  EXPECT_EQ(seq[0].concurrent_ns, 0);
  EXPECT_EQ(seq[1].concurrent_ns, 0);
}

TEST(AttributeMetric, InstancesOfAKeyAddUp) {
  const std::vector<MetricSample> s{{0, 100, 10.0}, {100, 200, 50.0}};
  const auto r = one_key(s, {{0, 100, 0}, {100, 150, 0}, {250, 260, 0}});
  EXPECT_EQ(r[0].instances, 3);
  EXPECT_EQ(r[0].kernel_ns, 160);
  EXPECT_EQ(r[0].metric.covered_ns, 150);
  EXPECT_DOUBLE_EQ(r[0].metric.mean(), (10.0 * 100 + 50.0 * 50) / 150);
}

TEST(AttributeMetric, ZeroLengthAndBadRowsAreSkipped) {
  const std::vector<MetricSample> s{{0, 100, 10.0},
                                    {50, 50, 1e9},
                                    {100, 90, 1e9},
                                    {100, 200, kNaN},
                                    {200, 300, std::numeric_limits<double>::infinity()}};
  const auto r = one_key(s, {{50, 50, 0}, {40, 60, 0}, {150, 250, 0}, {70, 60, 0}});
  EXPECT_EQ(r[0].instances, 4);
  EXPECT_EQ(r[0].kernel_ns, 120);  // only [40, 60) and [150, 250) have length
  EXPECT_EQ(r[0].metric.covered_ns, 20);
  EXPECT_DOUBLE_EQ(r[0].metric.mean(), 10.0);
  // A key out of range is ignored, no key at all gives nothing.
  EXPECT_EQ(attribute_metric(s, std::vector<KernelInterval>{{0, 10, 5}}, 1)[0].instances, 0);
  EXPECT_TRUE(attribute_metric(s, std::vector<KernelInterval>{{0, 10, 0}}, 0).empty());
}

TEST(AttributeMetric, InputOrderDoesNotMatter) {
  std::vector<MetricSample> s{{0, 100, 20.0}, {100, 200, 60.0}, {200, 300, 30.0}, {300, 400, 90.0}};
  std::vector<KernelInterval> k{{50, 150, 0}, {120, 330, 1}, {10, 390, 2}, {300, 310, 1}};
  const auto sorted = attribute_metric(s, k, 3);
  std::reverse(s.begin(), s.end());
  std::rotate(k.begin(), k.begin() + 1, k.end());
  const auto shuffled = attribute_metric(s, k, 3);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(sorted[i].metric.covered_ns, shuffled[i].metric.covered_ns);
    EXPECT_EQ(sorted[i].concurrent_ns, shuffled[i].concurrent_ns);
    EXPECT_DOUBLE_EQ(sorted[i].metric.mean(), shuffled[i].metric.mean());
  }
  // Key 1: [120, 330) = 80 ns at 60, 100 at 30, 30 at 90; plus [300, 310) at 90.
  EXPECT_EQ(sorted[1].metric.covered_ns, 220);
  EXPECT_DOUBLE_EQ(sorted[1].metric.mean(), (80.0 * 60 + 100.0 * 30 + 30.0 * 90 + 10.0 * 90) / 220);
  // Key 2 [10, 390) runs beside the others the whole time they run: [50, 330).
  EXPECT_EQ(sorted[2].concurrent_ns, 280);
}

TEST(AttributeMetric, OverlappingSamplesCoverOnceAndWeighEach) {
  // A damaged trace: [0, 100) at 10 and [50, 150) at 30 overlap in [50, 100).
  const auto r = one_key({{0, 100, 10.0}, {50, 150, 30.0}}, {{0, 150, 0}});
  EXPECT_EQ(r[0].metric.covered_ns, 150);
  EXPECT_DOUBLE_EQ(r[0].metric.weight_ns, 200.0);
  EXPECT_DOUBLE_EQ(r[0].metric.mean(), 20.0);
}

TEST(AttributeMetric, TraceClockTimesKeepTheirPrecision) {
  // 10 000 samples of 100 µs from 1.7e18 ns (CLOCK_REALTIME); a 1 µs kernel in the last one.
  constexpr std::int64_t kT0 = 1'700'000'000'000'000'000;
  std::vector<MetricSample> s;
  for (std::int64_t i = 0; i < 10'000; ++i) s.push_back({kT0 + i * 100'000, kT0 + (i + 1) * 100'000, 37.5 + i % 3});
  const std::int64_t last = kT0 + 9'999 * 100'000;
  const auto r = one_key(s, {{last + 10, last + 1'010, 0}});
  EXPECT_EQ(r[0].metric.covered_ns, 1'000);
  EXPECT_NEAR(r[0].metric.mean(), 37.5 + 9'999 % 3, 1e-6);
}

TEST(MetricAttribution, StreamedSamplesGiveTheSameSharesAndHoldOnlyTheRunningOnes) {
  // Fed one at a time in start order, as a trace's samples come from SQL.
  std::vector<MetricSample> s;
  for (std::int64_t i = 0; i < 100; ++i) s.push_back({i * 10, (i + 1) * 10, static_cast<double>(i)});
  const std::vector<KernelInterval> k{{5, 15, 0}, {500, 995, 1}, {990, 2000, 0}};
  MetricAttribution a(k, 2);
  for (const MetricSample& x : s) a.add(x);
  const auto streamed = a.finish();
  const auto whole = attribute_metric(s, k, 2);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(streamed[i].metric.covered_ns, whole[i].metric.covered_ns);
    EXPECT_DOUBLE_EQ(streamed[i].metric.value_ns, whole[i].metric.value_ns);
    EXPECT_EQ(streamed[i].concurrent_ns, whole[i].concurrent_ns);
  }
  // Key 0: [5, 15) = 5 ns at 0 and 5 ns at 1; [990, 2000) = 10 ns at 99 (samples end at 1000).
  EXPECT_EQ(streamed[0].metric.covered_ns, 20);
  EXPECT_DOUBLE_EQ(streamed[0].metric.value_ns, 5.0 + 990.0);
  EXPECT_EQ(streamed[1].concurrent_ns, 5);
}

TEST(MetricAttribution, ASampleOutOfOrderIsTakenFromWhereTheSweepIs) {
  MetricAttribution a(std::vector<KernelInterval>{{0, 300, 0}}, 1);
  a.add({100, 200, 10.0});
  a.add({50, 150, 1000.0});  // starts before the one above: only [100, 150) counts
  a.add({0, 90, 5.0});       // already over
  const auto r = a.finish();
  EXPECT_EQ(r[0].metric.covered_ns, 100);
  EXPECT_DOUBLE_EQ(r[0].metric.weight_ns, 150.0);
  EXPECT_DOUBLE_EQ(r[0].metric.value_ns, 10.0 * 100 + 1000.0 * 50);
  EXPECT_DOUBLE_EQ(r[0].metric.bytes, 10.0 + 1000.0 / 100 * 50);  // its bytes per ns kept
}

TEST(AttributeMetric, AgreesWithCountingEveryNanosecond) {
  // Random samples (with gaps, some overlapping, some NULL) and kernels on [0, 2000),
  // against a brute force that walks every ns.
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<MetricSample> s;
    for (std::int64_t t = 0; t < 2000;) {
      const std::int64_t len = 1 + static_cast<std::int64_t>(rng() % 60);
      const double v = rng() % 10 == 0 ? kNaN : static_cast<double>(rng() % 1000);
      if (rng() % 4 != 0) s.push_back({t, t + len, v});
      t += rng() % 8 == 0 ? len / 2 + 1 : len;  // sometimes overlapping
    }
    std::vector<KernelInterval> k;
    for (int i = 0; i < 40; ++i) {
      const auto start = static_cast<std::int64_t>(rng() % 2000);
      k.push_back({start, start + static_cast<std::int64_t>(rng() % 120), rng() % 5});
    }
    const auto fast = attribute_metric(s, k, 5);
    std::vector<KernelMetricShare> slow(5);
    for (const KernelInterval& x : k) {
      KernelMetricShare& r = slow[x.key];
      ++r.instances;
      for (std::int64_t t = x.start_ns; t < x.end_ns; ++t) {
        ++r.kernel_ns;
        bool other = false;
        for (const KernelInterval& y : k) other |= &y != &x && y.start_ns <= t && t < y.end_ns;
        if (other) ++r.concurrent_ns;
        bool covered = false;
        for (const MetricSample& m : s) {
          if (std::isnan(m.value) || t < m.start_ns || t >= m.end_ns) continue;
          covered = true;
          r.metric.weight_ns += 1;
          r.metric.value_ns += m.value;
          r.metric.bytes += m.value / static_cast<double>(m.end_ns - m.start_ns);
        }
        if (covered) ++r.metric.covered_ns;
      }
    }
    for (std::size_t i = 0; i < 5; ++i) {
      EXPECT_EQ(fast[i].instances, slow[i].instances);
      EXPECT_EQ(fast[i].kernel_ns, slow[i].kernel_ns);
      EXPECT_EQ(fast[i].concurrent_ns, slow[i].concurrent_ns);
      EXPECT_EQ(fast[i].metric.covered_ns, slow[i].metric.covered_ns);
      EXPECT_NEAR(fast[i].metric.weight_ns, slow[i].metric.weight_ns, 1e-6);
      EXPECT_NEAR(fast[i].metric.value_ns, slow[i].metric.value_ns, 1e-6);
      EXPECT_NEAR(fast[i].metric.bytes, slow[i].metric.bytes, 1e-6);
    }
  }
}

TEST(SummarizeMetric, TimeWeightedOverTheSampledPartOfTheWindow) {
  const std::vector<MetricSample> s{{0, 100, 1000.0}, {100, 200, 3000.0}, {300, 400, kNaN}, {400, 500, 500.0}};
  const MetricOverlap w = summarize_metric(s, 50, 150);
  EXPECT_EQ(w.covered_ns, 100);
  EXPECT_DOUBLE_EQ(w.mean(), 2000.0);
  EXPECT_DOUBLE_EQ(w.bytes, 500.0 + 1500.0);
  EXPECT_DOUBLE_EQ(w.rate(), 20.0);
  const MetricOverlap all = summarize_metric(s, 0, 1000);
  EXPECT_EQ(all.covered_ns, 300);  // the NaN sample is not covered
  EXPECT_DOUBLE_EQ(all.bytes, 4500.0);
  EXPECT_DOUBLE_EQ(all.covered_share(1000), 0.3);
  EXPECT_EQ(summarize_metric(s, 200, 300).covered_ns, 0);
  EXPECT_TRUE(std::isnan(summarize_metric(s, 200, 300).mean()));
  EXPECT_EQ(summarize_metric(s, 150, 150).covered_ns, 0);
  EXPECT_EQ(summarize_metric(s, 150, 50).covered_ns, 0);
  // Overlapping samples: the union is covered once.
  EXPECT_EQ(summarize_metric(std::vector<MetricSample>{{0, 100, 1.0}, {50, 150, 1.0}}, 0, 200).covered_ns, 150);
}

}  // namespace
}  // namespace gpuscope::core

namespace gpuscope::core {
namespace {

TEST(CounterValue, PercentAsIsBytesAsGbPerSecondHertzAsMegahertz) {
  EXPECT_DOUBLE_EQ(counter_value("%", 42.5, 100'000).value, 42.5);
  EXPECT_EQ(counter_value("%", 42.5, 100'000).unit, "%");
  EXPECT_DOUBLE_EQ(counter_value("bytes", 3e7, 100'000).value, 300.0);  // 3e7 B in 100 µs = 300 GB/s
  EXPECT_EQ(counter_value("bytes", 3e7, 100'000).unit, "GB/s");
  EXPECT_DOUBLE_EQ(counter_value("Hz", 1.98e9, 100'000).value, 1980.0);
  EXPECT_EQ(counter_value("Hz", 1.98e9, 100'000).unit, "MHz");
  EXPECT_DOUBLE_EQ(counter_value("", 500, 100'000).value, 5e6);  // a count: per second
  EXPECT_EQ(counter_value("", 500, 100'000).unit, "/s");
  EXPECT_DOUBLE_EQ(counter_value("1/s", 7, 100'000).value, 7.0);
  EXPECT_TRUE(std::isnan(counter_value("bytes", 3e7, 0).value));  // needs the length
  EXPECT_DOUBLE_EQ(counter_value("%", 1.0, 0).value, 1.0);        // does not
}

}  // namespace
}  // namespace gpuscope::core
