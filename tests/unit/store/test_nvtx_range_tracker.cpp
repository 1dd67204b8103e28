#include "store/nvtx_range_tracker.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gpuscope::store {
namespace {

using T = log::NvtxEventType;

log::NvtxRecord rec(T type, std::uint64_t ts, std::uint32_t tid, std::uint64_t range_id = 0, std::uint64_t domain = 0) {
  log::NvtxRecord r{};
  r.type = static_cast<std::uint8_t>(type);
  r.ts_ns = ts;
  r.thread_id = tid;
  r.range_id = range_id;
  r.domain_id = domain;
  return r;
}

struct Out {
  std::int64_t id;
  std::uint64_t start;
  std::uint32_t tid, end_tid;
  std::optional<std::uint64_t> end;
  NvtxStyle style;
  std::optional<std::uint32_t> depth;
  std::int64_t parent;
};

// A tracker that numbers ranges 1, 2, ... (dropping those opened before `drop_before`)
// and records what it emits.
class Tracker {
 public:
  explicit Tracker(std::uint64_t drop_before = 0)
      : m_t([this, drop_before](std::uint64_t ts) { return ts < drop_before ? 0 : ++m_next; },
            [this](const NvtxRange& r) {
              out.push_back(
                  {r.id, r.open->ts_ns, r.open->thread_id, r.end_tid, r.end_ns, r.style, r.depth, r.parent_id});
            }) {}
  void operator()(const log::NvtxRecord& r) { m_t.process(r); }
  NvtxRangeTracker& t() { return m_t; }
  std::vector<Out> out;

 private:
  std::int64_t m_next = 0;
  NvtxRangeTracker m_t;
};

TEST(NvtxRangeTracker, PushPopNestsPerThreadAndDomain) {
  Tracker t;
  t(rec(T::kPush, 10, 1));        // id 1, depth 0
  t(rec(T::kPush, 20, 1));        // id 2, depth 1, parent 1
  t(rec(T::kPush, 25, 2));        // id 3: another thread, depth 0
  t(rec(T::kPush, 26, 1, 0, 7));  // id 4: another domain, depth 0
  t(rec(T::kMark, 27, 1));        // id 5: parent = innermost push of thread 1, domain 0
  t(rec(T::kPop, 30, 1));         // closes 2
  t(rec(T::kPop, 35, 2));         // closes 3
  t(rec(T::kPop, 36, 1, 0, 7));   // closes 4
  t(rec(T::kPop, 40, 1));         // closes 1
  t.t().close_all();
  ASSERT_EQ(t.out.size(), 5u);
  EXPECT_EQ(t.out[0].id, 5);
  EXPECT_EQ(t.out[0].style, NvtxStyle::kMark);
  EXPECT_EQ(t.out[0].parent, 2);
  EXPECT_FALSE(t.out[0].end);
  EXPECT_FALSE(t.out[0].depth);
  EXPECT_EQ(t.out[1].id, 2);
  EXPECT_EQ(t.out[1].depth, 1u);
  EXPECT_EQ(t.out[1].parent, 1);
  EXPECT_EQ(t.out[1].end, 30u);
  EXPECT_EQ(t.out[2].id, 3);
  EXPECT_EQ(t.out[2].depth, 0u);
  EXPECT_EQ(t.out[2].parent, 0);
  EXPECT_EQ(t.out[3].id, 4);
  EXPECT_EQ(t.out[3].depth, 0u);
  EXPECT_EQ(t.out[4].id, 1);
  EXPECT_EQ(t.out[4].start, 10u);
  EXPECT_EQ(t.out[4].end, 40u);
  EXPECT_EQ(t.out[4].style, NvtxStyle::kPushPop);
  EXPECT_EQ(t.t().unmatched_pops(), 0u);
  EXPECT_EQ(t.t().unclosed(), 0u);
}

TEST(NvtxRangeTracker, StartEndMatchesAcrossThreads) {
  Tracker t;
  t(rec(T::kStart, 10, 1, 100));
  t(rec(T::kStart, 12, 1, 101));
  t(rec(T::kEnd, 20, 2, 100));  // ended by another thread
  t(rec(T::kEnd, 30, 1, 101));
  t.t().close_all();
  ASSERT_EQ(t.out.size(), 2u);
  EXPECT_EQ(t.out[0].id, 1);
  EXPECT_EQ(t.out[0].tid, 1u);
  EXPECT_EQ(t.out[0].end_tid, 2u);
  EXPECT_EQ(t.out[0].end, 20u);
  EXPECT_EQ(t.out[0].style, NvtxStyle::kStartEnd);
  EXPECT_FALSE(t.out[0].depth);
  EXPECT_EQ(t.out[0].parent, 0);
  EXPECT_EQ(t.out[1].id, 2);
  EXPECT_EQ(t.out[1].end, 30u);
  EXPECT_EQ(t.t().unmatched_ends(), 0u);
}

TEST(NvtxRangeTracker, UnmatchedPopsAndEndsAreCountedAndIgnored) {
  Tracker t;
  t(rec(T::kPop, 5, 1));
  t(rec(T::kPush, 10, 1));
  t(rec(T::kPop, 20, 2));  // thread 2 has nothing open
  t(rec(T::kPop, 30, 1));
  t(rec(T::kEnd, 40, 1, 999));
  t.t().close_all();
  ASSERT_EQ(t.out.size(), 1u);
  EXPECT_EQ(t.out[0].end, 30u);
  EXPECT_EQ(t.t().unmatched_pops(), 2u);
  EXPECT_EQ(t.t().unmatched_ends(), 1u);
  EXPECT_EQ(t.t().unclosed(), 0u);
}

TEST(NvtxRangeTracker, UnclosedRangesEmittedWithoutEnd) {
  Tracker t;
  t(rec(T::kPush, 10, 1));
  t(rec(T::kPush, 20, 1));
  t(rec(T::kStart, 30, 1, 5));
  t(rec(T::kStart, 40, 1, 5));  // reuses range id 5: the first is closed as unclosed
  EXPECT_EQ(t.t().unclosed(), 1u);
  t.t().close_all();
  ASSERT_EQ(t.out.size(), 4u);
  EXPECT_EQ(t.out[0].id, 3);  // the reused start/end range, at once
  EXPECT_FALSE(t.out[0].end);
  EXPECT_EQ(t.out[1].id, 1);  // then push/pop stacks, outermost first
  EXPECT_EQ(t.out[2].id, 2);
  EXPECT_EQ(t.out[2].parent, 1);
  EXPECT_EQ(t.out[2].depth, 1u);
  EXPECT_EQ(t.out[3].id, 4);  // then start/end ranges
  for (const Out& o : t.out) EXPECT_FALSE(o.end);
  EXPECT_EQ(t.t().unclosed(), 4u);
}

TEST(NvtxRangeTracker, DroppedRangesNestButAreNotEmitted) {
  Tracker t(/*drop_before=*/15);
  t(rec(T::kPush, 10, 1));  // dropped (id 0)
  t(rec(T::kPush, 20, 1));  // id 1, depth 1, parent 0 (the dropped one)
  t(rec(T::kPop, 30, 1));
  t(rec(T::kPop, 40, 1));  // closes the dropped range: no row, no unmatched pop
  t.t().close_all();
  ASSERT_EQ(t.out.size(), 1u);
  EXPECT_EQ(t.out[0].id, 1);
  EXPECT_EQ(t.out[0].depth, 1u);
  EXPECT_EQ(t.out[0].parent, 0);
  EXPECT_EQ(t.t().unmatched_pops(), 0u);
  EXPECT_EQ(t.t().unclosed(), 0u);
}

TEST(NvtxRangeTracker, StyleText) {
  EXPECT_EQ(nvtx_style_text(NvtxStyle::kPushPop), "PushPop");
  EXPECT_EQ(nvtx_style_text(NvtxStyle::kStartEnd), "StartEnd");
  EXPECT_EQ(nvtx_style_text(NvtxStyle::kMark), "Mark");
}

}  // namespace
}  // namespace gpuscope::store
