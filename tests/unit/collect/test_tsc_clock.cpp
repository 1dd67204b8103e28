// collect/tsc_clock: TSC ticks -> clock ns between two anchors (hand-computed lines), and the
// anchor read against this machine's own clock.
#include "collect/tsc_clock.hpp"

#include <gtest/gtest.h>
#include <time.h>

#include <cstdint>

namespace gpuscope::collect {
namespace {

TEST(TscSpan, ExactAtBothAnchorsLinearBetween) {
  // 3 ticks per ns (a 3 GHz counter): 3,000 ticks are 1,000 ns.
  const TscSpan span(TscAnchor{1'000'000, 5'000'000'000}, TscAnchor{1'003'000, 5'000'001'000}, 0.0);
  EXPECT_DOUBLE_EQ(span.ns_per_tick(), 1.0 / 3.0);
  EXPECT_EQ(span.to_ns(1'000'000), 5'000'000'000u);
  EXPECT_EQ(span.to_ns(1'003'000), 5'000'001'000u);
  EXPECT_EQ(span.to_ns(1'001'500), 5'000'000'500u);
  EXPECT_EQ(span.to_ns(1'000'001), 5'000'000'000u);  // a third of a ns rounds down
  EXPECT_EQ(span.to_ns(1'000'002), 5'000'000'001u);
  // Outside the span: the same line (an edge stamped just before the earlier anchor, or during
  // the drain after the later one).
  EXPECT_EQ(span.to_ns(997'000), 4'999'999'000u);
  EXPECT_EQ(span.to_ns(1'006'000), 5'000'002'000u);
}

TEST(TscSpan, KeepsNanosecondsOverLongSpansAndLargeCounters) {
  // A counter near 2^62 and a 100 s span at 2.5 ticks/ns: every ns still lands.
  const std::uint64_t t0 = std::uint64_t{1} << 62;
  const std::uint64_t ns0 = 1'780'000'000'000'000'000ull;
  const TscSpan span(TscAnchor{t0, ns0}, TscAnchor{t0 + 250'000'000'000ull, ns0 + 100'000'000'000ull}, 0.0);
  EXPECT_EQ(span.to_ns(t0 + 25), ns0 + 10);
  EXPECT_EQ(span.to_ns(t0 + 125'000'000'005ull), ns0 + 50'000'000'002ull);
}

TEST(TscSpan, FallsBackToTheLastRateWhenTheAnchorsDoNotAdvance) {
  const TscSpan span(TscAnchor{1000, 2000}, TscAnchor{1000, 2000}, 0.5);
  EXPECT_DOUBLE_EQ(span.ns_per_tick(), 0.5);
  EXPECT_EQ(span.to_ns(1100), 2050u);
  EXPECT_EQ(span.to_ns(0), 1500u);
  // Before the clock's zero: 0, never a wrapped value.
  EXPECT_EQ(TscSpan(TscAnchor{10'000, 100}, TscAnchor{10'000, 100}, 1.0).to_ns(0), 0u);
}

TEST(TscClock, AnchorsAgreeWithTheClockOnThisMachine) {
  if (!tsc_usable()) GTEST_SKIP() << "no invariant TSC on this machine";
  const auto clock = [] {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
  };
  const TscAnchor a = take_tsc_anchor(clock);
  timespec pause{0, 20'000'000};  // 20 ms
  nanosleep(&pause, nullptr);
  const TscAnchor b = take_tsc_anchor(clock);
  ASSERT_GT(b.tsc, a.tsc);
  const TscSpan span(a, b, 0.0);
  // A real counter runs at 0.5-6 GHz.
  EXPECT_GT(span.ns_per_tick(), 1.0 / 6.0);
  EXPECT_LT(span.ns_per_tick(), 2.0);
  // A tick read between the anchors lands between their clock readings.
  const std::uint64_t mid_tick = a.tsc + (b.tsc - a.tsc) / 3;
  EXPECT_GT(span.to_ns(mid_tick), a.ns);
  EXPECT_LT(span.to_ns(mid_tick), b.ns);
}

}  // namespace
}  // namespace gpuscope::collect
