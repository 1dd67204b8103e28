// spsc_ring: the bounded single-producer/single-consumer queue of the collector's per-thread
// records (collect/api_ring.hpp: timed API calls; collect/torch_ops_abi.hpp: the PyTorch
// observer's range edges, which the observer pushes itself). Header-only C++17 with no gpuscope
// include: the observer, built against the program's torch by sitecustomize.py, compiles it too,
// so both sides share one layout and one protocol.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace gpuscope::collect {

/// A bounded single-producer/single-consumer queue of `Record`s (ApiCallRecord, TorchOpEvent).
template <class Record>
class Ring {
 public:
  /// `capacity` is rounded up to a power of two (at least 2).
  explicit Ring(std::size_t capacity) {
    std::size_t n = 2;
    while (n < capacity) n <<= 1;
    m_slots = std::make_unique<Record[]>(n);
    m_mask = n - 1;
  }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  /// Producer: appends; false (and the record counted as dropped) when full.
  /// *half_full is set when this push made the ring exactly half full, or was the first
  /// to be dropped since the consumer last took the drop count: the moments to wake the
  /// consumer (once per filling, not per push).
  /// The consumer's position is read only once the ring looks half full by the last one read
  /// (its cache line stays with the consumer between drains): below that, the fill by the
  /// consumer's present position is lower still, so no wake or drop is due.
  bool push(const Record& r, bool* half_full) noexcept {
    const std::uint64_t head = m_head.load(std::memory_order_relaxed);
    std::uint64_t used = head - m_tail_seen;
    if (used + 1 >= (m_mask + 1) / 2) {
      m_tail_seen = m_tail.load(std::memory_order_acquire);
      used = head - m_tail_seen;
    }
    if (used > m_mask) {
      // Wake the consumer (it is behind) on the first drop only, not on every call while full.
      *half_full = m_dropped.fetch_add(1, std::memory_order_relaxed) == 0;
      return false;
    }
    m_slots[head & m_mask] = r;
    m_head.store(head + 1, std::memory_order_release);
    *half_full = used + 1 == (m_mask + 1) / 2;
    return true;
  }

  /// Consumer: calls f(const Record&) for every record in order; returns the count.
  template <class F>
  std::size_t drain(F&& f) {
    const std::uint64_t tail = m_tail.load(std::memory_order_relaxed);
    const std::uint64_t head = m_head.load(std::memory_order_acquire);
    for (std::uint64_t i = tail; i != head; ++i) f(m_slots[i & m_mask]);
    m_tail.store(head, std::memory_order_release);
    return static_cast<std::size_t>(head - tail);
  }

  /// Records dropped because the ring was full, since the last call (consumer).
  [[nodiscard]] std::uint64_t take_dropped() noexcept { return m_dropped.exchange(0, std::memory_order_relaxed); }
  [[nodiscard]] std::size_t capacity() const { return m_mask + 1; }

  /// The owning thread has ended: no push will follow.
  void orphan() noexcept { m_orphaned.store(true, std::memory_order_release); }
  [[nodiscard]] bool orphaned() const noexcept { return m_orphaned.load(std::memory_order_acquire); }

  /// The owning thread's id (gettid), set by its first push; the consumer reads it.
  std::uint32_t thread_id = 0;

 private:
  std::unique_ptr<Record[]> m_slots;
  std::uint64_t m_mask = 0;
  alignas(64) std::atomic<std::uint64_t> m_head{0};  // next slot to write (producer)
  std::uint64_t m_tail_seen = 0;                     // producer: m_tail when last read
  alignas(64) std::atomic<std::uint64_t> m_tail{0};  // next slot to read (consumer)
  std::atomic<std::uint64_t> m_dropped{0};
  std::atomic<bool> m_orphaned{false};
};

}  // namespace gpuscope::collect
