#include "analyze/memory/cuda_memory_events.hpp"

#include <algorithm>
#include <iterator>

#include "analyze/common/gpu_index.hpp"
#include "analyze/common/trace_sql.hpp"
#include "analyze/memory/torch_memory_data.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze::detail {
namespace {

using store::Database;
using store::Statement;

std::vector<MemoryScope> steps(Database& db) {
  std::vector<MemoryScope> out;
  if (!db.has_table("torch_steps")) return out;
  Statement st = db.prepare("SELECT pid, step, start_ns, end_ns FROM torch_steps ORDER BY start_ns, pid, step");
  while (st.step()) {
    out.push_back({"step " + std::to_string(st.column_int(1)), st.column_int(0), st.column_int(2), st.column_int(3)});
  }
  return out;
}

// Closed top-level ranges of the program's own NVTX: push/pop at depth 0 and start/end
// ranges; the PyTorch hooks' operator and module ranges are not the program's.
std::vector<MemoryScope> nvtx_ranges(Database& db) {
  Statement st = db.prepare(
      "SELECT pid, COALESCE(text, ''), start_ns, end_ns FROM v_nvtx WHERE end_ns IS NOT NULL AND style <> 'Mark' AND "
      "parent_id IS NULL AND COALESCE(depth, 0) = 0" +
      user_nvtx_only_sql(db) + " ORDER BY start_ns, id");
  std::vector<MemoryScope> out;
  while (st.step()) out.push_back({st.column_text(1), st.column_int(0), st.column_int(2), st.column_int(3)});
  return out;
}

}  // namespace

MemoryEvents load_memory_events(Database& db, const GpuIndexMap& gpus, const TorchMemory& torch) {
  MemoryEvents out;
  Statement st = db.prepare(
      "SELECT pid, device_id, ts_ns, operation = 'alloc', bytes, in_use_bytes, id, address FROM memory_events "
      "WHERE in_use_bytes IS NOT NULL AND operation IN ('alloc', 'free') ORDER BY ts_ns, id");
  while (st.step()) {
    MemoryEvent e;
    e.pid = st.column_int(0);
    e.device = st.column_int(1);
    e.gpu = gpus.index(e.pid, e.device);
    e.ts = st.column_int(2);
    e.alloc = st.column_int(3) != 0;
    e.bytes = st.is_null(4) ? 0 : st.column_int(4);
    e.in_use = st.column_int(5);
    e.id = st.column_int(6);
    e.address = st.column_int(7);
    MemorySeries& s = out.series[{e.pid, e.device}];
    s.gpu = e.gpu;
    s.levels.push_back({e.ts, e.in_use});
    if (const TorchMemorySeries* t = torch.find(e.pid, e.device);
        t != nullptr && (t->segment_addresses.contains(e.address) || s.pytorch_live.contains(e.address))) {
      e.pytorch = true;
      if (e.alloc) {
        s.pytorch_in_use = core::sat_add(s.pytorch_in_use, e.bytes - s.pytorch_live[e.address]);
        s.pytorch_live[e.address] = e.bytes;
      } else {
        s.pytorch_in_use = std::max<std::int64_t>(0, s.pytorch_in_use - s.pytorch_live[e.address]);
        s.pytorch_live.erase(e.address);
      }
      s.pytorch.push_back({e.ts, s.pytorch_in_use});
      e.pytorch_in_use = s.pytorch_in_use;
    }
    s.events.push_back(out.events.size());
    out.events.push_back(e);
  }
  return out;
}

MemoryScopes memory_scopes(Database& db) {
  MemoryScopes out{"step", steps(db)};
  if (out.scopes.empty()) {
    out.scopes = nvtx_ranges(db);
    out.kind = "nvtx";
  }
  return out;
}

std::int64_t level_at(const std::vector<core::MemoryLevel>& series, std::int64_t ts) {
  const auto it = std::upper_bound(series.begin(), series.end(), ts,
                                   [](std::int64_t t, const core::MemoryLevel& l) { return t < l.ts_ns; });
  return it == series.begin() ? 0 : std::prev(it)->in_use_bytes;
}

std::map<std::int64_t, std::int64_t> gpu_peaks(const LevelsByProcess& series) {
  struct Step {
    std::int64_t ts, gpu, pid, device, level;
  };
  std::vector<Step> steps;
  for (const auto& [key, levels] : series)
    for (const core::MemoryLevel& l : *levels)
      steps.push_back({l.ts_ns, std::get<0>(key), std::get<1>(key), std::get<2>(key), l.in_use_bytes});
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.ts < b.ts; });
  core::GpuMemorySum sum;
  std::map<std::int64_t, std::int64_t> peak;
  for (const Step& s : steps) {
    const std::int64_t total = sum.update(s.gpu, s.pid, s.device, s.level);
    std::int64_t& p = peak[s.gpu];
    p = std::max(p, total);
  }
  return peak;
}

}  // namespace gpuscope::analyze::detail
