// CUPTI activity buffers: a bounded free-list pool (bufferRequested takes from
// it) and the queue of completed buffers handed from CUPTI's thread to the
// writer thread (bufferCompleted pushes and returns at once). Both are
// mutex-protected and never block for long: the critical sections are a
// vector push/pop or swap. No CUPTI calls, so they are unit-testable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace gpuscope::collect {

struct CompletedBuffer {
  std::uint8_t* data = nullptr;
  std::size_t valid_size = 0;
  std::uint64_t dropped = 0;     // cuptiActivityGetNumDroppedRecords at completion
  std::uint32_t context_id = 0;  // of the buffer's queue (0 = global)
  std::uint32_t stream_id = 0;
};

class ActivityBufferPool {
 public:
  /// Buffers are `buffer_bytes` long, 8-byte aligned (CUPTI's requirement);
  /// at most `max_free` released buffers are kept for reuse, the rest freed.
  /// With `zeroed`, every buffer handed out is all zero bytes (fresh ones from
  /// calloc, reused ones cleared by release() on the releasing thread), so CUPTI
  /// can skip clearing it on the application thread (ZEROED_OUT_ACTIVITY_BUFFER).
  ActivityBufferPool(std::size_t buffer_bytes, std::size_t max_free, bool zeroed = false);
  ~ActivityBufferPool();
  ActivityBufferPool(const ActivityBufferPool&) = delete;
  ActivityBufferPool& operator=(const ActivityBufferPool&) = delete;

  /// A buffer of buffer_bytes(), or nullptr when memory runs out (CUPTI then
  /// drops records and counts them).
  [[nodiscard]] std::uint8_t* acquire() noexcept;
  void release(std::uint8_t* buffer) noexcept;
  /// Allocates and touches up to `count` free buffers now (at most max_free), so the
  /// first requests during the run neither allocate nor page-fault. Returns how many
  /// buffers are free afterwards.
  std::size_t prefill(std::size_t count) noexcept;

  [[nodiscard]] std::size_t buffer_bytes() const { return m_buffer_bytes; }
  /// Buffers currently allocated (in CUPTI's hands, queued, or free).
  [[nodiscard]] std::size_t allocated() const;

 private:
  const std::size_t m_buffer_bytes;
  const std::size_t m_max_free;
  const bool m_zeroed;
  mutable std::mutex m_mutex;
  std::vector<std::uint8_t*> m_free;
  std::size_t m_allocated = 0;
};

class CompletedQueue {
 public:
  /// Appends; returns the queue length after the push. Never throws (on
  /// allocation failure the buffer is returned in *rejected instead).
  std::size_t push(const CompletedBuffer& b, bool* rejected) noexcept;
  /// Moves every queued buffer to `out` (appended), in completion order.
  void take_all(std::vector<CompletedBuffer>& out);
  [[nodiscard]] std::size_t size() const;
  /// Longest the queue has been.
  [[nodiscard]] std::size_t high_water() const;

 private:
  mutable std::mutex m_mutex;
  std::vector<CompletedBuffer> m_items;
  std::size_t m_high_water = 0;
};

}  // namespace gpuscope::collect
