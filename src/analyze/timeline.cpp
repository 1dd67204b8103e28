#include "analyze/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "analyze/gpu_metrics_data.hpp"
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

// Columns shared by kernels, memcpys, memsets, selected first in that order.
constexpr const char* kGpuBaseColumns =
    "g.pid, g.device_id, g.context_id, g.stream_id, g.correlation_id, g.start_ns, g.end_ns, "
    "g.correlation_id <> 0 AND EXISTS (SELECT 1 FROM api_calls a WHERE a.pid = g.pid AND "
    "a.correlation_id = g.correlation_id)";
constexpr int kGpuBaseCount = 8;

void read_gpu_base(const Statement& st, const detail::GpuIndexMap& gpus, GpuEventBase& e) {
  e.pid = int_or(st, 0);
  e.device_id = int_or(st, 1);
  e.gpu_index = gpus.index(e.pid, e.device_id);
  e.context_id = int_or(st, 2);
  e.stream_id = int_or(st, 3);
  e.correlation_id = int_or(st, 4);
  e.start_ns = int_or(st, 5);
  e.end_ns = int_or(st, 6, e.start_ns);
  e.launch_traced = int_or(st, 7) != 0;
}

// The event tables, each read ORDER BY start_ns, id (id breaks ties: the order is the
// same on every run; api_calls, kernels and nvtx_events walk their start_ns index).
constexpr const char* kEventTables[] = {"api_calls", "nvtx_events", "syncs", "kernels", "memcpys", "memsets"};

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
  TimelineTracks t;
  std::set<std::int64_t> pids;
  for (const auto& p : header.processes) pids.insert(p.pid);
  {
    std::set<std::pair<std::int64_t, std::int64_t>> threads;
    Statement st = m_db.prepare(
        "SELECT COALESCE(pid, 0), COALESCE(tid, 0) FROM api_calls UNION "
        "SELECT COALESCE(pid, 0), COALESCE(tid, 0) FROM nvtx_events UNION "
        "SELECT COALESCE(pid, 0), COALESCE(tid, pid, 0) FROM syncs");
    while (st.step()) threads.insert({st.column_int(0), st.column_int(1)});
    for (const auto& [pid, tid] : threads) pids.insert(pid);
    t.cpu_threads.assign(threads.begin(), threads.end());
  }
  {
    std::set<TimelineStream> streams;
    Statement st = m_db.prepare(
        "SELECT COALESCE(pid, 0), COALESCE(device_id, 0), COALESCE(stream_id, 0) FROM kernels UNION "
        "SELECT COALESCE(pid, 0), COALESCE(device_id, 0), COALESCE(stream_id, 0) FROM memcpys UNION "
        "SELECT COALESCE(pid, 0), COALESCE(device_id, 0), COALESCE(stream_id, 0) FROM memsets");
    while (st.step()) {
      const std::int64_t pid = st.column_int(0);
      streams.insert({m_gpus.index(pid, st.column_int(1)), pid, st.column_int(2)});
      pids.insert(pid);
    }
    t.gpu_streams.assign(streams.begin(), streams.end());
  }
  t.pids.assign(pids.begin(), pids.end());
  {
    // NCCL lanes: kernels counted per (pid, device, name), each name parsed once.
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> lanes;
    Statement st = m_db.prepare(
        "SELECT k.pid, k.device_id, s.value, COUNT(*) FROM kernels k JOIN strings s ON s.id = k.name_id "
        "GROUP BY k.pid, k.device_id, k.name_id");
    while (st.step()) {
      if (!parse_nccl_kernel(st.column_text(2))) continue;
      const std::int64_t pid = int_or(st, 0);
      lanes[{pid, m_gpus.index(pid, int_or(st, 1))}] += st.column_int(3);
    }
    for (const auto& [lane, n] : lanes) t.nccl_lanes.push_back({lane.first, lane.second, n});
  }

  // end_ns: as visited, an event ends at end_ns, else at its start (NVTX marks, unclosed
  // ranges, records without an end).
  std::int64_t end = header.base_ns;
  for (const auto& p : header.processes)
    if (p.end_ns) end = std::max(end, *p.end_ns);
  for (const char* table : kEventTables) {
    if (auto e = m_db.query_int(std::string("SELECT MAX(COALESCE(end_ns, start_ns, 0)) FROM ") + table))
      end = std::max(end, *e);
  }
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
  Statement st = m_db.prepare(
      "SELECT a.pid, a.tid, a.domain, COALESCE(s.value, ''), a.cbid, a.start_ns, a.end_ns, "
      "a.correlation_id, a.return_value, "
      "a.correlation_id <> 0 AND "
      "(EXISTS (SELECT 1 FROM kernels k WHERE k.pid = a.pid AND k.correlation_id = a.correlation_id) "
      " OR EXISTS (SELECT 1 FROM memcpys m WHERE m.pid = a.pid AND m.correlation_id = a.correlation_id) "
      " OR (a.pid, a.correlation_id) IN (SELECT pid, correlation_id FROM memsets)) AND "
      "a.id = (SELECT b.id FROM api_calls b WHERE b.pid = a.pid AND b.correlation_id = a.correlation_id "
      "        ORDER BY b.start_ns, b.id LIMIT 1) "
      "FROM api_calls a LEFT JOIN strings s ON s.id = a.name_id ORDER BY a.start_ns, a.id");
  while (st.step()) {
    ApiCallEvent e;
    e.pid = int_or(st, 0);
    e.tid = int_or(st, 1);
    e.is_driver = st.column_text(2) == "driver";
    e.name = st.column_text(3);
    e.cbid = int_or(st, 4);
    e.start_ns = int_or(st, 5);
    e.end_ns = int_or(st, 6, e.start_ns);
    e.correlation_id = int_or(st, 7);
    e.return_value = int_or(st, 8);
    e.launched_traced_gpu_work = int_or(st, 9) != 0;
    visit(e);
  }
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
  while (st.step()) {
    NvtxEvent e;
    e.pid = int_or(st, 0);
    e.tid = int_or(st, 1);
    e.style = st.column_text(2);
    e.text = st.column_text(3);
    e.domain = st.column_text(4);
    e.start_ns = int_or(st, 5);
    e.end_ns = opt_int(st, 6);
    e.pytorch_kind = st.column_text(7);
    if (!st.is_null(8)) e.text = st.column_text(8);  // the operator's name
    e.seq = opt_int(st, 9);
    if (!st.is_null(10)) e.sizes = st.column_text(10);
    visit(e);
  }
}

void TraceTimeline::syncs(const Visitor<SyncEvent>& visit) {
  Statement st = m_db.prepare(
      "SELECT pid, tid, COALESCE(sync_type, 'unknown'), context_id, stream_id, event_id, start_ns, "
      "end_ns, correlation_id FROM syncs ORDER BY start_ns, id");
  while (st.step()) {
    SyncEvent e;
    e.pid = int_or(st, 0);
    e.tid = opt_int(st, 1);
    e.sync_type = st.column_text(2);
    e.context_id = int_or(st, 3);
    e.stream_id = opt_int(st, 4);
    e.event_id = opt_int(st, 5);
    e.start_ns = int_or(st, 6);
    e.end_ns = int_or(st, 7, e.start_ns);
    e.correlation_id = int_or(st, 8);
    visit(e);
  }
}

void TraceTimeline::kernels(const Visitor<KernelEvent>& visit) {
  Statement st = m_db.prepare(
      std::string("SELECT ") + kGpuBaseColumns +
      ", (SELECT value FROM strings WHERE id = g.name_id), g.grid_x, g.grid_y, g.grid_z, g.block_x, g.block_y, "
      "g.block_z, g.registers_per_thread, g.static_shared_memory, g.dynamic_shared_memory, g.graph_id "
      "FROM kernels g ORDER BY g.start_ns, g.id");
  constexpr int c = kGpuBaseCount;
  while (st.step()) {
    KernelEvent e;
    read_gpu_base(st, m_gpus, e);
    e.name = st.is_null(c) ? "<unknown kernel>" : st.column_text(c);
    e.grid = {int_or(st, c + 1, 1), int_or(st, c + 2, 1), int_or(st, c + 3, 1)};
    e.block = {int_or(st, c + 4, 1), int_or(st, c + 5, 1), int_or(st, c + 6, 1)};
    e.registers_per_thread = int_or(st, c + 7);
    e.static_shared_memory = int_or(st, c + 8);
    e.dynamic_shared_memory = int_or(st, c + 9);
    e.graph_id = opt_int(st, c + 10);
    visit(e);
  }
}

void TraceTimeline::memcpys(const Visitor<MemcpyEvent>& visit) {
  Statement st = m_db.prepare(std::string("SELECT ") + kGpuBaseColumns +
                              ", g.bytes, COALESCE(g.copy_kind, 'unknown'), COALESCE(g.src_kind, 'unknown'), "
                              "COALESCE(g.dst_kind, 'unknown'), g.is_async FROM memcpys g ORDER BY g.start_ns, g.id");
  constexpr int c = kGpuBaseCount;
  while (st.step()) {
    MemcpyEvent e;
    read_gpu_base(st, m_gpus, e);
    e.bytes = int_or(st, c);
    e.copy_kind = st.column_text(c + 1);
    e.src_kind = st.column_text(c + 2);
    e.dst_kind = st.column_text(c + 3);
    e.is_async = int_or(st, c + 4) != 0;
    visit(e);
  }
}

void TraceTimeline::memsets(const Visitor<MemsetEvent>& visit) {
  Statement st = m_db.prepare(std::string("SELECT ") + kGpuBaseColumns +
                              ", g.bytes, g.value, COALESCE(g.memory_kind, 'unknown') FROM memsets g "
                              "ORDER BY g.start_ns, g.id");
  constexpr int c = kGpuBaseCount;
  while (st.step()) {
    MemsetEvent e;
    read_gpu_base(st, m_gpus, e);
    e.bytes = int_or(st, c);
    e.value = int_or(st, c + 1);
    e.memory_kind = st.column_text(c + 2);
    visit(e);
  }
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
