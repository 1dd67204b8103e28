#include "analyze/memory/cuda_memory_report.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analyze/common/event_budget.hpp"
#include "analyze/common/gpu_busy.hpp"
#include "analyze/common/gpu_index.hpp"
#include "analyze/memory/cuda_memory_events.hpp"
#include "analyze/memory/torch_memory_data.hpp"
#include "core/memory_usage.hpp"
#include "core/saturating.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using detail::AllocCounts;
using detail::MemoryEvent;
using detail::MemoryEvents;
using detail::MemorySeries;
using store::Database;
using store::Statement;

constexpr double kMiB = 1024.0 * 1024.0;
// Held per allocation or free: the event (80 bytes), its level in its series (16 bytes) and,
// at a PyTorch segment's address, its level in the series' PyTorch levels (16 bytes).
constexpr std::int64_t kBytesPerEvent = 112;

// The call and size of the allocation that reached a peak (nothing for a free): the name of
// the API call behind its memory_events row ("cudaMalloc"; v_memory.api_name), or nullopt if
// not recorded.
class PeakCalls {
 public:
  explicit PeakCalls(Database& db) : m_st(db.prepare("SELECT api_name FROM v_memory WHERE id = ?")) {}
  std::pair<std::optional<std::string>, Cell> operator()(const MemoryEvent& e) {
    if (!e.alloc) return {std::nullopt, std::monostate{}};
    return {api_name(e.id), Cell{e.bytes}};
  }

 private:
  std::optional<std::string> api_name(std::int64_t event_id) {
    m_st.rewind();
    m_st.bind(1, event_id);
    if (!m_st.step() || m_st.is_null(0)) return std::nullopt;
    return m_st.column_text(0);
  }

  Statement m_st;
};

// What the device rows and notes need of the trace besides its events.
struct Context {
  const detail::GpuIndexMap& gpus;
  const TorchMemory& torch;
  std::int64_t t0 = 0;  // the start of the wall span
  PeakCalls& peak_call;
  [[nodiscard]] std::int64_t since_start(std::int64_t ts) const { return core::sat_sub(ts, t0); }
};

Cell opt_text(const std::optional<std::string>& s) { return s ? Cell{*s} : Cell{std::monostate{}}; }

// "1.5 GiB (1.9 % of its 79.6 GiB)" or "1.5 GiB".
std::string with_share(std::int64_t bytes, std::int64_t device_bytes) {
  std::string s = units::memory_size(static_cast<double>(bytes));
  if (device_bytes > 0) {
    s += " (" + units::percent_of(static_cast<double>(bytes) / static_cast<double>(device_bytes)) + " of its " +
         units::memory_size(static_cast<double>(device_bytes)) + ")";
  }
  return s;
}

void add_columns(Report& r) {
  r.add_column("Scope", "", ColumnType::kText)
      .add_column("Name", "", ColumnType::kText)
      .add_column("PID", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("GPU", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Start", "ns", ColumnType::kInteger)
      .add_column("Peak In Use", "bytes", ColumnType::kInteger)
      .add_column("Peak In Use", "MiB", ColumnType::kReal)
      .add_column("Peak At", "ns", ColumnType::kInteger)
      .add_column("Peak Call", "", ColumnType::kText)
      .add_column("Peak Alloc", "bytes", ColumnType::kInteger)
      .add_column("Allocs", "", ColumnType::kInteger)
      .add_column("Alloc Bytes", "bytes", ColumnType::kInteger)
      .add_column("Frees", "", ColumnType::kInteger)
      .add_column("Freed Bytes", "bytes", ColumnType::kInteger)
      .add_column("End In Use", "bytes", ColumnType::kInteger)
      .add_column("PyTorch Reserved Peak", "bytes", ColumnType::kInteger)
      .add_column("PyTorch Tensors Peak", "bytes", ColumnType::kInteger)
      .add_column("Outside PyTorch at Peak", "bytes", ColumnType::kInteger);
}

// The GPUs' names and device memory sizes (bytes), by GPU index.
struct GpuFacts {
  std::map<std::int64_t, std::string> name;
  std::map<std::int64_t, std::int64_t> memory;
};

GpuFacts gpu_facts(Database& db, const detail::GpuIndexMap& gpus) {
  GpuFacts out;
  Statement st = db.prepare("SELECT pid, device_id, COALESCE(name, ''), global_memory_bytes FROM devices");
  while (st.step()) {
    const std::int64_t gpu = gpus.index(st.column_int(0), st.column_int(1));
    if (!st.column_text(2).empty()) out.name.emplace(gpu, st.column_text(2));
    if (!st.is_null(3) && st.column_int(3) > 0) out.memory.emplace(gpu, st.column_int(3));
  }
  return out;
}

// PyTorch's peaks per GPU, where some process on it saved its allocator state.
struct TorchPeaks {
  std::set<std::int64_t> gpus;
  std::map<std::int64_t, std::int64_t> reserved, allocated;
};

TorchPeaks torch_peaks(const MemoryEvents& m, const TorchMemory& torch) {
  TorchPeaks out;
  detail::LevelsByProcess reserved_series, allocated_series;
  for (const auto& [key, s] : m.series) {
    const TorchMemorySeries* t = torch.find(key.first, key.second);
    if (t == nullptr || !t->has_stats) continue;
    out.gpus.insert(s.gpu);
    reserved_series[{s.gpu, key.first, key.second}] = &s.pytorch;
    if (!t->tensors.empty()) allocated_series[{s.gpu, key.first, key.second}] = &t->tensors;
  }
  out.reserved = detail::gpu_peaks(reserved_series);
  out.allocated = detail::gpu_peaks(allocated_series);
  return out;
}

// 'device' rows: the GPU's total after each event; its first maximum. A note per GPU.
void add_device_rows(Report& r, Database& db, const MemoryEvents& m, const Context& c) {
  const GpuFacts facts = gpu_facts(db, c.gpus);
  struct DevicePeak {
    std::int64_t peak = -1;
    std::size_t event = 0;
    std::int64_t pytorch_at_peak = 0;  // PyTorch's segments in use then
    AllocCounts counts;
  };
  std::map<std::int64_t, DevicePeak> devices;
  core::GpuMemorySum sum, pytorch_sum;
  for (std::size_t i = 0; i < m.events.size(); ++i) {
    const MemoryEvent& e = m.events[i];
    const std::int64_t total = sum.update(e.gpu, e.pid, e.device, e.in_use);
    if (e.pytorch) (void)pytorch_sum.update(e.gpu, e.pid, e.device, e.pytorch_in_use);
    DevicePeak& d = devices[e.gpu];
    d.counts.add(e);
    if (total > d.peak) {
      d.peak = total;
      d.event = i;
      d.pytorch_at_peak = pytorch_sum.total(e.gpu);
    }
  }
  const TorchPeaks torch = torch_peaks(m, c.torch);
  const auto peak_cell = [](const std::map<std::int64_t, std::int64_t>& peaks, std::int64_t gpu) -> Cell {
    const auto it = peaks.find(gpu);
    return it == peaks.end() ? Cell{std::monostate{}} : Cell{it->second};
  };
  for (const auto& [gpu, d] : devices) {
    const MemoryEvent& e = m.events[d.event];
    const auto name_it = facts.name.find(gpu);
    const auto [call, alloc_bytes] = c.peak_call(e);
    r.rows.push_back(
        Row{std::string("device"), name_it != facts.name.end() ? name_it->second : "GPU " + std::to_string(gpu),
            std::monostate{}, gpu, std::monostate{}, d.peak, static_cast<double>(d.peak) / kMiB, c.since_start(e.ts),
            opt_text(call), alloc_bytes, d.counts.allocs, d.counts.alloc_bytes, d.counts.frees, d.counts.freed_bytes,
            sum.total(gpu), peak_cell(torch.reserved, gpu), peak_cell(torch.allocated, gpu),
            torch.gpus.contains(gpu) ? Cell{d.peak - d.pytorch_at_peak} : Cell{std::monostate{}}});
    const auto mem_it = facts.memory.find(gpu);
    std::string text = "GPU " + std::to_string(gpu) + ": peak " +
                       with_share(d.peak, mem_it != facts.memory.end() ? mem_it->second : 0) + " in use at " +
                       units::duration_ns(c.since_start(e.ts)) + " into the trace";
    if (e.alloc) {
      text += ", reached by " + call.value_or("an allocation") + " of " +
              units::memory_size(static_cast<double>(e.bytes)) + " (pid " + std::to_string(e.pid) + ")";
    }
    r.add_note(NoteLevel::kInfo, std::move(text));
  }
}

// PyTorch's own counters beside what the trace replayed, per process and device.
void add_torch_notes(Report& r, const MemoryEvents& m, const Context& c) {
  for (const auto& [key, t] : c.torch.series) {
    if (!t.has_stats) continue;
    const auto it = m.series.find(key);
    const std::int64_t gpu = it != m.series.end() ? it->second.gpu : c.gpus.index(key.first, key.second);
    std::int64_t replayed = 0;
    if (it != m.series.end())
      for (const MemoryLevel& l : it->second.pytorch) replayed = std::max(replayed, l.in_use_bytes);
    std::string text = "PyTorch in pid " + std::to_string(key.first) + " on GPU " + std::to_string(gpu) +
                       ": its segments' peak in the trace " + units::memory_size(static_cast<double>(replayed)) +
                       ", torch.cuda.max_memory_reserved() at exit " +
                       units::memory_size(static_cast<double>(t.max_reserved_bytes));
    text += replayed == t.max_reserved_bytes
                ? " (equal)"
                : " (differs by " + std::to_string(replayed - t.max_reserved_bytes) +
                      " bytes: segments freed before exit and never seen taken by the allocator's history, or a "
                      "reset_peak_memory_stats() in the program)";
    if (!t.tensors.empty()) {
      std::int64_t allocated = 0;
      for (const MemoryLevel& l : t.tensors) allocated = std::max(allocated, l.in_use_bytes);
      text += "; tensors' peak from the allocator's events " + units::memory_size(static_cast<double>(allocated)) +
              ", memory_stats()['requested_bytes.all.peak'] " +
              units::memory_size(static_cast<double>(t.max_requested_bytes)) +
              (allocated == t.max_requested_bytes
                   ? std::string(" (equal)")
                   : " (differs by " + std::to_string(allocated - t.max_requested_bytes) + " bytes)") +
              "; max_memory_allocated() " + units::memory_size(static_cast<double>(t.max_allocated_bytes)) +
              " counts whole blocks" +
              (t.history_full ? " (the history reached its limit: earlier events are missing)" : "");
    }
    r.add_note(NoteLevel::kInfo, std::move(text));
  }
}

// 'step' or 'nvtx' rows: per scope and device of its process, then a note on the one that
// holds the most.
void add_scope_rows(Report& r, Database& db, const MemoryEvents& m, const Context& c) {
  const detail::MemoryScopes scopes = detail::memory_scopes(db);
  struct ScopeRow {
    std::int64_t start, pid, gpu;
    Row row;
  };
  std::vector<ScopeRow> scope_rows;
  for (const detail::MemoryScope& sc : scopes.scopes) {
    for (auto it = m.series.lower_bound({sc.pid, std::numeric_limits<std::int64_t>::min()});
         it != m.series.end() && it->first.first == sc.pid; ++it) {
      const MemorySeries& s = it->second;
      const WindowPeak p = peak_in(s.levels, sc.start, sc.end);
      if (p.peak_bytes == 0 && p.first == p.last) continue;  // nothing on this device during the scope
      AllocCounts counts;
      for (std::size_t k = p.first; k < p.last; ++k) counts.add(m.events[s.events[k]]);
      const auto [call, alloc_bytes] =
          p.peak_index ? c.peak_call(m.events[s.events[*p.peak_index]]) : std::pair<std::optional<std::string>, Cell>{};
      Cell reserved, allocated, outside;
      if (const TorchMemorySeries* t = c.torch.find(sc.pid, it->first.second); t != nullptr && t->has_stats) {
        reserved = peak_in(s.pytorch, sc.start, sc.end).peak_bytes;
        if (!t->tensors.empty()) allocated = peak_in(t->tensors, sc.start, sc.end).peak_bytes;
        outside = p.peak_bytes - detail::level_at(s.pytorch, p.peak_ns);
      }
      scope_rows.push_back({sc.start, sc.pid, s.gpu,
                            Row{scopes.kind, sc.name, sc.pid, s.gpu, c.since_start(sc.start), p.peak_bytes,
                                static_cast<double>(p.peak_bytes) / kMiB, c.since_start(p.peak_ns), opt_text(call),
                                alloc_bytes, counts.allocs, counts.alloc_bytes, counts.frees, counts.freed_bytes,
                                p.end_bytes, reserved, allocated, outside}});
    }
  }
  std::stable_sort(scope_rows.begin(), scope_rows.end(), [](const ScopeRow& a, const ScopeRow& b) {
    return std::tie(a.start, a.pid, a.gpu) < std::tie(b.start, b.pid, b.gpu);
  });
  if (scope_rows.size() > 1) {
    // The step or range that holds the most: the first of the highest.
    const auto peak = [](const ScopeRow& s) { return std::get<std::int64_t>(s.row[5]); };
    const auto top = std::max_element(scope_rows.begin(), scope_rows.end(),
                                      [&](const ScopeRow& a, const ScopeRow& b) { return peak(a) < peak(b); });
    const std::string& name = std::get<std::string>(top->row[1]);
    r.add_note(NoteLevel::kInfo, (scopes.kind == "step" ? name : "NVTX range '" + name + "'") + " (pid " +
                                     std::to_string(top->pid) +
                                     ") holds the most: " + units::memory_size(static_cast<double>(peak(*top))) +
                                     " on GPU " + std::to_string(top->gpu));
  }
  for (ScopeRow& s : scope_rows) r.rows.push_back(std::move(s.row));
}

// What memory in use leaves out.
void add_left_out_notes(Report& r, Database& db) {
  {
    Statement st = db.prepare(
        "SELECT memory_kind, COUNT(*), SUM(bytes) FROM memory_events WHERE operation = 'alloc' AND "
        "in_use_bytes IS NULL GROUP BY memory_kind ORDER BY memory_kind");
    std::string left_out;
    while (st.step()) {
      left_out += (left_out.empty() ? "" : ", ") + std::to_string(st.column_int(1)) + " " + st.column_text(0) + " (" +
                  units::memory_size(static_cast<double>(st.is_null(2) ? 0 : st.column_int(2))) + ")";
    }
    if (!left_out.empty()) {
      r.add_note(NoteLevel::kInfo,
                 "allocations not counted as GPU memory in use (host or managed memory): " + left_out);
    }
  }
  if (const std::int64_t async =
          db.query_int("SELECT COUNT(*) FROM memory_events WHERE operation = 'alloc' AND is_async = 1").value_or(0);
      async > 0) {
    r.add_note(NoteLevel::kInfo,
               std::to_string(async) +
                   " stream-ordered allocations (cudaMallocAsync) count while allocated; their memory "
                   "pools may hold more (memory_events.pool_size_bytes)");
  }
  if (const std::int64_t unmatched =
          db.query_int("SELECT SUM(count) FROM data_loss WHERE what = 'unmatched_memory_free'").value_or(0);
      unmatched > 0) {
    r.add_note(NoteLevel::kInfo, std::to_string(unmatched) +
                                     " frees of memory the trace never saw allocated left memory in use unchanged "
                                     "(data_loss unmatched_memory_free)");
  }
}

}  // namespace

Report cuda_memory(Database& db) {
  Report r;
  r.name = "cuda_memory";
  r.title = "CUDA Memory In Use: Peaks per Device and per Step";
  add_columns(r);

  if (!db.has_table("memory_events")) {
    r.add_note(NoteLevel::kInfo,
               "no memory allocations in the capture range: this trace has no memory_events table (recorded by an "
               "older gpuscope); trace again with gpuscope trace --cuda-memory-usage");
    return r;
  }

  const detail::GpuIndexMap gpus = detail::GpuIndexMap::load(db);
  const std::int64_t t0 = detail::wall_span(db).start_ns;
  check_event_budget({"cuda_memory", "device-memory allocations and frees (memory_events)",
                      db.query_int("SELECT COUNT(*) FROM memory_events WHERE in_use_bytes IS NOT NULL").value_or(0),
                      kBytesPerEvent, ""});

  // Every allocation and free of device memory, in time order; a series per (pid, device).
  const TorchMemory torch = load_torch_memory(db);
  const MemoryEvents m = detail::load_memory_events(db, gpus, torch);
  if (m.events.empty()) {
    const bool any = db.query_int("SELECT COUNT(*) FROM memory_events").value_or(0) > 0;
    r.add_note(NoteLevel::kInfo, any ? "no allocation or free of device memory in the capture range"
                                     : "no memory allocations in the capture range: trace with gpuscope trace "
                                       "--cuda-memory-usage to record them");
    return r;
  }
  // Only where a Python process ran (a CUDA C++ program's allocations are its own calls).
  const bool python =
      db.query_int("SELECT COUNT(*) FROM processes WHERE exe LIKE '%python%' OR cmdline LIKE '%python%'").value_or(1) >
      0;
  if (python)
    r.add_note(NoteLevel::kInfo,
               "PyTorch's caching allocator shows here as segments, not tensors: the blocks it takes with cudaMalloc "
               "and keeps for reuse (2 MiB for tensors up to 1 MiB, 20 MiB for those up to 10 MiB, larger ones rounded "
               "up to 2 MiB), so memory in use compares with torch.cuda.memory_reserved() and max_memory_reserved(), "
               "not memory_allocated(). PyTorch Reserved Peak counts its segments only (known from the allocator's "
               "state saved at exit), Outside PyTorch at Peak what other libraries and CUDA itself held then; "
               "PyTorch Tensors Peak (the bytes tensors asked for, from the allocator's own events) needs gpuscope "
               "trace --pytorch=memory");

  PeakCalls peak_call(db);
  const Context c{gpus, torch, t0, peak_call};
  add_device_rows(r, db, m, c);
  add_torch_notes(r, m, c);
  if (python && torch.empty() &&
      db.query_int("SELECT COUNT(*) FROM meta WHERE key = 'cuda_memory_usage' AND value = '1'").value_or(0) > 0)
    r.add_note(NoteLevel::kInfo,
               "no PyTorch allocator state in this trace (torch_memory_stats): the Python processes did not import "
               "torch, or ended with os._exit() or a signal before gpuscope's hooks could save it; the PyTorch "
               "columns stay empty");
  add_scope_rows(r, db, m, c);
  add_left_out_notes(r, db);
  return r;
}

}  // namespace gpuscope::analyze
