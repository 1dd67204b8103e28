// What the cuda_memory report (cuda_memory_report.hpp) reads before it judges anything: every
// allocation and free of device memory in time order, the levels of memory in use per
// (pid, device) after each, which of them were PyTorch's segments (torch_memory_data.hpp),
// and the scopes it gives rows to (training steps, else top-level NVTX ranges).
//
//   load_memory_events  memory_events rows with in_use_bytes set and operation 'alloc' or
//                       'free', ORDER BY ts_ns, id; an event is PyTorch's when its address is
//                       one of the process's PyTorch segments (or a segment it saw taken);
//                       then the process's PyTorch level after it is kept beside the total.
//   memory_scopes       torch_steps rows ("step N", by start) when the trace has them, else
//                       the program's closed top-level NVTX ranges (not the PyTorch hooks').
//   level_at, gpu_peaks the level of a series at a time; the highest sum over a GPU's
//                       processes of the series given, per GPU (core/memory_usage.hpp).
// Memory: one MemoryEvent and one level per allocation or free (the report's event budget).
// Errors: store::DatabaseError from SQLite.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/memory_usage.hpp"
#include "core/saturating.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {
struct TorchMemory;
}

namespace gpuscope::analyze::detail {

class GpuIndexMap;

// One allocation or free of device memory, as memory_events holds it.
struct MemoryEvent {
  std::int64_t id = 0, pid = 0, device = 0, gpu = 0, ts = 0, bytes = 0, in_use = 0, address = 0;
  bool alloc = false;
  bool pytorch = false;             // at the address of one of PyTorch's segments (torch_memory_data.hpp)
  std::int64_t pytorch_in_use = 0;  // then: PyTorch's segments in use by (pid, device) after it
};

// Allocations and frees counted in a scope.
struct AllocCounts {
  std::int64_t allocs = 0, alloc_bytes = 0, frees = 0, freed_bytes = 0;
  void add(const MemoryEvent& e) {
    if (e.alloc) {
      ++allocs;
      alloc_bytes = core::sat_add(alloc_bytes, e.bytes);
    } else {
      ++frees;
      freed_bytes = core::sat_add(freed_bytes, e.bytes);
    }
  }
};

// The levels of one (pid, device), in time order, with the event behind each.
struct MemorySeries {
  std::int64_t gpu = 0;
  std::vector<core::MemoryLevel> levels;
  std::vector<std::size_t> events;  // index into MemoryEvents::events, per level
  // PyTorch's segments in use after each of their allocations and frees (empty when the
  // process has no allocator state), and the live ones by address.
  std::vector<core::MemoryLevel> pytorch;
  std::map<std::int64_t, std::int64_t> pytorch_live;
  std::int64_t pytorch_in_use = 0;
};

struct MemoryEvents {
  std::vector<MemoryEvent> events;                                       // in time order
  std::map<std::pair<std::int64_t, std::int64_t>, MemorySeries> series;  // by (pid, device)
};

[[nodiscard]] MemoryEvents load_memory_events(store::Database& db, const GpuIndexMap& gpus, const TorchMemory& torch);

// A step or top-level NVTX range.
struct MemoryScope {
  std::string name;
  std::int64_t pid = 0, start = 0, end = 0;
};

struct MemoryScopes {
  std::string kind;  // "step" or "nvtx"
  std::vector<MemoryScope> scopes;
};

/// The steps, else the NVTX ranges.
[[nodiscard]] MemoryScopes memory_scopes(store::Database& db);

/// The level of `series` at `ts`: the last one at or before it (0 before the first).
[[nodiscard]] std::int64_t level_at(const std::vector<core::MemoryLevel>& series, std::int64_t ts);

/// (gpu, pid, device) -> that process's levels on the GPU.
using LevelsByProcess =
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, const std::vector<core::MemoryLevel>*>;

/// The highest total over the GPUs' processes of the series given, per GPU.
[[nodiscard]] std::map<std::int64_t, std::int64_t> gpu_peaks(const LevelsByProcess& series);

}  // namespace gpuscope::analyze::detail
