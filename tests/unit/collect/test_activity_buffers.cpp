#include "collect/activity_buffers.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>

namespace gpuscope::collect {
namespace {

TEST(ActivityBufferPool, AlignedReusedAndBounded) {
  ActivityBufferPool pool(1001, 2);
  EXPECT_EQ(pool.buffer_bytes(), 1008u);  // multiple of 8
  std::uint8_t* a = pool.acquire();
  std::uint8_t* b = pool.acquire();
  std::uint8_t* c = pool.acquire();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 8, 0u);
  EXPECT_EQ(pool.allocated(), 3u);
  pool.release(a);
  pool.release(b);
  pool.release(c);  // over max_free: freed
  EXPECT_EQ(pool.allocated(), 2u);
  std::uint8_t* d = pool.acquire();
  EXPECT_TRUE(d == a || d == b);  // reused
  EXPECT_EQ(pool.allocated(), 2u);
  pool.release(d);
}

TEST(CompletedQueue, FifoAndHighWater) {
  CompletedQueue q;
  bool rejected = true;
  std::uint8_t x[8], y[8];
  EXPECT_EQ(q.push({x, 8, 0, 0, 0}, &rejected), 1u);
  EXPECT_FALSE(rejected);
  EXPECT_EQ(q.push({y, 4, 2, 1, 3}, &rejected), 2u);
  std::vector<CompletedBuffer> out;
  q.take_all(out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].data, x);
  EXPECT_EQ(out[1].dropped, 2u);
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.high_water(), 2u);
}

TEST(CompletedQueue, ConcurrentProducersLoseNothing) {
  CompletedQueue q;
  constexpr int kPerThread = 10000;
  auto produce = [&] {
    bool rejected = false;
    for (int i = 0; i < kPerThread; ++i) q.push({nullptr, 1, 0, 0, 0}, &rejected);
  };
  std::thread t1(produce), t2(produce);
  std::vector<CompletedBuffer> out;
  while (out.size() < 2u * kPerThread) q.take_all(out);
  t1.join();
  t2.join();
  EXPECT_EQ(out.size(), 2u * kPerThread);
}

TEST(ActivityBufferPool, ZeroedBuffersStayZeroAndPrefillIsBounded) {
  ActivityBufferPool pool(4096, 3, /*zeroed=*/true);
  EXPECT_EQ(pool.prefill(5), 3u);  // at most max_free
  EXPECT_EQ(pool.allocated(), 3u);
  std::uint8_t* b = pool.acquire();
  ASSERT_NE(b, nullptr);
  for (std::size_t i = 0; i < 4096; ++i) ASSERT_EQ(b[i], 0) << i;
  std::memset(b, 0xab, 4096);  // CUPTI filled it
  pool.release(b);             // cleared here, on the releasing (writer) thread
  std::uint8_t* again = pool.acquire();
  ASSERT_EQ(again, b);  // reused: last released first
  for (std::size_t i = 0; i < 4096; ++i) ASSERT_EQ(again[i], 0) << i;
  pool.release(again);
}

}  // namespace
}  // namespace gpuscope::collect
