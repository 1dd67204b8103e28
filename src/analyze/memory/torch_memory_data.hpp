// PyTorch's caching allocator as a trace holds it (store/torch_memory_tables.hpp: the
// torch_memory_stats, torch_memory_segments and torch_memory_events tables, written from
// gpuscope's PyTorch hooks at each process's exit), for the cuda_memory report.
//
//   segments   per (pid, device): the addresses of PyTorch's segments, those it held at
//              exit and those its history saw taken (segment_alloc, segment_map): a
//              memory_events allocation at such an address is PyTorch's cudaMalloc.
//   tensors    per (pid, device), with --pytorch=memory: the bytes tensors asked for after each
//              allocator event (alloc adds the size the tensor asked for, free_requested takes
//              it away, as c10 CUDACachingAllocator's requested_bytes counts; its
//              allocated_bytes, torch.cuda.memory_allocated(), counts whole blocks: sizes
//              rounded up to 512 bytes, which the events do not carry), in time order.
//              Replayed forward from 0 when the history is whole; when it reached its limit
//              (the earliest events dropped), backward from requested_bytes at exit, so the
//              levels inside the history are right.
//   stats      per (pid, device): max_memory_reserved(), max_memory_allocated() and
//              requested_bytes.all.peak at exit, as PyTorch counted them.
// An empty TorchMemory (no such tables or rows: a trace without the hooks) is valid.
// Errors: store::DatabaseError from SQLite.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/memory_usage.hpp"

namespace gpuscope::store {
class Database;
}  // namespace gpuscope::store

namespace gpuscope::analyze {

struct TorchMemorySeries {
  std::set<std::int64_t> segment_addresses;
  std::vector<core::MemoryLevel> tensors;  // empty without history
  std::int64_t max_reserved_bytes = 0;
  std::int64_t max_allocated_bytes = 0;
  std::int64_t max_requested_bytes = 0;
  bool has_stats = false;
  bool history_full = false;
};

struct TorchMemory {
  std::map<std::pair<std::int64_t, std::int64_t>, TorchMemorySeries> series;  // by (pid, device_id)
  [[nodiscard]] bool empty() const { return series.empty(); }
  /// The series of (pid, device), or nullptr.
  [[nodiscard]] const TorchMemorySeries* find(std::int64_t pid, std::int64_t device) const {
    const auto it = series.find({pid, device});
    return it == series.end() ? nullptr : &it->second;
  }
};

[[nodiscard]] TorchMemory load_torch_memory(store::Database& db);

}  // namespace gpuscope::analyze
