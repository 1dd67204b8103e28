#include "collect/activity_buffers.hpp"

#include <cstdlib>
#include <cstring>

namespace gpuscope::collect {

ActivityBufferPool::ActivityBufferPool(std::size_t buffer_bytes, std::size_t max_free, bool zeroed)
    : m_buffer_bytes((buffer_bytes + 7) & ~std::size_t{7}), m_max_free(max_free), m_zeroed(zeroed) {
  m_free.reserve(max_free);
}

ActivityBufferPool::~ActivityBufferPool() {
  for (std::uint8_t* b : m_free) std::free(b);
}

std::uint8_t* ActivityBufferPool::acquire() noexcept {
  {
    std::lock_guard lock(m_mutex);
    if (!m_free.empty()) {
      std::uint8_t* b = m_free.back();
      m_free.pop_back();
      return b;
    }
  }
  // Allocate outside the lock; aligned_alloc needs size % alignment == 0 (ensured);
  // calloc's memory is aligned for any fundamental type (>= 8).
  auto* b =
      static_cast<std::uint8_t*>(m_zeroed ? std::calloc(1, m_buffer_bytes) : std::aligned_alloc(8, m_buffer_bytes));
  if (b != nullptr) {
    std::lock_guard lock(m_mutex);
    ++m_allocated;
  }
  return b;
}

void ActivityBufferPool::release(std::uint8_t* buffer) noexcept {
  if (buffer == nullptr) return;
  if (m_zeroed) std::memset(buffer, 0, m_buffer_bytes);
  {
    std::lock_guard lock(m_mutex);
    if (m_free.size() < m_max_free) {  // capacity reserved: push_back cannot throw
      m_free.push_back(buffer);
      return;
    }
    --m_allocated;
  }
  std::free(buffer);
}

std::size_t ActivityBufferPool::prefill(std::size_t count) noexcept {
  std::vector<std::uint8_t*> fresh;
  for (std::size_t i = 0; i < count && i < m_max_free; ++i) {
    auto* b = static_cast<std::uint8_t*>(std::aligned_alloc(8, m_buffer_bytes));
    if (b == nullptr) break;
    std::memset(b, 0, m_buffer_bytes);  // touch every page now, not on the launching thread
    try {
      fresh.push_back(b);
    } catch (...) {
      std::free(b);
      break;
    }
  }
  std::lock_guard lock(m_mutex);
  for (std::uint8_t* b : fresh) {
    if (m_free.size() < m_max_free) {
      m_free.push_back(b);
      ++m_allocated;
    } else {
      std::free(b);
    }
  }
  return m_free.size();
}

std::size_t ActivityBufferPool::allocated() const {
  std::lock_guard lock(m_mutex);
  return m_allocated;
}

std::size_t CompletedQueue::push(const CompletedBuffer& b, bool* rejected) noexcept {
  std::lock_guard lock(m_mutex);
  try {
    m_items.push_back(b);
  } catch (...) {
    *rejected = true;
    return m_items.size();
  }
  *rejected = false;
  if (m_items.size() > m_high_water) m_high_water = m_items.size();
  return m_items.size();
}

void CompletedQueue::take_all(std::vector<CompletedBuffer>& out) {
  std::lock_guard lock(m_mutex);
  out.insert(out.end(), m_items.begin(), m_items.end());
  m_items.clear();
}

std::size_t CompletedQueue::size() const {
  std::lock_guard lock(m_mutex);
  return m_items.size();
}

std::size_t CompletedQueue::high_water() const {
  std::lock_guard lock(m_mutex);
  return m_high_water;
}

}  // namespace gpuscope::collect
