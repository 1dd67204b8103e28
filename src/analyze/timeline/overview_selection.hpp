// The timeline overview's item selection (timeline_overview.hpp says what is kept): per side
// (GPU work, API calls, NVTX) a Selector holds the candidates for the longest events and for
// the spread over time while the events stream by, and a NameTable the names of those held,
// counted, so memory follows the items held, not the events seen.
// Internal to analyze/timeline (overview_builder.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/timeline_overview.hpp"

namespace gpuscope::analyze::detail::overview {

using core::OverviewItem;

// Names held by candidate items, counted, so an evicted item's name goes with it: memory
// follows the items held, not the events seen (NVTX text can differ per event).
class NameTable {
 public:
  std::int32_t acquire(std::string_view name) {
    auto it = m_index.find(name);
    if (it == m_index.end()) {
      std::int32_t id = 0;
      if (!m_free.empty()) {
        id = m_free.back();
        m_free.pop_back();
        m_names[static_cast<std::size_t>(id)] = std::string(name);
      } else {
        id = static_cast<std::int32_t>(m_names.size());
        m_names.emplace_back(name);
        m_refs.push_back(0);
      }
      it = m_index.emplace(std::string(name), id).first;
    }
    ++m_refs[static_cast<std::size_t>(it->second)];
    return it->second;
  }
  void release(std::int32_t id) {
    auto& refs = m_refs[static_cast<std::size_t>(id)];
    if (--refs > 0) return;
    m_index.erase(m_names[static_cast<std::size_t>(id)]);
    m_names[static_cast<std::size_t>(id)].clear();
    m_free.push_back(id);
  }
  [[nodiscard]] const std::string& name(std::int32_t id) const { return m_names[static_cast<std::size_t>(id)]; }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::int32_t, Hash, std::equal_to<>> m_index;
  std::vector<std::string> m_names;
  std::vector<std::int64_t> m_refs;
  std::vector<std::int32_t> m_free;
};

/// An event kept as a candidate item: the item (provisional lane, name from NameTable).
struct Held {
  OverviewItem item;
  std::int64_t pid = 0;
  std::uint64_t serial = 0;  // order seen: unique, breaks ties (earlier wins)
  core::OverviewLaunchConfig config;
};

// The items of one side (GPU activities, API calls or NVTX): every event when the side has
// at most `cap`; else candidates for the longest (the best `cap` of a buffer of up to 1.5 times
// that) and for the spread
// (the longest event of each (lane, time slot), cap/2 cells), each event held once in a pool
// however many of the two hold it. Cost per event: a comparison with the longest's cut and
// with the event's cell; names and copies only for events kept.
class Selector {
 public:
  Selector(NameTable& names, std::int64_t expected, std::int64_t cap, std::int64_t lanes, std::int64_t origin,
           std::int64_t span)
      : m_names(names),
        m_cap(std::max<std::int64_t>(cap, 0)),
        m_all(expected <= m_cap),
        m_origin(origin),
        m_span(span) {
    if (m_all) {
      m_pool.reserve(static_cast<std::size_t>(std::max<std::int64_t>(expected, 0)));
      return;
    }
    m_long_cap = std::max<std::int64_t>(m_cap, 1);
    // The most the pool holds: the longest's buffer and the cells (pages are touched as used).
    m_pool.reserve(static_cast<std::size_t>(m_long_cap + m_long_cap / 2 + m_cap / 2 + 1));
    m_refs.reserve(m_pool.capacity());
    m_slots = std::max<std::int64_t>(1, (m_cap / 2) / std::max<std::int64_t>(lanes, 1));
  }

  void offer(const Held& h, std::string_view name) {
    if (m_cap == 0) return;
    if (m_all) {
      add(h, name);
      return;
    }
    const Key key{h.item.duration_ns, h.serial, -1};
    // Longest: kept while better than the cut of the last compaction (one comparison for
    // most events); the buffer compacts to the best `cap` when it holds 1.5 times that.
    const bool to_long = !m_cut || Better{}(key, *m_cut);
    // The event's cell: its lane (numbered as this selector first meets it) and time slot.
    const auto lane = static_cast<std::size_t>(h.item.lane);
    if (lane >= m_local.size()) m_local.resize(lane + 1, -1);
    if (m_local[lane] < 0) {
      m_local[lane] = m_lanes_seen++;
      m_cells.resize(static_cast<std::size_t>(m_lanes_seen * m_slots), -1);
    }
    const auto slot =
        std::clamp<std::int64_t>(static_cast<std::int64_t>(static_cast<double>(h.item.start_ns - m_origin) /
                                                           static_cast<double>(m_span) * static_cast<double>(m_slots)),
                                 0, m_slots - 1);
    std::int32_t& cell = m_cells[static_cast<std::size_t>(m_local[lane] * m_slots + slot)];
    bool to_cell = cell < 0;
    if (!to_cell) {
      const Held& old = m_pool[static_cast<std::size_t>(cell)];
      to_cell = Better{}(key, Key{old.item.duration_ns, old.serial, -1});
    }
    if (!to_long && !to_cell) return;
    const std::int32_t at = add(h, name);
    if (to_cell) {
      // The reference is taken before the old one is dropped: `cell` may be reused by add.
      ++m_refs[static_cast<std::size_t>(at)];
      const std::int32_t old = cell;
      cell = at;
      if (old >= 0) unref(old);
    }
    if (to_long) {
      m_long.push_back(Key{h.item.duration_ns, h.serial, at});
      ++m_refs[static_cast<std::size_t>(at)];
      if (static_cast<std::int64_t>(m_long.size()) >= m_long_cap + m_long_cap / 2) compact();
    }
  }

  /// The items kept, at most `budget` of them: half (at most) the spread, evenly over the
  /// cells when they are more, then the longest, then the rest of the cells. The names of
  /// the events left out are released.
  std::vector<Held> take(std::int64_t budget);

 private:
  struct Key {
    std::int64_t duration;
    std::uint64_t serial;
    std::int32_t pool;
  };
  // "Better" kept: longer, then earlier.
  struct Better {
    bool operator()(const Key& a, const Key& b) const {
      return a.duration != b.duration ? a.duration > b.duration : a.serial < b.serial;
    }
  };

  // Keeps the best m_long_cap of the longest-event candidates; the worst kept is the cut.
  void compact();

  std::int32_t add(const Held& h, std::string_view name) {
    std::int32_t at = 0;
    if (!m_free.empty()) {
      at = m_free.back();
      m_free.pop_back();
      m_pool[static_cast<std::size_t>(at)] = h;
      m_refs[static_cast<std::size_t>(at)] = 0;
    } else {
      at = static_cast<std::int32_t>(m_pool.size());
      m_pool.push_back(h);
      m_refs.push_back(0);
    }
    m_pool[static_cast<std::size_t>(at)].item.name = m_names.acquire(name);
    return at;
  }

  void unref(std::int32_t at) {
    if (--m_refs[static_cast<std::size_t>(at)] > 0) return;
    m_names.release(m_pool[static_cast<std::size_t>(at)].item.name);
    m_free.push_back(at);
  }

  NameTable& m_names;
  std::int64_t m_cap;
  bool m_all;
  std::int64_t m_origin;  // the drawn range's start (ns relative to the time base)
  std::int64_t m_span;
  std::int64_t m_long_cap = 1;
  std::int64_t m_slots = 1;
  std::vector<Held> m_pool;           // events held (all mode: every event)
  std::vector<std::int32_t> m_refs;   // per pool entry: how many of the longest and the cells hold it
  std::vector<std::int32_t> m_free;   // pool entries free for reuse
  std::vector<Key> m_long;            // candidates for the longest (up to 1.5 × m_long_cap)
  std::optional<Key> m_cut;           // the worst of the best m_long_cap at the last compaction
  std::vector<std::int32_t> m_local;  // provisional lane → this selector's lane number (-1: none yet)
  std::int64_t m_lanes_seen = 0;
  std::vector<std::int32_t> m_cells;  // (local lane × slots + slot) → pool entry, -1 = empty
};

}  // namespace gpuscope::analyze::detail::overview
