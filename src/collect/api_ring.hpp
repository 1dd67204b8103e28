// Records taken on the application's threads for the writer thread: API calls timed by
// gpuscope's own CUPTI callbacks (GPUSCOPE_API_CALLS=gpu) and PyTorch operator / module
// events from the torch observer (collect/torch_ops_abi.hpp). Each application thread
// appends to a ring of its own per kind (one producer, no lock, no system call on the hot
// path); the writer thread drains every ring (one consumer).
//
// Ring<Record> (collect/spsc_ring.hpp; ApiRing, TorchOpRing) is a bounded single-producer/single-consumer queue: push()
// from the owning thread only, drain() from the writer thread only. A full ring drops the record and counts it (never
// blocks the traced program). RingRegistry owns the rings: a thread gets its ring on first use and marks it orphaned
// when it exits; the writer frees an orphaned ring once it has drained it. No CUPTI calls: unit-tested in
// tests/unit/collect/test_api_ring.cpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "collect/spsc_ring.hpp"
#include "collect/torch_ops_abi.hpp"

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
using TorchOpRingRegistry = RingRegistry<TorchOpEvent>;

}  // namespace gpuscope::collect
