#include "analyze/memory/torch_memory_data.hpp"

#include <algorithm>
#include <string>

#include "core/saturating.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {

TorchMemory load_torch_memory(store::Database& db) {
  TorchMemory out;
  if (!db.has_table("torch_memory_stats")) return out;
  {
    store::Statement st = db.prepare(
        "SELECT pid, device_id, max_reserved_bytes, max_allocated_bytes, max_requested_bytes, "
        "COALESCE(history_events >= history_max_events, 0) FROM torch_memory_stats");
    while (st.step()) {
      TorchMemorySeries& s = out.series[{st.column_int(0), st.column_int(1)}];
      s.has_stats = true;
      s.max_reserved_bytes = st.column_int(2);
      s.max_allocated_bytes = st.column_int(3);
      s.max_requested_bytes = st.column_int(4);
      s.history_full = st.column_int(5) != 0;
    }
  }
  {
    store::Statement st = db.prepare(
        "SELECT pid, device_id, address FROM torch_memory_segments UNION SELECT pid, device_id, address FROM "
        "torch_memory_events WHERE action IN ('segment_alloc', 'segment_map')");
    while (st.step()) out.series[{st.column_int(0), st.column_int(1)}].segment_addresses.insert(st.column_int(2));
  }
  // Tensors' requested bytes after each event; rows of one process are in the allocator's order.
  store::Statement st = db.prepare(
      "SELECT e.pid, e.device_id, e.ts_ns, CASE e.action WHEN 'alloc' THEN e.bytes ELSE -e.bytes END, "
      "s.requested_bytes FROM torch_memory_events e LEFT JOIN torch_memory_stats s ON s.pid = e.pid AND "
      "s.device_id = e.device_id WHERE e.action IN ('alloc', 'free_requested') ORDER BY e.pid, e.device_id, e.rowid");
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::int64_t>> deltas;
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> at_exit;
  while (st.step()) {
    const std::pair key{st.column_int(0), st.column_int(1)};
    std::vector<core::MemoryLevel>& levels = out.series[key].tensors;
    // In the allocator's order; its approximate clock may step back by a microsecond.
    levels.push_back({levels.empty() ? st.column_int(2) : std::max(levels.back().ts_ns, st.column_int(2)), 0});
    deltas[key].push_back(st.column_int(3));
    if (!st.is_null(4)) at_exit[key] = st.column_int(4);
  }
  for (auto& [key, d] : deltas) {
    TorchMemorySeries& s = out.series[key];
    std::int64_t level = 0;
    if (s.history_full) {  // backward from the level at exit
      level = at_exit.contains(key) ? at_exit[key] : 0;
      for (std::size_t i = d.size(); i-- > 0;) {
        s.tensors[i].in_use_bytes = level;
        level = core::sat_sub(level, d[i]);
      }
      continue;
    }
    for (std::size_t i = 0; i < d.size(); ++i) {
      level = core::sat_add(level, d[i]);
      s.tensors[i].in_use_bytes = level;
    }
  }
  return out;
}

}  // namespace gpuscope::analyze
