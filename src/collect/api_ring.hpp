// Records taken on the application's threads for the writer thread: API calls timed by
// gpuscope's own CUPTI callbacks (GPUSCOPE_API_CALLS=gpu) and PyTorch operator / module
// events from the torch observer (collect/torch_ops_abi.hpp). Each application thread
// appends to a ring of its own per kind (one producer, no lock, no system call on the hot
// path); the writer thread drains every ring (one consumer).
//
// Ring<Record> (ApiRing, TorchOpRing) is a bounded single-producer/single-consumer queue: push() from the owning
// thread only, drain() from the writer thread only. A full ring drops the record and
// counts it (never blocks the traced program). RingRegistry owns the rings: a
// thread gets its ring on first use and marks it orphaned when it exits; the writer
// frees an orphaned ring once it has drained it.
// No CUPTI calls: unit-tested in tests/unit/collect/test_api_ring.cpp.
#pragma once

#include <algorithm>
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

/// One event of a PyTorch operator or module range, as the torch observer handed it to the
/// collector's C ABI (collect/torch_ops_abi.hpp): timestamps on the collector's clock (ns).
struct TorchOpEvent {
  std::uint64_t ts_ns = 0;
  std::int64_t seq = -1;        // begin: RecordFunction::seqNr() (-1 = none)
  std::uint64_t op_id = 0;      // begin: the call's id, unique in the process (0 = none)
  std::uint32_t name_id = 0;    // begin: gpuscope_torch_intern's id (op name or module text)
  std::uint32_t shapes_id = 0;  // begin: interned input shapes, 0 = not recorded
  std::uint8_t type = 0;        // log::TorchOpEventType
};

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

template <class Record>
class RingRegistry {
 public:
  explicit RingRegistry(std::size_t ring_capacity) : m_capacity(ring_capacity) {}

  /// A new ring for the calling thread, owned by the registry (nullptr when memory
  /// runs out). The caller keeps the pointer thread-locally and calls orphan() on exit.
  [[nodiscard]] Ring<Record>* add_ring(std::uint32_t thread_id = 0) noexcept {
    try {
      auto ring = std::make_unique<Ring<Record>>(m_capacity);
      ring->thread_id = thread_id;
      Ring<Record>* raw = ring.get();
      std::lock_guard lock(m_mutex);
      m_rings.push_back(std::move(ring));
      return raw;
    } catch (...) {
      return nullptr;
    }
  }

  /// Consumer: drains every ring (f(const Ring<Record>&, const Record&)), adds the records
  /// dropped since the last call to *dropped, and frees orphaned rings once drained.
  /// Returns the count.
  template <class F>
  std::size_t drain_all_with_ring(F&& f, std::uint64_t* dropped) {
    std::vector<Ring<Record>*> rings;
    {
      std::lock_guard lock(m_mutex);
      for (const auto& r : m_rings) rings.push_back(r.get());
    }
    std::size_t n = 0;
    std::vector<Ring<Record>*> done;  // orphaned and drained: freed below
    for (Ring<Record>* r : rings) {
      const bool orphaned = r->orphaned();  // before draining: nothing follows it
      n += r->drain([&](const Record& rec) { f(*r, rec); });
      *dropped += r->take_dropped();
      if (orphaned) done.push_back(r);
    }
    if (!done.empty()) free(done);
    return n;
  }

  /// As drain_all_with_ring, f(const Record&).
  template <class F>
  std::size_t drain_all(F&& f, std::uint64_t* dropped) {
    return drain_all_with_ring([&](const Ring<Record>&, const Record& rec) { f(rec); }, dropped);
  }

  /// Rings alive (for tests and diagnostics).
  [[nodiscard]] std::size_t size() const {
    std::lock_guard lock(m_mutex);
    return m_rings.size();
  }

 private:
  void free(const std::vector<Ring<Record>*>& done) {
    std::lock_guard lock(m_mutex);
    std::erase_if(m_rings, [&](const std::unique_ptr<Ring<Record>>& r) {
      return std::find(done.begin(), done.end(), r.get()) != done.end();
    });
  }

  const std::size_t m_capacity;
  mutable std::mutex m_mutex;
  std::vector<std::unique_ptr<Ring<Record>>> m_rings;
};

/// A thread's pointer to its ring, in a thread_local: when the thread ends the ring is marked
/// orphaned (the writer frees it once drained) and the pointer cleared, so a call later in the
/// thread's teardown (after its thread_locals are destroyed) never writes into a freed ring.
template <class Record>
struct ThreadRing {
  Ring<Record>* ring = nullptr;
  ThreadRing() = default;
  ThreadRing(const ThreadRing&) = delete;
  ThreadRing& operator=(const ThreadRing&) = delete;
  ~ThreadRing() {
    if (ring != nullptr) ring->orphan();
    ring = nullptr;
  }
};

using ApiRing = Ring<ApiCallRecord>;
using ApiRingRegistry = RingRegistry<ApiCallRecord>;
using TorchOpRing = Ring<TorchOpEvent>;
using TorchOpRingRegistry = RingRegistry<TorchOpEvent>;

}  // namespace gpuscope::collect
