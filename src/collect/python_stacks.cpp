// Python stack interning (python_stacks.hpp).
#include "collect/python_stacks.hpp"

namespace gpuscope::collect::detail {

std::uint32_t PyStackTable::intern(std::span<const PyRawFrame> frames, std::uintptr_t* new_codes,
                                   std::size_t* n_new_codes, bool* added_frame) {
  std::lock_guard lock(m_mutex);
  if (n_new_codes != nullptr) *n_new_codes = 0;
  if (added_frame != nullptr) *added_frame = false;
  std::uint32_t parent = 0;
  // Outermost first: each node is (caller node, frame).
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    auto [frame_it, new_frame] = m_frames.try_emplace(*it, static_cast<std::uint32_t>(m_frames.size() + 1));
    if (new_frame) {
      m_to_resolve.push_back({frame_it->second, *it});
      if (added_frame != nullptr) *added_frame = true;
      if (m_codes.insert(it->code).second && new_codes != nullptr && n_new_codes != nullptr)
        new_codes[(*n_new_codes)++] = it->code;
    }
    const std::uint64_t key = (std::uint64_t{parent} << 32) | frame_it->second;
    auto [stack_it, new_stack] = m_stacks.try_emplace(key, static_cast<std::uint32_t>(m_stacks.size() + 1));
    if (new_stack) {
      const std::uint32_t depth = parent == 0 ? 0 : m_depths[parent - 1] + 1;
      m_depths.push_back(depth);
      m_new.stacks.push_back({stack_it->second, parent, frame_it->second, depth});
    }
    parent = stack_it->second;
  }
  return parent;
}

void PyStackTable::take_new(PyStackAdditions& out) {
  std::lock_guard lock(m_mutex);
  out.stacks.insert(out.stacks.end(), m_new.stacks.begin(), m_new.stacks.end());
  m_new = {};
}

void PyStackTable::take_frames_to_resolve(std::vector<PyInternedFrame>& out) {
  std::lock_guard lock(m_mutex);
  out.insert(out.end(), m_to_resolve.begin(), m_to_resolve.end());
  m_to_resolve.clear();
}

std::size_t PyStackTable::frame_count() const {
  std::lock_guard lock(m_mutex);
  return m_frames.size();
}

std::size_t PyStackTable::stack_count() const {
  std::lock_guard lock(m_mutex);
  return m_stacks.size();
}

}  // namespace gpuscope::collect::detail
