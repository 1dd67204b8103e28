// NvtxRangeTracker: turns one process's NVTX records into ranges and marks (Perfetto's
// slice_tracker is the model: the reader only feeds records, the tracker owns matching).
//
//  - push/pop: matched per (thread, domain) as a stack; a range gets its nesting depth
//    (0 = outermost) and the id of the enclosing range (0 at top level);
//  - start/end: matched per range id, across threads (end_tid = the ending thread);
//    a start that reuses an open range id closes the old range as unclosed;
//  - marks: an instant, parented to the innermost open push range of its thread/domain.
//
// Records must come in time order (the caller sorts them). Each range is emitted once,
// when it closes, or from close_all() when it never did (end_ns nullopt). Ids come from
// the caller's `new_id(ts)` at the open (0 = drop this range: outside the capture windows);
// a dropped range still nests and matches, but is never emitted.
// Problems are counted, never thrown: unmatched_pops(), unmatched_ends(), unclosed().
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/event_log_format.hpp"

namespace gpuscope::store {

enum class NvtxStyle { kPushPop, kStartEnd, kMark };

/// nvtx_events.style: "PushPop", "StartEnd", "Mark" (nsys's names).
[[nodiscard]] std::string_view nvtx_style_text(NvtxStyle style);

/// A range or mark ready to be written (nvtx_events).
struct NvtxRange {
  std::int64_t id = 0;                    // from new_id(), never 0
  const log::NvtxRecord* open = nullptr;  // the push/start/mark record (valid during emit)
  std::uint32_t end_tid = 0;              // thread that closed it (= open->thread_id if never closed)
  std::optional<std::uint64_t> end_ns;    // nullopt: a mark, or never closed
  NvtxStyle style = NvtxStyle::kPushPop;
  std::optional<std::uint32_t> depth;  // push/pop only
  std::int64_t parent_id = 0;          // enclosing push/pop range, 0 = none (StartEnd: always 0)
};

class NvtxRangeTracker {
 public:
  using NewId = std::function<std::int64_t(std::uint64_t ts)>;
  using Emit = std::function<void(const NvtxRange&)>;

  NvtxRangeTracker(NewId new_id, Emit emit) : m_new_id(std::move(new_id)), m_emit(std::move(emit)) {}

  /// One record (push, pop, start, end or mark); others are ignored.
  void process(const log::NvtxRecord& r);
  /// Emits every range still open (end_ns nullopt), counting them as unclosed:
  /// push/pop stacks first, then start/end ranges by range id.
  void close_all();

  [[nodiscard]] std::uint64_t unmatched_pops() const { return m_unmatched_pops; }
  [[nodiscard]] std::uint64_t unmatched_ends() const { return m_unmatched_ends; }
  [[nodiscard]] std::uint64_t unclosed() const { return m_unclosed; }

 private:
  struct Open {
    std::int64_t id;  // 0 = dropped, not emitted
    log::NvtxRecord rec;
    std::uint32_t depth;
    std::int64_t parent_id;
  };
  struct KeyHash {
    std::size_t operator()(const std::pair<std::uint32_t, std::uint64_t>& k) const {
      return std::hash<std::uint64_t>{}(k.second * 0x9e3779b97f4a7c15ull ^ k.first);
    }
  };
  void emit(const Open& o, std::uint32_t end_tid, std::optional<std::uint64_t> end_ns, NvtxStyle style,
            std::optional<std::uint32_t> depth, std::int64_t parent_id);

  NewId m_new_id;
  Emit m_emit;
  // (thread, domain) -> open push ranges, innermost last.
  std::unordered_map<std::pair<std::uint32_t, std::uint64_t>, std::vector<Open>, KeyHash> m_stacks;
  std::map<std::uint64_t, Open> m_started;  // by range id
  std::uint64_t m_unmatched_pops = 0;
  std::uint64_t m_unmatched_ends = 0;
  std::uint64_t m_unclosed = 0;
};

}  // namespace gpuscope::store
