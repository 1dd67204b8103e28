#include "analyze/timeline/timeline.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "analyze/metrics/gpu_metrics_data.hpp"
#include "core/memory_usage.hpp"
#include "core/nccl.hpp"
#include "core/saturating.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using store::Statement;

std::int64_t int_or(const Statement& st, int col, std::int64_t fallback = 0) {
  return st.is_null(col) ? fallback : st.column_int(col);
}

std::optional<std::int64_t> opt_int(const Statement& st, int col) {
  if (st.is_null(col)) return std::nullopt;
  return st.column_int(col);
}

std::string base_name(const std::string& exe, const std::string& cmdline) {
  std::string path = exe;
  if (path.empty()) path = cmdline.substr(0, cmdline.find(' '));
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Columns shared by kernels, memcpys, memsets, selected first in that order. A column's
// default for NULL is given by SQL (COALESCE), so each is one sqlite3_column_int64 call.
constexpr const char* kGpuBaseColumns =
    "COALESCE(g.pid, 0), COALESCE(g.device_id, 0), COALESCE(g.context_id, 0), COALESCE(g.stream_id, 0), "
    "COALESCE(g.correlation_id, 0), COALESCE(g.start_ns, 0), COALESCE(g.end_ns, g.start_ns, 0), "
    "g.correlation_id <> 0 AND EXISTS (SELECT 1 FROM api_calls a WHERE a.pid = g.pid AND "
    "a.correlation_id = g.correlation_id)";
constexpr int kGpuBaseCount = 8;

void read_gpu_base(const Statement& st, const detail::GpuIndexMap& gpus, GpuEventBase& e) {
  e.pid = st.column_int(0);
  e.device_id = st.column_int(1);
  e.gpu_index = gpus.index(e.pid, e.device_id);
  e.context_id = st.column_int(2);
  e.stream_id = st.column_int(3);
  e.correlation_id = st.column_int(4);
  e.start_ns = st.column_int(5);
  e.end_ns = st.column_int(6);
  e.launch_traced = st.column_int(7) != 0;  // NULL (a NULL correlation id) reads as 0
}

// The event tables, each read ORDER BY start_ns, id (id breaks ties: the order is the
// same on every run; api_calls, kernels and nvtx_events walk their start_ns index).
constexpr const char* kEventTables[] = {"api_calls", "nvtx_events", "syncs", "kernels", "memcpys", "memsets"};

// strings.value by id, each id read once: a trace has far fewer API and kernel names than
// events. Up to kMaxCached names are kept (memory bounded whatever the trace); past
// that, a name not kept is read again each time it comes.
class NameCache {
 public:
  explicit NameCache(store::Database& db) : m_st(db.prepare("SELECT value FROM strings WHERE id = ?")) {}
  /// The name, or nullptr when no strings row has this id.
  const std::string* find(std::int64_t id) {
    if (const auto it = m_names.find(id); it != m_names.end()) return it->second ? &*it->second : nullptr;
    m_st.reset();
    m_st.bind(1, id);
    std::optional<std::string> value;
    if (m_st.step() && !m_st.is_null(0)) value = m_st.column_text(0);
    if (m_names.size() < kMaxCached) {
      auto& kept = m_names[id] = std::move(value);
      return kept ? &*kept : nullptr;
    }
    m_uncached = std::move(value);
    return m_uncached ? &*m_uncached : nullptr;
  }

 private:
  static constexpr std::size_t kMaxCached = 1 << 16;
  store::Statement m_st;
  std::unordered_map<std::int64_t, std::optional<std::string>> m_names;
  std::optional<std::string> m_uncached;
};

// Visits the rows of `st` as events filled by `read(st, event)`, in the statement's order.
// With read-ahead a second thread steps the statement and fills batches of kBatch events
// while the caller's thread visits the batch before (at most kInFlight batches wait:
// memory stays bounded). The caller's thread calls `visit`, one event at a time, in order,
// as without; a read error is thrown there, and a visitor's exception stops the reading.
template <class Event, class Read>
void visit_rows(Statement& st, Read read, const std::function<void(const Event&)>& visit, bool read_ahead) {
  if (!read_ahead) {
    while (st.step()) {
      Event e;
      read(st, e);
      visit(e);
    }
    return;
  }
  constexpr std::size_t kBatch = 2048, kInFlight = 2;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::vector<Event>> ready;
  bool done = false, stop = false;
  std::exception_ptr error;
  std::thread reader([&] {
    try {
      for (bool more = true; more;) {
        std::vector<Event> batch;
        batch.reserve(kBatch);
        // A statement is never stepped again once done (SQLite would start it over).
        while (batch.size() < kBatch && (more = st.step())) read(st, batch.emplace_back());
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return ready.size() < kInFlight || stop; });
        if (stop) break;
        if (!batch.empty()) ready.push_back(std::move(batch));
        changed.notify_all();
      }
    } catch (...) {
      const std::lock_guard lock(mutex);
      error = std::current_exception();
    }
    const std::lock_guard lock(mutex);
    done = true;
    changed.notify_all();
  });
  try {
    for (;;) {
      std::vector<Event> batch;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return !ready.empty() || done; });
        if (ready.empty()) break;
        batch = std::move(ready.front());
        ready.pop_front();
        changed.notify_all();
      }
      for (const Event& e : batch) visit(e);
    }
  } catch (...) {
    {
      const std::lock_guard lock(mutex);
      stop = true;
      changed.notify_all();
    }
    reader.join();
    throw;
  }
  reader.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

TraceTimeline::TraceTimeline(store::Database& db) : m_db(db), m_gpus(detail::GpuIndexMap::load(db)) {}

TimelineHeader TraceTimeline::header() {
  TimelineHeader h;
  {
    Statement st = m_db.prepare(
        "SELECT pid, COALESCE(exe, ''), COALESCE(cmdline, ''), start_ns, end_ns, "
        "COALESCE(ended_cleanly, 1), rank, COALESCE(host, '') FROM processes ORDER BY pid");
    while (st.step()) {
      TimelineProcess p;
      p.pid = st.column_int(0);
      p.cmdline = st.column_text(2);
      p.name = base_name(st.column_text(1), p.cmdline);
      p.start_ns = opt_int(st, 3);
      p.end_ns = opt_int(st, 4);
      p.ended_cleanly = st.column_int(5) != 0;
      p.rank = opt_int(st, 6);
      p.host = st.column_text(7);
      h.processes.push_back(std::move(p));
    }
  }
  {
    Statement st = m_db.prepare("SELECT pid, tid, COALESCE(name, '') FROM threads ORDER BY pid, tid");
    while (st.step()) h.threads.push_back({st.column_int(0), st.column_int(1), st.column_text(2)});
  }
  {
    Statement st = m_db.prepare(
        "SELECT pid, device_id, COALESCE(name, ''), COALESCE(uuid, ''), cc_major, cc_minor, "
        "sm_count, global_memory_bytes, max_threads_per_block, max_warps_per_sm, "
        "max_registers_per_sm, max_registers_per_block, max_shared_memory_per_sm, "
        "max_shared_memory_per_block FROM devices ORDER BY pid, device_id");
    while (st.step()) {
      TimelineDevice d;
      d.pid = st.column_int(0);
      d.device_id = st.column_int(1);
      d.gpu_index = m_gpus.index(d.pid, d.device_id);
      d.name = st.column_text(2);
      d.uuid = st.column_text(3);
      d.cc_major = int_or(st, 4);
      d.cc_minor = int_or(st, 5);
      d.sm_count = int_or(st, 6);
      d.global_memory_bytes = int_or(st, 7);
      d.max_threads_per_block = int_or(st, 8);
      d.max_warps_per_sm = int_or(st, 9);
      d.max_registers_per_sm = int_or(st, 10);
      d.max_registers_per_block = int_or(st, 11);
      d.max_shared_memory_per_sm = int_or(st, 12);
      d.max_shared_memory_per_block = int_or(st, 13);
      h.devices.push_back(std::move(d));
    }
    std::stable_sort(h.devices.begin(), h.devices.end(),
                     [](const TimelineDevice& a, const TimelineDevice& b) { return a.gpu_index < b.gpu_index; });
  }

  // base_ns: the earliest timestamp anywhere, so relative times are never negative. Each
  // table's first event in reading order (a NULL start reads as 0, as when visited).
  std::int64_t base = std::numeric_limits<std::int64_t>::max();
  auto consider = [&base](std::int64_t t) { base = std::min(base, t); };
  for (const auto& p : h.processes)
    if (p.start_ns) consider(*p.start_ns);
  if (auto w = m_db.query_int("SELECT MIN(start_ns) FROM capture_windows")) consider(*w);
  for (const char* table : kEventTables) {
    Statement st = m_db.prepare(std::string("SELECT start_ns FROM ") + table + " ORDER BY start_ns, id LIMIT 1");
    if (st.step()) consider(int_or(st, 0));
  }
  if (m_db.has_table("memory_events")) {
    if (auto m = m_db.query_int("SELECT MIN(ts_ns) FROM memory_events WHERE in_use_bytes IS NOT NULL")) consider(*m);
  }
  if (const auto starts = detail::sample_starts(m_db, detail::sampled_metrics(m_db, m_gpus))) consider(starts->first);
  h.base_ns = base == std::numeric_limits<std::int64_t>::max() ? 0 : base;
  return h;
}

TimelineTracks TraceTimeline::tracks(const TimelineHeader& header) {
  // One plain scan per event table (no sort, no temporary b-tree): the set of threads and
  // streams, the NCCL kernels' counts and the end of the trace come out of the same pass.
  // The sets hold one entry per thread or stream; a row like the one before it (the common
  // case: a trace is long runs of one thread, four streams round-robin) skips the look-up.
  TimelineTracks t;
  std::set<std::int64_t> pids;
  for (const auto& p : header.processes) pids.insert(p.pid);
  // end_ns: as visited, an event ends at end_ns, else at its start (NVTX marks, unclosed
  // ranges, records without an end).
  std::int64_t end = header.base_ns;
  for (const auto& p : header.processes)
    if (p.end_ns) end = std::max(end, *p.end_ns);
  auto event_end = [](const Statement& st, int end_col, int start_col) {
    return st.is_null(end_col) ? int_or(st, start_col) : st.column_int(end_col);
  };
  {
    std::set<std::pair<std::int64_t, std::int64_t>> threads;
    // (table, the tid column as read: a sync without a thread is on its process's thread)
    for (const auto& [table, tid] : {std::pair<const char*, const char*>{"api_calls", "COALESCE(tid, 0)"},
                                     {"nvtx_events", "COALESCE(tid, 0)"},
                                     {"syncs", "COALESCE(tid, pid, 0)"}}) {
      Statement st = m_db.prepare(std::string("SELECT COALESCE(pid, 0), ") + tid + ", end_ns, start_ns FROM " + table);
      std::optional<std::pair<std::int64_t, std::int64_t>> last;
      while (st.step()) {
        const std::pair<std::int64_t, std::int64_t> thread{st.column_int(0), st.column_int(1)};
        if (thread != last) threads.insert(*(last = thread));
        end = std::max(end, event_end(st, 2, 3));
      }
    }
    for (const auto& [pid, tid] : threads) pids.insert(pid);
    t.cpu_threads.assign(threads.begin(), threads.end());
  }
  {
    // NCCL lanes: kernels counted per (pid, device, name) whose name parse_nccl_kernel
    // recognises. Such a name holds the bytes "nccl": the strings are filtered by SQLite
    // (instr on the bytes), each candidate parsed once, and only those ids counted.
    std::set<std::int64_t> nccl_names;
    {
      Statement st =
          m_db.prepare("SELECT id, value FROM strings WHERE instr(CAST(value AS BLOB), CAST('nccl' AS BLOB)) > 0");
      while (st.step())
        if (parse_nccl_kernel(st.column_text(1))) nccl_names.insert(st.column_int(0));
    }
    std::set<TimelineStream> streams;
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> lanes;
    for (const char* table : {"kernels", "memcpys", "memsets"}) {
      const bool kernels = std::string_view(table) == "kernels";
      Statement st =
          m_db.prepare(std::string("SELECT COALESCE(pid, 0), COALESCE(device_id, 0), COALESCE(stream_id, 0), ") +
                       (kernels ? "name_id" : "NULL") + ", end_ns, start_ns FROM " + table);
      std::optional<std::array<std::int64_t, 3>> last;
      while (st.step()) {
        const std::int64_t pid = st.column_int(0), device = st.column_int(1);
        const std::array<std::int64_t, 3> key{pid, device, st.column_int(2)};
        if (key != last) {
          streams.insert({m_gpus.index(pid, device), pid, key[2]});
          pids.insert(pid);
          last = key;
        }
        end = std::max(end, event_end(st, 4, 5));
        if (!nccl_names.empty() && !st.is_null(3) && nccl_names.contains(st.column_int(3)))
          ++lanes[{pid, m_gpus.index(pid, device)}];
      }
    }
    t.gpu_streams.assign(streams.begin(), streams.end());
    for (const auto& [lane, n] : lanes) t.nccl_lanes.push_back({lane.first, lane.second, n});
  }
  t.pids.assign(pids.begin(), pids.end());

  if (m_db.has_table("memory_events")) {
    if (auto m = m_db.query_int("SELECT MAX(ts_ns) FROM memory_events WHERE in_use_bytes IS NOT NULL"))
      end = std::max(end, *m);
  }
  // A metric's counter point is at its sample's start.
  if (const auto starts = detail::sample_starts(m_db, detail::sampled_metrics(m_db, m_gpus)))
    end = std::max(end, starts->second);
  t.end_ns = end;
  return t;
}

void TraceTimeline::api_calls(const Visitor<ApiCallEvent>& visit) {
  // The flow flag: the earliest call of its (pid, correlation_id) that has GPU work in
  // the trace. memsets has no (pid, correlation_id) index: its pairs are read once (IN).
  // CASE evaluates its branches lazily (AND and OR in a result column evaluate both sides):
  // a call without GPU work costs one index seek per GPU table, one with GPU work stops at
  // the first table that has it and then asks whether an earlier call (start_ns, then id;
  // a NULL start first, as ORDER BY sorts it) shares its correlation: one seek on
  // api_calls_corr, where a correlation id held by a single call is told from the index
  // (b.id <> a.id) without reading the row.
  constexpr const char* kFirstCall =
      " THEN NOT EXISTS (SELECT 1 FROM api_calls b WHERE b.pid = a.pid AND b.correlation_id = a.correlation_id "
      "AND b.id <> a.id AND (b.start_ns < a.start_ns OR (b.start_ns IS a.start_ns AND b.id < a.id) "
      "OR (b.start_ns IS NULL AND a.start_ns IS NOT NULL)))";
  Statement st = m_db.prepare(
      std::string("SELECT COALESCE(a.pid, 0), COALESCE(a.tid, 0), a.domain = 'driver', a.name_id, "
                  "COALESCE(a.cbid, 0), COALESCE(a.start_ns, 0), COALESCE(a.end_ns, a.start_ns, 0), "
                  "COALESCE(a.correlation_id, 0), COALESCE(a.return_value, 0), "
                  "CASE WHEN COALESCE(a.correlation_id, 0) = 0 THEN 0 "
                  "WHEN EXISTS (SELECT 1 FROM kernels k WHERE k.pid = a.pid AND k.correlation_id = a.correlation_id)") +
      kFirstCall +
      " WHEN EXISTS (SELECT 1 FROM memcpys m WHERE m.pid = a.pid AND m.correlation_id = a.correlation_id)" +
      kFirstCall + " WHEN (a.pid, a.correlation_id) IN (SELECT pid, correlation_id FROM memsets)" + kFirstCall +
      " ELSE 0 END FROM api_calls a ORDER BY a.start_ns, a.id");
  NameCache names(m_db);
  visit_rows<ApiCallEvent>(
      st,
      [&names](const Statement& row, ApiCallEvent& e) {
        e.pid = row.column_int(0);
        e.tid = row.column_int(1);
        e.is_driver = row.column_int(2) != 0;  // NULL domain: not the driver's
        if (!row.is_null(3))
          if (const std::string* name = names.find(row.column_int(3))) e.name = *name;
        e.cbid = row.column_int(4);
        e.start_ns = row.column_int(5);
        e.end_ns = row.column_int(6);
        e.correlation_id = row.column_int(7);
        e.return_value = row.column_int(8);
        e.launched_traced_gpu_work = row.column_int(9) != 0;
      },
      visit, m_read_ahead);
}

void TraceTimeline::nvtx(const Visitor<NvtxEvent>& visit) {
  // The PyTorch hooks' ranges (torch_ops, torch_modules; traces of earlier gpuscopes lack
  // the tables) are named as torch.profiler names them: the operator, not the NVTX message.
  const bool torch = m_db.has_table("torch_ops") && m_db.has_table("torch_modules");
  Statement st = m_db.prepare(
      std::string("SELECT e.pid, e.tid, COALESCE(e.style, ''), COALESCE(t.value, ''), COALESCE(d.value, ''), "
                  "e.start_ns, e.end_ns, ") +
      (torch ? "CASE WHEN o.nvtx_id IS NOT NULL THEN 'cpu_op' WHEN m.nvtx_id IS NOT NULL THEN 'python_function' "
               "ELSE '' END, n.value, o.seq, o.sizes "
             : "'', NULL, NULL, NULL ") +
      "FROM nvtx_events e LEFT JOIN strings t ON t.id = e.text_id LEFT JOIN strings d ON d.id = e.domain_id " +
      (torch ? "LEFT JOIN torch_ops o ON o.nvtx_id = e.id LEFT JOIN strings n ON n.id = o.name_id "
               "LEFT JOIN torch_modules m ON m.nvtx_id = e.id "
             : "") +
      "ORDER BY e.start_ns, e.id");
  visit_rows<NvtxEvent>(
      st,
      [](const Statement& row, NvtxEvent& e) {
        e.pid = int_or(row, 0);
        e.tid = int_or(row, 1);
        e.style = row.column_text(2);
        e.text = row.column_text(3);
        e.domain = row.column_text(4);
        e.start_ns = int_or(row, 5);
        e.end_ns = opt_int(row, 6);
        e.pytorch_kind = row.column_text(7);
        if (!row.is_null(8)) e.text = row.column_text(8);  // the operator's name
        e.seq = opt_int(row, 9);
        if (!row.is_null(10)) e.sizes = row.column_text(10);
      },
      visit, m_read_ahead);
}

void TraceTimeline::syncs(const Visitor<SyncEvent>& visit) {
  Statement st = m_db.prepare(
      "SELECT pid, tid, COALESCE(sync_type, 'unknown'), context_id, stream_id, event_id, start_ns, "
      "end_ns, correlation_id FROM syncs ORDER BY start_ns, id");
  visit_rows<SyncEvent>(
      st,
      [](const Statement& row, SyncEvent& e) {
        e.pid = int_or(row, 0);
        e.tid = opt_int(row, 1);
        e.sync_type = row.column_text(2);
        e.context_id = int_or(row, 3);
        e.stream_id = opt_int(row, 4);
        e.event_id = opt_int(row, 5);
        e.start_ns = int_or(row, 6);
        e.end_ns = int_or(row, 7, e.start_ns);
        e.correlation_id = int_or(row, 8);
      },
      visit, m_read_ahead);
}

void TraceTimeline::kernels(const Visitor<KernelEvent>& visit) {
  Statement st =
      m_db.prepare(std::string("SELECT ") + kGpuBaseColumns +
                   ", g.name_id, COALESCE(g.grid_x, 1), COALESCE(g.grid_y, 1), COALESCE(g.grid_z, 1), "
                   "COALESCE(g.block_x, 1), COALESCE(g.block_y, 1), COALESCE(g.block_z, 1), "
                   "COALESCE(g.registers_per_thread, 0), COALESCE(g.static_shared_memory, 0), "
                   "COALESCE(g.dynamic_shared_memory, 0), g.graph_id FROM kernels g ORDER BY g.start_ns, g.id");
  NameCache names(m_db);
  visit_rows<KernelEvent>(
      st,
      [&](const Statement& row, KernelEvent& e) {
        constexpr int c = kGpuBaseCount;
        read_gpu_base(row, m_gpus, e);
        const std::string* name = row.is_null(c) ? nullptr : names.find(row.column_int(c));
        e.name = name != nullptr ? *name : "<unknown kernel>";
        e.grid = {row.column_int(c + 1), row.column_int(c + 2), row.column_int(c + 3)};
        e.block = {row.column_int(c + 4), row.column_int(c + 5), row.column_int(c + 6)};
        e.registers_per_thread = row.column_int(c + 7);
        e.static_shared_memory = row.column_int(c + 8);
        e.dynamic_shared_memory = row.column_int(c + 9);
        e.graph_id = opt_int(row, c + 10);
      },
      visit, m_read_ahead);
}

void TraceTimeline::memcpys(const Visitor<MemcpyEvent>& visit) {
  Statement st = m_db.prepare(std::string("SELECT ") + kGpuBaseColumns +
                              ", g.bytes, COALESCE(g.copy_kind, 'unknown'), COALESCE(g.src_kind, 'unknown'), "
                              "COALESCE(g.dst_kind, 'unknown'), g.is_async FROM memcpys g ORDER BY g.start_ns, g.id");
  constexpr int c = kGpuBaseCount;
  visit_rows<MemcpyEvent>(
      st,
      [this](const Statement& row, MemcpyEvent& e) {
        constexpr int c = kGpuBaseCount;
        read_gpu_base(row, m_gpus, e);
        e.bytes = int_or(row, c);
        e.copy_kind = row.column_text(c + 1);
        e.src_kind = row.column_text(c + 2);
        e.dst_kind = row.column_text(c + 3);
        e.is_async = int_or(row, c + 4) != 0;
      },
      visit, m_read_ahead);
}

void TraceTimeline::memsets(const Visitor<MemsetEvent>& visit) {
  Statement st = m_db.prepare(std::string("SELECT ") + kGpuBaseColumns +
                              ", g.bytes, g.value, COALESCE(g.memory_kind, 'unknown') FROM memsets g "
                              "ORDER BY g.start_ns, g.id");
  constexpr int c = kGpuBaseCount;
  visit_rows<MemsetEvent>(
      st,
      [this](const Statement& row, MemsetEvent& e) {
        constexpr int c = kGpuBaseCount;
        read_gpu_base(row, m_gpus, e);
        e.bytes = int_or(row, c);
        e.value = int_or(row, c + 1);
        e.memory_kind = row.column_text(c + 2);
      },
      visit, m_read_ahead);
}

void TraceTimeline::memory(const Visitor<MemoryCounterEvent>& visit) {
  if (!m_db.has_table("memory_events")) return;  // a trace from before --cuda-memory-usage
  // Rows of memory kinds that count (in_use_bytes set), in time order (memory_events_ts); the
  // GPU's total after each is the sum of its processes' latest levels: held per (GPU, pid,
  // device), never per event.
  Statement st = m_db.prepare(
      "SELECT pid, device_id, ts_ns, in_use_bytes FROM memory_events WHERE in_use_bytes IS NOT NULL "
      "ORDER BY ts_ns, id");
  GpuMemorySum sum;
  while (st.step()) {
    MemoryCounterEvent e;
    const std::int64_t pid = int_or(st, 0), device = int_or(st, 1);
    e.gpu_index = m_gpus.index(pid, device);
    e.ts_ns = int_or(st, 2);
    e.in_use_bytes = sum.update(e.gpu_index, pid, device, int_or(st, 3));
    visit(e);
  }
}

void TraceTimeline::gpu_metric_counters(const std::function<void(const GpuMetricCounterEvent&)>& visit) {
  const detail::SampledMetrics m = detail::sampled_metrics(m_db, m_gpus);
  for (const detail::SampledGpu& g : m.gpus) {
    for (const std::int64_t id : g.metric_ids) {
      const detail::SampledMetric* metric = m.by_id(id);
      if (metric == nullptr) continue;  // a sample of a metric without a name row
      const std::string unit(counter_value(metric->unit, 0, 1).unit);
      std::string label = metric->label;  // "L2 bytes" in GB/s: "L2 GB/s"
      if (metric->unit == "bytes" && label.ends_with(" bytes")) label.resize(label.size() - 6);
      const std::string track = label + (unit.empty() ? "" : " " + unit) + " (device " + std::to_string(g.gpu) + ")";
      // A point where the value changes: a counter holds its value until the next point, so
      // repeats add nothing to the track (idle pipes, steady clocks) but size.
      std::optional<double> last;
      detail::each_sample(m_db, g.device_id, id, [&](const MetricSample& s) {
        const double value = counter_value(metric->unit, s.value, core::sat_sub(s.end_ns, s.start_ns)).value;
        if (!std::isfinite(value) || value == last) return;
        last = value;
        visit({g.gpu, s.start_ns, track, value});
      });
    }
  }
}

void TraceTimeline::request_spans(const std::function<void(const RequestSpanEvent&)>& visit) {
  if (!m_db.has_table("requests")) return;
  Statement st = m_db.prepare(
      "SELECT request, start_ns, first_token_ns, end_ns, prompt_tokens, output_tokens, warmup, new_connection, "
      "COALESCE(error, '') FROM requests ORDER BY start_ns, id");
  while (st.step()) {
    const std::string request = st.column_text(0), error = st.column_text(8);
    visit({.request = request,
           .start_ns = st.column_int(1),
           .first_token_ns = st.is_null(2) ? std::nullopt : std::optional<std::int64_t>(st.column_int(2)),
           .end_ns = st.column_int(3),
           .prompt_tokens = st.column_int(4),
           .output_tokens = st.column_int(5),
           .warmup = st.column_int(6) != 0,
           .new_connection = st.column_int(7) != 0,
           .error = error});
  }
}

Timeline load_timeline(store::Database& db) {
  TraceTimeline source(db);
  Timeline tl;
  static_cast<TimelineHeader&>(tl) = source.header();
  source.api_calls([&tl](const ApiCallEvent& e) { tl.api_calls.push_back(e); });
  source.nvtx([&tl](const NvtxEvent& e) { tl.nvtx.push_back(e); });
  source.syncs([&tl](const SyncEvent& e) { tl.syncs.push_back(e); });
  source.kernels([&tl](const KernelEvent& e) { tl.kernels.push_back(e); });
  source.memcpys([&tl](const MemcpyEvent& e) { tl.memcpys.push_back(e); });
  source.memsets([&tl](const MemsetEvent& e) { tl.memsets.push_back(e); });
  source.memory([&tl](const MemoryCounterEvent& e) { tl.memory.push_back(e); });
  return tl;
}

}  // namespace gpuscope::analyze
