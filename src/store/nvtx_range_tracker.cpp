#include "store/nvtx_range_tracker.hpp"

namespace gpuscope::store {

std::string_view nvtx_style_text(NvtxStyle style) {
  switch (style) {
    case NvtxStyle::kStartEnd:
      return "StartEnd";
    case NvtxStyle::kMark:
      return "Mark";
    case NvtxStyle::kPushPop:
      break;
  }
  return "PushPop";
}

void NvtxRangeTracker::emit(const Open& o, std::uint32_t end_tid, std::optional<std::uint64_t> end_ns, NvtxStyle style,
                            std::optional<std::uint32_t> depth, std::int64_t parent_id) {
  m_emit(NvtxRange{o.id, &o.rec, end_tid, end_ns, style, depth, parent_id});
}

void NvtxRangeTracker::process(const log::NvtxRecord& r) {
  using T = log::NvtxEventType;
  // Looked up for every record (as the importer always did): the stacks' iteration order in
  // close_all() depends on it, and with it the order of the rows written there.
  auto& stack = m_stacks[{r.thread_id, r.domain_id}];
  switch (static_cast<T>(r.type)) {
    case T::kPush: {
      const std::int64_t parent = stack.empty() ? 0 : stack.back().id;
      stack.push_back({m_new_id(r.ts_ns), r, static_cast<std::uint32_t>(stack.size()), parent});
      break;
    }
    case T::kPop: {
      if (stack.empty()) {
        ++m_unmatched_pops;
        break;
      }
      const Open o = stack.back();
      stack.pop_back();
      if (o.id != 0) emit(o, r.thread_id, r.ts_ns, NvtxStyle::kPushPop, o.depth, o.parent_id);
      break;
    }
    case T::kStart: {
      if (const auto old = m_started.find(r.range_id); old != m_started.end()) {
        // A reused range id: the earlier range was never ended.
        if (old->second.id != 0) {
          ++m_unclosed;
          emit(old->second, old->second.rec.thread_id, std::nullopt, NvtxStyle::kStartEnd, std::nullopt, 0);
        }
        m_started.erase(old);
      }
      m_started.emplace(r.range_id, Open{m_new_id(r.ts_ns), r, 0, 0});
      break;
    }
    case T::kEnd: {
      const auto it = m_started.find(r.range_id);
      if (it == m_started.end()) {
        ++m_unmatched_ends;
        break;
      }
      if (it->second.id != 0) {
        emit(it->second, r.thread_id, r.ts_ns, NvtxStyle::kStartEnd, std::nullopt, 0);
      }
      m_started.erase(it);
      break;
    }
    case T::kMark: {
      const Open mark{m_new_id(r.ts_ns), r, 0, 0};
      if (mark.id != 0) {
        emit(mark, r.thread_id, std::nullopt, NvtxStyle::kMark, std::nullopt, stack.empty() ? 0 : stack.back().id);
      }
      break;
    }
    default:
      break;
  }
}

void NvtxRangeTracker::close_all() {
  for (auto& [key, stack] : m_stacks) {
    for (const Open& o : stack) {
      if (o.id == 0) continue;
      ++m_unclosed;
      emit(o, o.rec.thread_id, std::nullopt, NvtxStyle::kPushPop, o.depth, o.parent_id);
    }
    stack.clear();
  }
  for (const auto& [range, o] : m_started) {
    if (o.id == 0) continue;
    ++m_unclosed;
    emit(o, o.rec.thread_id, std::nullopt, NvtxStyle::kStartEnd, std::nullopt, 0);
  }
  m_started.clear();
}

}  // namespace gpuscope::store
