// API call records taken by gpuscope's own CUPTI callbacks (GPUSCOPE_API_CALLS=gpu):
// each application thread appends to a ring of its own (one producer, no lock, no
// system call on the hot path); the writer thread drains every ring (one consumer).
//
// ApiRing is a bounded single-producer/single-consumer queue: push() from the owning
// thread only, drain() from the writer thread only. A full ring drops the record and
// counts it (never blocks the traced program). ApiRingRegistry owns the rings: a
// thread gets its ring on first use and marks it orphaned when it exits; the writer
// frees an orphaned ring once it has drained it.
// No CUPTI calls: unit-tested in tests/unit/collect/test_api_ring.cpp.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace gpuscope::collect {

/// One API call as the callbacks saw it: entry and exit on the CUPTI clock (ns).
struct ApiCallRecord {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t thread_id = 0;       // gettid
  std::uint32_t correlation_id = 0;  // CUpti_CallbackData::correlationId
  std::uint32_t cbid = 0;
  std::int32_t return_value = 0;  // cudaError_t / CUresult
  std::uint8_t driver = 0;        // 0 runtime API, 1 driver API
  std::uint32_t py_stack_id = 0;  // the caller's Python stack (collect/python_stacks.hpp), 0 = none
};

class ApiRing {
 public:
  /// `capacity` is rounded up to a power of two (at least 2).
  explicit ApiRing(std::size_t capacity);
  ApiRing(const ApiRing&) = delete;
  ApiRing& operator=(const ApiRing&) = delete;

  /// Producer: appends; false (and the record counted as dropped) when full.
  /// *half_full is set when this push made the ring exactly half full, or was the first
  /// to be dropped since the consumer last took the drop count: the moments to wake the
  /// consumer (once per filling, not per push).
  bool push(const ApiCallRecord& r, bool* half_full) noexcept;

  /// Consumer: calls f(const ApiCallRecord&) for every record in order; returns the count.
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

 private:
  std::unique_ptr<ApiCallRecord[]> m_slots;
  std::uint64_t m_mask = 0;
  alignas(64) std::atomic<std::uint64_t> m_head{0};  // next slot to write (producer)
  alignas(64) std::atomic<std::uint64_t> m_tail{0};  // next slot to read (consumer)
  std::atomic<std::uint64_t> m_dropped{0};
  std::atomic<bool> m_orphaned{false};
};

class ApiRingRegistry {
 public:
  explicit ApiRingRegistry(std::size_t ring_capacity) : m_capacity(ring_capacity) {}

  /// A new ring for the calling thread, owned by the registry (nullptr when memory
  /// runs out). The caller keeps the pointer thread-locally and calls orphan() on exit.
  [[nodiscard]] ApiRing* add_ring() noexcept;

  /// Consumer: drains every ring (f as ApiRing::drain), adds the records dropped since
  /// the last call to *dropped, and frees orphaned rings once drained. Returns the count.
  template <class F>
  std::size_t drain_all(F&& f, std::uint64_t* dropped) {
    std::vector<ApiRing*> rings;
    {
      std::lock_guard lock(m_mutex);
      for (const auto& r : m_rings) rings.push_back(r.get());
    }
    std::size_t n = 0;
    std::vector<ApiRing*> done;  // orphaned and drained: freed below
    for (ApiRing* r : rings) {
      const bool orphaned = r->orphaned();  // before draining: nothing follows it
      n += r->drain(f);
      *dropped += r->take_dropped();
      if (orphaned) done.push_back(r);
    }
    if (!done.empty()) free(done);
    return n;
  }

  /// Rings alive (for tests and diagnostics).
  [[nodiscard]] std::size_t size() const;

 private:
  void free(const std::vector<ApiRing*>& done);

  const std::size_t m_capacity;
  mutable std::mutex m_mutex;
  std::vector<std::unique_ptr<ApiRing>> m_rings;
};

}  // namespace gpuscope::collect
