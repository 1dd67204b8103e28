// MemoryTracker: the allocation bookkeeping of one process at import (CONVENTIONS 18: a
// tracker, not the parser). Fed the process's allocations and frees in time order
// (event_tables.cpp sorts the log's MemoryRecords first: CUPTI's per-thread buffers reach
// the log out of order), it matches each free to its allocation by address and keeps the
// device memory in use per device: the sum of the sizes of the live allocations of the
// kinds that occupy GPU memory ('device' and 'device_static'; pinned host, managed and
// pageable memory are matched but not counted).
//
// Rules (the memory_events columns alloc_id and in_use_bytes come from them):
//   - alloc: adds its bytes to its device (counted kinds) and becomes live at its address.
//   - free of a live address: subtracts the allocation's bytes from the allocation's device
//     (whatever the free record says) and reports the allocation's row.
//   - free of an address never seen allocated: memory in use is left unchanged, never
//     negative (the allocation was made before recording started, or its record was lost);
//     counted in unmatched_frees() (data_loss 'unmatched_memory_free').
//   - alloc at a live address: the free in between was lost; the old allocation is counted
//     as freed first (replaced_allocations(), data_loss 'memory_alloc_over_live').
// Sizes are int64 as the trace stores them: a size above INT64_MAX (damage) counts as
// INT64_MAX, and sums saturate (core/saturating.hpp), so a damaged log cannot overflow them;
// a subtraction never goes below 0.
// Pure: no database, no I/O; memory grows with the number of live allocations.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>

namespace gpuscope::store::detail {

class MemoryTracker {
 public:
  /// What one allocation or free did.
  struct Effect {
    /// free: the row of the allocation it released (as given to alloc(); nullopt when the
    /// allocation was never seen or had no row).
    std::optional<std::int64_t> alloc_row;
    /// free: the allocation was found (alloc_row may still be nullopt: it had no row).
    bool matched = false;
    /// Bytes the operation added (alloc) or released (a matched free: the allocation's size;
    /// an unmatched free: 0).
    std::int64_t bytes = 0;
    /// Device memory in use on the device concerned just after it (the allocation's device
    /// for a matched free); nullopt when the memory is of a kind not counted.
    std::optional<std::int64_t> in_use_bytes;
  };

  /// An allocation of `bytes` at `address` on `device`. `counted`: the kind occupies GPU
  /// memory. `row`: its memory_events.id, nullopt when it gets no row (outside a capture window).
  Effect alloc(std::uint64_t address, std::uint64_t bytes, std::uint32_t device, bool counted,
               std::optional<std::int64_t> row);
  /// A free of `address`, reported on `device` for a memory kind that is `counted` (used only
  /// when the allocation was never seen).
  Effect free(std::uint64_t address, std::uint32_t device, bool counted);

  /// Memory in use on `device` now (0 for a device never seen).
  [[nodiscard]] std::int64_t in_use(std::uint32_t device) const;
  [[nodiscard]] std::uint64_t unmatched_frees() const { return m_unmatched_frees; }
  [[nodiscard]] std::uint64_t replaced_allocations() const { return m_replaced; }

 private:
  struct Live {
    std::int64_t bytes = 0;
    std::uint32_t device = 0;
    bool counted = false;
    std::optional<std::int64_t> row;
  };
  void release(const Live& a);

  std::unordered_map<std::uint64_t, Live> m_live;  // by address
  std::map<std::uint32_t, std::int64_t> m_in_use;  // by device
  std::uint64_t m_unmatched_frees = 0;
  std::uint64_t m_replaced = 0;
};

}  // namespace gpuscope::store::detail
