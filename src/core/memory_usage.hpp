// core/memory_usage: device memory in use over time, from the levels the importer stores
// (memory_events.in_use_bytes: what one process holds on one device just after each of its
// allocations and frees, store/memory_tracker.hpp). Shared by the cuda_memory report and
// the Perfetto export's memory counters; pure, no I/O.
//
//   GpuMemorySum    the memory in use on one physical GPU: the sum over the processes (and
//                   their device ordinals) on it of each one's latest level. Fed the levels
//                   in time order, it gives the GPU's total after each.
//   peak_in()       the highest level of one series inside a time window [start, end),
//                   counting the level the window starts with (memory allocated before a
//                   step is in use during it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace gpuscope::core {

class GpuMemorySum {
 public:
  /// Process `pid`'s device `device_id`, on physical GPU `gpu`, has `in_use_bytes` in use
  /// from now on. Returns the GPU's total: the latest level of every (pid, device_id) on it
  /// (saturating; a negative level, only in a damaged trace, counts as 0).
  std::int64_t update(std::int64_t gpu, std::int64_t pid, std::int64_t device_id, std::int64_t in_use_bytes);
  /// The GPU's total now (0 for a GPU never updated).
  [[nodiscard]] std::int64_t total(std::int64_t gpu) const;

 private:
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::int64_t> m_level;  // (gpu, pid, device)
  std::map<std::int64_t, std::int64_t> m_total;                                          // by gpu
};

/// One level of a series: memory in use just after the event at ts_ns.
struct MemoryLevel {
  std::int64_t ts_ns = 0;
  std::int64_t in_use_bytes = 0;
};

/// The peak of a series inside a window.
struct WindowPeak {
  std::int64_t start_bytes = 0;  // in use when the window starts (the last level before it, else 0)
  std::int64_t peak_bytes = 0;   // max(start_bytes, every level inside the window)
  std::int64_t peak_ns = 0;      // when it was first reached (the window's start for start_bytes)
  /// Index in the series of the level that reached the peak first; nullopt when the peak is
  /// the level the window started with.
  std::optional<std::size_t> peak_index;
  std::int64_t end_bytes = 0;  // in use at the window's end (the last level before `end`)
  std::size_t first = 0;       // the levels inside the window: indices [first, last)
  std::size_t last = 0;
};

/// The peak of `series` (sorted by ts_ns; equal times in event order) over [start, end):
/// the levels with start <= ts_ns < end and the one entering the window. Ties keep the
/// earliest. An empty window (end <= start) gives the entering level only.
[[nodiscard]] WindowPeak peak_in(const std::vector<MemoryLevel>& series, std::int64_t start, std::int64_t end);

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
