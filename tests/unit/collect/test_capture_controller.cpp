#include "collect/capture_controller.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace gpuscope::collect {
namespace {

using log::CaptureState;

TEST(CaptureController, NoneRecordsFromStartAsAll) {
  CaptureController c(CaptureRange::kNone, CaptureEnd::kStop, true);
  auto e = c.begin();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->state, CaptureState::kStart);
  EXPECT_EQ(e->reason, "all");
  EXPECT_TRUE(c.recording());
  EXPECT_FALSE(c.range_start("cudaProfilerStart"));  // ignored for none
  EXPECT_FALSE(c.range_stop("cudaProfilerStop"));
  EXPECT_TRUE(c.recording());
}

TEST(CaptureController, ProfilerApiStopEndsForGood) {
  CaptureController c(CaptureRange::kCudaProfilerApi, CaptureEnd::kStop, true);
  EXPECT_FALSE(c.begin());
  EXPECT_FALSE(c.recording());
  EXPECT_FALSE(c.range_stop("cudaProfilerStop"));  // stop before start: ignored
  auto e = c.range_start("cudaProfilerStart");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->state, CaptureState::kStart);
  EXPECT_EQ(e->reason, "cudaProfilerStart");
  EXPECT_FALSE(c.range_start("cuProfilerStart"));  // nested driver call: no second edge
  e = c.range_stop("cudaProfilerStop");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->state, CaptureState::kStop);
  EXPECT_TRUE(c.finished());
  EXPECT_FALSE(c.range_start("cudaProfilerStart"));
  EXPECT_FALSE(c.recording());
}

TEST(CaptureController, RepeatOpensEveryWindow) {
  CaptureController c(CaptureRange::kNvtx, CaptureEnd::kRepeat, true);
  for (int i = 0; i < 3; ++i) {
    auto s = c.range_start("nvtx:step");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->reason, "nvtx:step");
    ASSERT_TRUE(c.range_stop("nvtx:step"));
    EXPECT_FALSE(c.finished());
  }
}

TEST(CaptureController, TimeGateAndRangeCombine) {
  // Delay pending: range opens, but recording waits for the delay.
  CaptureController c(CaptureRange::kCudaProfilerApi, CaptureEnd::kStop, false);
  EXPECT_FALSE(c.begin());
  EXPECT_FALSE(c.range_start("cudaProfilerStart"));
  EXPECT_TRUE(c.range_open());
  auto e = c.open_time_gate();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->state, CaptureState::kStart);
  EXPECT_EQ(e->reason, "delay");
  e = c.close_time_gate();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->state, CaptureState::kStop);
  EXPECT_EQ(e->reason, "duration");
  EXPECT_TRUE(c.finished());
  EXPECT_FALSE(c.open_time_gate());
}

TEST(CaptureController, DelayWithNoneStartsAsDelay) {
  CaptureController c(CaptureRange::kNone, CaptureEnd::kStop, false);
  EXPECT_FALSE(c.begin());
  auto e = c.open_time_gate();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->reason, "delay");
  EXPECT_FALSE(c.open_time_gate());
}

// gpuscope launch --session: every start/stop pair is a window, however many, and the
// capture never finishes (a finished capture detaches CUPTI, which would end every later
// window's kernel records).
TEST(CaptureController, SessionOpensFiveWindowsAndNeverFinishes) {
  CaptureController c(CaptureRange::kSession, CaptureEnd::kRepeat, true);
  EXPECT_FALSE(c.begin());  // nothing recorded until the first start
  EXPECT_FALSE(c.recording());
  for (int i = 0; i < 5; ++i) {
    auto s = c.range_start("session");
    ASSERT_TRUE(s) << "window " << i + 1;
    EXPECT_EQ(s->state, CaptureState::kStart);
    EXPECT_EQ(s->reason, "session");
    EXPECT_TRUE(c.recording());
    auto e = c.range_stop("session");
    ASSERT_TRUE(e) << "window " << i + 1;
    EXPECT_EQ(e->state, CaptureState::kStop);
    EXPECT_FALSE(c.recording());
    EXPECT_FALSE(c.finished()) << "window " << i + 1;
  }
}

TEST(SessionStopGrace, HalfASecondOrTwoFlushPeriods) {
  EXPECT_EQ(session_stop_grace_ns(200), 500'000'000u);
  EXPECT_EQ(session_stop_grace_ns(400), 800'000'000u);
}

TEST(WindowSpans, KeepsWhatAWindowCanClaim) {
  WindowSpans w(/*slack_ns=*/100);
  EXPECT_FALSE(w.keeps(50));  // before any window
  EXPECT_TRUE(w.keeps(0));    // no timestamp: the importer decides by the launch call
  w.open(1000);
  EXPECT_FALSE(w.keeps(999));    // started before the window opened
  EXPECT_TRUE(w.keeps(1000));    // inside the open window
  EXPECT_TRUE(w.keeps(50'000));  // open: anything later
  w.close(2000);
  EXPECT_TRUE(w.keeps(1999));
  EXPECT_TRUE(w.keeps(2050));   // launched inside, started within the slack after the stop
  EXPECT_FALSE(w.keeps(2100));  // between windows, after the slack
  EXPECT_FALSE(w.keeps(900));
  w.open(5000);
  w.close(6000);
  EXPECT_FALSE(w.keeps(4000));  // between windows 1 and 2
  EXPECT_TRUE(w.keeps(5500));   // window 2
  EXPECT_TRUE(w.keeps(1500));   // window 1 still, for a record that arrives late
  EXPECT_TRUE(w.keeps(6099));
  EXPECT_FALSE(w.keeps(6100));
  EXPECT_EQ(w.windows(), 2u);
}

TEST(WindowSpans, IgnoresRepeatedEdges) {
  WindowSpans w(0);
  w.close(10);  // stop before any start
  EXPECT_EQ(w.windows(), 0u);
  w.open(100);
  w.open(200);  // already open
  EXPECT_TRUE(w.keeps(150));
  w.close(300);
  w.close(400);  // already closed
  EXPECT_FALSE(w.keeps(350));
  EXPECT_EQ(w.windows(), 1u);
}

TEST(WindowSpans, SlackNearTheTopOfTheClockDoesNotWrap) {
  const std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
  WindowSpans w(top);
  w.open(top - 10);
  w.close(top - 5);
  EXPECT_TRUE(w.keeps(top - 1));
  EXPECT_FALSE(w.keeps(top - 20));
}

TEST(TimeGate, ComputeFromLaunchOrigin) {
  // No delay, no duration: open from the start, never closes.
  auto g = compute_time_gate(0, 0, 0, 0, 1000);
  EXPECT_EQ(g.open_at_ns, 0u);
  EXPECT_EQ(g.close_at_ns, 0u);
  EXPECT_TRUE(time_gate_open_at(g, 5));

  // Launch at realtime 10'000, CUPTI clock 500 ahead; delay 2'000, duration 3'000.
  g = compute_time_gate(10'000, 2'000, 3'000, 500, 11'000);
  EXPECT_EQ(g.open_at_ns, 12'500u);
  EXPECT_EQ(g.close_at_ns, 15'500u);
  EXPECT_FALSE(time_gate_open_at(g, 12'499));
  EXPECT_TRUE(time_gate_open_at(g, 12'500));
  EXPECT_FALSE(time_gate_open_at(g, 15'500));

  // Unknown launch time: origin = collector start.
  g = compute_time_gate(0, 100, 0, -7, 1'000);
  EXPECT_EQ(g.open_at_ns, 1'100u);
  EXPECT_EQ(g.close_at_ns, 0u);

  // Duration only: open now, close at origin + duration.
  g = compute_time_gate(0, 0, 50, 0, 1'000);
  EXPECT_EQ(g.open_at_ns, 0u);
  EXPECT_EQ(g.close_at_ns, 1'050u);
}

TEST(TimeGate, NextEdge) {
  constexpr auto kNever = std::numeric_limits<std::uint64_t>::max();
  TimeGate g{100, 300};
  EXPECT_EQ(ns_to_next_gate_edge(g, 40, false, false), 60u);
  EXPECT_EQ(ns_to_next_gate_edge(g, 140, false, false), 0u);  // overdue
  EXPECT_EQ(ns_to_next_gate_edge(g, 140, true, false), 160u);
  EXPECT_EQ(ns_to_next_gate_edge(g, 400, true, true), kNever);
  EXPECT_EQ(ns_to_next_gate_edge(TimeGate{0, 0}, 5, true, false), kNever);
}

}  // namespace
}  // namespace gpuscope::collect

TEST(RecordingSwitches, ASessionsFirstWindowTurnsKernelRecordsOnBeforeAnythingRecordsALaunchCall) {
  using S = gpuscope::collect::RecordingSwitch;
  using gpuscope::collect::recording_switches;
  EXPECT_EQ(recording_switches(true, true, false, true),
            (std::vector<S>{S::kKernelKinds, S::kGatedKinds, S::kLaunchCallbacks}));
  // Later windows: kernel records are on already; stops never touch them.
  EXPECT_EQ(recording_switches(true, true, true, true), (std::vector<S>{S::kGatedKinds, S::kLaunchCallbacks}));
  EXPECT_EQ(recording_switches(true, false, true, true), (std::vector<S>{S::kGatedKinds, S::kLaunchCallbacks}));
  EXPECT_EQ(recording_switches(true, false, false, true), (std::vector<S>{S::kGatedKinds, S::kLaunchCallbacks}));
  // Launch callbacks only where the session asked for API calls; other capture ranges gate the kinds only.
  EXPECT_EQ(recording_switches(true, true, false, false), (std::vector<S>{S::kKernelKinds, S::kGatedKinds}));
  EXPECT_EQ(recording_switches(false, true, false, true), (std::vector<S>{S::kGatedKinds}));
}
