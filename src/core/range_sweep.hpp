// The innermost of properly nested ranges (one thread's push/pop ranges) that holds each of
// a series of instants given in time order: a stack of the ranges open at the instant, so
// a thread's n ranges and m instants cost O(n + m). Used to tie kernel launch calls to the
// operator and module ranges around them (store/pytorch_tables.cpp, analyze/pytorch/pytorch_reports.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace gpuscope::core {

/// One range: [start_ns, end_ns] (end inclusive; an unclosed range: INT64_MAX) and an id.
struct NestedRange {
  std::int64_t start_ns = 0, end_ns = 0, id = 0;
};

/// Ranges per (pid, tid), each thread's in start order (ties: the outer one first).
class RangeSweep {
 public:
  using Thread = std::pair<std::int64_t, std::int64_t>;

  void add(Thread thread, NestedRange r) { m_ranges[thread].push_back(r); }

  /// Starts over: the next innermost() call may go back in time (a second sorted pass).
  void rewind() { m_started = false; }

  /// The id of the innermost range of `thread` that holds `at_ns`, or nullopt. Calls must
  /// come grouped by thread and, within one, in time order (SQL: ORDER BY pid, tid, start).
  [[nodiscard]] std::optional<std::int64_t> innermost(Thread thread, std::int64_t at_ns) {
    if (thread != m_thread || !m_started) {
      m_started = true;
      m_thread = thread;
      const auto it = m_ranges.find(thread);
      m_list = it == m_ranges.end() ? nullptr : &it->second;
      m_next = 0;
      m_open.clear();
    }
    if (m_list == nullptr) return std::nullopt;
    while (m_next < m_list->size() && (*m_list)[m_next].start_ns <= at_ns) {
      const NestedRange& r = (*m_list)[m_next++];
      while (!m_open.empty() && m_open.back()->end_ns < r.start_ns) m_open.pop_back();
      m_open.push_back(&r);
    }
    while (!m_open.empty() && m_open.back()->end_ns < at_ns) m_open.pop_back();
    if (m_open.empty()) return std::nullopt;
    return m_open.back()->id;
  }

 private:
  std::map<Thread, std::vector<NestedRange>> m_ranges;
  bool m_started = false;
  Thread m_thread{};
  const std::vector<NestedRange>* m_list = nullptr;
  std::size_t m_next = 0;
  std::vector<const NestedRange*> m_open;
};

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
