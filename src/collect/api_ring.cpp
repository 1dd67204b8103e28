#include "collect/api_ring.hpp"

#include <algorithm>
#include <new>

namespace gpuscope::collect {

ApiRing::ApiRing(std::size_t capacity) {
  std::size_t n = 2;
  while (n < capacity) n <<= 1;
  m_slots = std::make_unique<ApiCallRecord[]>(n);
  m_mask = n - 1;
}

bool ApiRing::push(const ApiCallRecord& r, bool* half_full) noexcept {
  const std::uint64_t head = m_head.load(std::memory_order_relaxed);
  const std::uint64_t used = head - m_tail.load(std::memory_order_acquire);
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

ApiRing* ApiRingRegistry::add_ring() noexcept {
  try {
    auto ring = std::make_unique<ApiRing>(m_capacity);
    ApiRing* raw = ring.get();
    std::lock_guard lock(m_mutex);
    m_rings.push_back(std::move(ring));
    return raw;
  } catch (...) {
    return nullptr;
  }
}

void ApiRingRegistry::free(const std::vector<ApiRing*>& done) {
  std::lock_guard lock(m_mutex);
  std::erase_if(m_rings, [&](const std::unique_ptr<ApiRing>& r) {
    return std::find(done.begin(), done.end(), r.get()) != done.end();
  });
}

std::size_t ApiRingRegistry::size() const {
  std::lock_guard lock(m_mutex);
  return m_rings.size();
}

}  // namespace gpuscope::collect
