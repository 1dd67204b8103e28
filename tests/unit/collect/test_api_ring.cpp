#include "collect/api_ring.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <utility>
#include <vector>

namespace gpuscope::collect {
namespace {

ApiCallRecord rec(std::uint32_t id) {
  ApiCallRecord r;
  r.correlation_id = id;
  r.start_ns = id * 10;
  r.end_ns = id * 10 + 5;
  return r;
}

TEST(ApiRing, FifoFullDropsAndHalfFullWakesOnce) {
  ApiRing ring(5);  // rounded up to 8
  ASSERT_EQ(ring.capacity(), 8u);
  int wakes = 0;
  for (std::uint32_t i = 0; i < 10; ++i) {
    bool wake = false;
    const bool ok = ring.push(rec(i), &wake);
    EXPECT_EQ(ok, i < 8) << i;
    wakes += wake && ok;
  }
  EXPECT_EQ(wakes, 1);  // at exactly half (4 records), not per push
  EXPECT_EQ(ring.take_dropped(), 2u);
  EXPECT_EQ(ring.take_dropped(), 0u);
  std::vector<std::uint32_t> seen;
  EXPECT_EQ(ring.drain([&](const ApiCallRecord& r) { seen.push_back(r.correlation_id); }), 8u);
  EXPECT_EQ(seen, (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  bool wake = false;
  EXPECT_TRUE(ring.push(rec(99), &wake));  // room again after the drain
}

TEST(ApiRing, HalfFullWakesAgainAfterEachDrain) {
  // The producer reads the consumer's position only near half full: the wake still comes at
  // exactly half of what the consumer has not drained, once per filling.
  ApiRing ring(8);
  std::vector<std::uint32_t> woke_at;  // records in the ring after the waking push
  std::size_t in_ring = 0;
  for (std::uint32_t i = 0; i < 20; ++i) {
    bool wake = false;
    ASSERT_TRUE(ring.push(rec(i), &wake)) << i;
    ++in_ring;
    if (wake) woke_at.push_back(static_cast<std::uint32_t>(in_ring));
    if (in_ring == 6) {  // the consumer comes late: past half
      in_ring -= ring.drain([](const ApiCallRecord&) {});
    }
  }
  // Fillings from 0 to 6 records, three times (20 pushes: 6 + 6 + 6 + 2): each wakes at 4.
  EXPECT_EQ(woke_at, (std::vector<std::uint32_t>{4, 4, 4}));
}

TEST(ApiRing, OneProducerOneConsumerLoseNothing) {
  ApiRing ring(1024);
  constexpr std::uint32_t kN = 200000;
  std::thread producer([&] {
    for (std::uint32_t i = 0; i < kN; ++i) {
      bool wake = false;
      while (!ring.push(rec(i), &wake)) std::this_thread::yield();
    }
  });
  std::uint32_t next = 0;
  bool in_order = true;
  while (next < kN) {
    ring.drain([&](const ApiCallRecord& r) {
      in_order &= r.correlation_id == next && r.end_ns == next * 10ull + 5;
      ++next;
    });
  }
  producer.join();
  EXPECT_TRUE(in_order);
  EXPECT_EQ(next, kN);
}

TEST(ApiRingRegistry, OrphanedRingsAreDrainedThenFreed) {
  ApiRingRegistry reg(16);
  ApiRing* a = reg.add_ring();
  ApiRing* b = reg.add_ring();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  bool wake = false;
  a->push(rec(1), &wake);
  b->push(rec(2), &wake);
  b->orphan();  // its thread ended after pushing
  std::uint64_t dropped = 0;
  std::vector<std::uint32_t> seen;
  EXPECT_EQ(reg.drain_all([&](const ApiCallRecord& r) { seen.push_back(r.correlation_id); }, &dropped), 2u);
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(reg.size(), 1u);  // b freed, a kept
}

// The PyTorch observer's rings: the same queue of another record; the consumer learns each
// record's thread from its ring (set when the thread made it).
TEST(TorchOpRingRegistry, RecordsComeWithTheirRingsThread) {
  TorchOpRingRegistry reg(8);
  TorchOpRing* a = reg.add_ring(101);
  TorchOpRing* b = reg.add_ring(202);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  bool wake = false;
  EXPECT_TRUE(a->push(TorchOpEvent{10, 5, 1, 3, 0, 1}, &wake));
  EXPECT_TRUE(a->push(TorchOpEvent{20, 0, 0, 0, 0, 2}, &wake));
  EXPECT_TRUE(b->push(TorchOpEvent{15, -1, 2, 4, 0, 1}, &wake));
  std::uint64_t dropped = 0;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> seen;  // (thread, ts)
  EXPECT_EQ(
      reg.drain_all_with_ring(
          [&](const TorchOpRing& ring, const TorchOpEvent& e) { seen.emplace_back(ring.thread_id, e.ts); }, &dropped),
      3u);
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> want{{101, 10}, {101, 20}, {202, 15}};
  EXPECT_EQ(seen, want);
  EXPECT_EQ(dropped, 0u);
}

}  // namespace
}  // namespace gpuscope::collect
