// core/comm_intervals on hand-computed cases: overlap, gaps, nested and several-stream
// intervals, the compute/communication split, arrivals at a collective, repeated lateness.
#include "core/comm_intervals.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace gpuscope::core {
namespace {

using V = std::vector<Interval>;

TEST(CommIntervals, ClipCutsToTheWindow) {
  const V in{{0, 10}, {5, 25}, {30, 40}, {18, 19}};
  EXPECT_EQ(clip_intervals(in, {8, 20}), (V{{8, 10}, {8, 20}, {18, 19}}));
  EXPECT_TRUE(clip_intervals(in, {20, 20}).empty());
}

TEST(CommIntervals, OverlapOfTwoUnions) {
  // a: [0,10) [20,30); b: [5,25) → overlap [5,10) + [20,25) = 10.
  EXPECT_EQ(overlap_length({{0, 10}, {20, 30}}, {{5, 25}}), 10);
  // Nested and overlapping inside one side count once: a = [0,100) ∪ [10,20) ∪ [50,150).
  EXPECT_EQ(overlap_length({{0, 100}, {10, 20}, {50, 150}}, {{90, 200}}), 60);
  EXPECT_EQ(overlap_length({{0, 10}}, {{10, 20}}), 0);  // touching: no overlap
  EXPECT_EQ(overlap_length({}, {{0, 10}}), 0);
}

TEST(CommIntervals, GapsInsideAWindow) {
  EXPECT_EQ(gaps({{10, 20}, {15, 30}, {50, 60}}, {0, 100}), (V{{0, 10}, {30, 50}, {60, 100}}));
  EXPECT_EQ(gaps({{-5, 40}, {90, 120}}, {0, 100}), (V{{40, 90}}));
  EXPECT_EQ(gaps({}, {0, 100}), (V{{0, 100}}));
  EXPECT_TRUE(gaps({{0, 100}}, {0, 100}).empty());
  EXPECT_TRUE(gaps({}, {5, 5}).empty());
}

TEST(CommIntervals, SplitOverlapOnSeveralStreams) {
  // Compute on two streams: [0,40) and [30,60) (union [0,60)), and [80,90).
  // NCCL on a third stream: [50,70) and [85,100).
  // comm = 20 + 15 = 35; overlapped = [50,60) + [85,90) = 15; exposed = 20.
  const V compute{{0, 40}, {30, 60}, {80, 90}};
  const V comm{{50, 70}, {85, 100}};
  const OverlapSplit s = split_overlap(compute, comm, {0, 100});
  EXPECT_EQ(s.window_ns, 100);
  EXPECT_EQ(s.compute_ns, 70);
  EXPECT_EQ(s.comm_ns, 35);
  EXPECT_EQ(s.overlapped_ns, 15);
  EXPECT_EQ(s.exposed_ns, 20);
  EXPECT_DOUBLE_EQ(s.overlap_percent(), 15.0 / 35.0 * 100.0);
  // The same in a window [55, 95): compute [55,60) [80,90) = 15; comm [55,70) [85,95) = 25;
  // overlapped [55,60) [85,90) = 10.
  const OverlapSplit w = split_overlap(compute, comm, {55, 95});
  EXPECT_EQ(w.compute_ns, 15);
  EXPECT_EQ(w.comm_ns, 25);
  EXPECT_EQ(w.overlapped_ns, 10);
  EXPECT_EQ(w.exposed_ns, 15);
  OverlapSplit sum = s;
  sum += w;
  EXPECT_EQ(sum.comm_ns, 60);
  EXPECT_EQ(sum.window_ns, 140);
  // No communication: the overlap share is undefined.
  EXPECT_TRUE(std::isnan(split_overlap(compute, {}, {0, 100}).overlap_percent()));
  // Communication nested in one long compute kernel: all hidden.
  const OverlapSplit n = split_overlap(V{{0, 100}}, V{{10, 20}, {15, 30}}, {0, 100});
  EXPECT_EQ(n.comm_ns, 20);
  EXPECT_EQ(n.exposed_ns, 0);
  EXPECT_DOUBLE_EQ(n.overlap_percent(), 100.0);
}

TEST(CommIntervals, ArrivalsNameTheLastAndTheWaits) {
  const std::vector<std::int64_t> t{100, 130, 400, 120};
  const auto a = arrivals(t);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->last, 2u);
  EXPECT_EQ(a->lateness_ns, 270);  // 400 − 130
  EXPECT_EQ(a->spread_ns, 300);
  EXPECT_EQ(a->wait_ns, (std::vector<std::int64_t>{300, 270, 0, 280}));
  const std::vector<std::int64_t> tie{50, 70, 70};
  EXPECT_EQ(arrivals(tie)->last, 1u);
  EXPECT_EQ(arrivals(tie)->lateness_ns, 0);
  const std::vector<std::int64_t> one{5};
  EXPECT_EQ(arrivals(one)->lateness_ns, 0);
  EXPECT_FALSE(arrivals({}));
}

TEST(CommIntervals, LongestRunStart) {
  const std::vector<std::int64_t> last{0, 2, 1, 2, 2, 2, 3, 2};
  EXPECT_EQ(longest_run_start(last, 2, 3), 3u);
  EXPECT_EQ(longest_run_start(last, 2, 1), 3u);  // the longest run, not the first
  EXPECT_FALSE(longest_run_start(last, 2, 4));
  EXPECT_FALSE(longest_run_start(last, 7, 1));
  EXPECT_FALSE(longest_run_start(last, 2, 0));
  // Last in the two start-up steps, then on time, then last for good from index 5: 5.
  const std::vector<std::int64_t> startup{1, 1, 0, 1, 0, 1, 1, 1, 1};
  EXPECT_EQ(longest_run_start(startup, 1, 2), 5u);
  // Two runs equally long: the earlier.
  const std::vector<std::int64_t> tie{1, 1, 0, 1, 1};
  EXPECT_EQ(longest_run_start(tie, 1, 2), 0u);
}

}  // namespace
}  // namespace gpuscope::core
