#include "store/memory_tracker.hpp"

#include <algorithm>
#include <limits>

#include "core/saturating.hpp"

namespace gpuscope::store::detail {
namespace {

std::int64_t clamp_size(std::uint64_t bytes) {
  return static_cast<std::int64_t>(std::min<std::uint64_t>(bytes, std::numeric_limits<std::int64_t>::max()));
}

}  // namespace

void MemoryTracker::release(const Live& a) {
  if (!a.counted) return;
  std::int64_t& level = m_in_use[a.device];
  level = std::max<std::int64_t>(0, core::sat_sub(level, a.bytes));
}

MemoryTracker::Effect MemoryTracker::alloc(std::uint64_t address, std::uint64_t bytes, std::uint32_t device,
                                           bool counted, std::optional<std::int64_t> row) {
  const Live a{clamp_size(bytes), device, counted, row};
  auto [it, fresh] = m_live.try_emplace(address, a);
  if (!fresh) {  // the free of the allocation that lived here was lost
    ++m_replaced;
    release(it->second);
    it->second = a;
  }
  Effect e;
  e.bytes = a.bytes;
  if (counted) {
    std::int64_t& level = m_in_use[device];
    level = core::sat_add(level, a.bytes);
    e.in_use_bytes = level;
  }
  return e;
}

MemoryTracker::Effect MemoryTracker::free(std::uint64_t address, std::uint32_t device, bool counted) {
  Effect e;
  const auto it = m_live.find(address);
  if (it == m_live.end()) {
    ++m_unmatched_frees;
    if (counted) e.in_use_bytes = in_use(device);  // unchanged
    return e;
  }
  const Live a = it->second;
  m_live.erase(it);
  release(a);
  e.matched = true;
  e.alloc_row = a.row;
  e.bytes = a.bytes;
  if (a.counted) e.in_use_bytes = in_use(a.device);
  return e;
}

std::int64_t MemoryTracker::in_use(std::uint32_t device) const {
  const auto it = m_in_use.find(device);
  return it == m_in_use.end() ? 0 : it->second;
}

}  // namespace gpuscope::store::detail
