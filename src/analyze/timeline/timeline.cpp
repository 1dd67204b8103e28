#include "analyze/timeline/timeline.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>

#include "analyze/common/python_sites.hpp"
#include "analyze/metrics/gpu_metrics_data.hpp"
#include "analyze/timeline/statement_rows.hpp"
#include "core/memory_usage.hpp"
#include "core/saturating.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using detail::int_or;
using detail::opt_int;
using detail::visit_rows;
using store::Statement;

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

}  // namespace

TraceTimeline::TraceTimeline(store::Database& db) : m_db(db), m_gpus(detail::GpuIndexMap::load(db)) {}

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
      " ELSE 0 END, COALESCE(a.py_stack_id, 0) FROM api_calls a ORDER BY a.start_ns, a.id");
  NameCache names(m_db);
  const PySites sites(m_db);
  std::unordered_map<std::int64_t, std::string> stacks;  // py_stack_id -> its text, made once
  visit_rows<ApiCallEvent>(
      st,
      [&names, &sites, &stacks](const Statement& row, ApiCallEvent& e) {
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
        if (const std::int64_t stack = row.column_int(10); stack != 0 && !sites.empty()) {
          auto [it, added] = stacks.try_emplace(stack);
          if (added) it->second = sites.stack_text(stack);
          e.python_stack = it->second;
        }
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
