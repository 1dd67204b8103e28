#include "analyze/timeline.hpp"

#include <algorithm>
#include <limits>

#include "analyze/gpu_index.hpp"
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

// Columns shared by kernels, memcpys, memsets, selected first as k.* in that order.
constexpr const char* kGpuBaseColumns =
    "pid, device_id, context_id, stream_id, correlation_id, start_ns, end_ns";

void read_gpu_base(const Statement& st, const detail::GpuIndexMap& gpus, GpuEventBase& e) {
  e.pid = int_or(st, 0);
  e.device_id = int_or(st, 1);
  e.gpu_index = gpus.index(e.pid, e.device_id);
  e.context_id = int_or(st, 2);
  e.stream_id = int_or(st, 3);
  e.correlation_id = int_or(st, 4);
  e.start_ns = int_or(st, 5);
  e.end_ns = int_or(st, 6, e.start_ns);
}

}  // namespace

Timeline load_timeline(store::Database& db) {
  Timeline tl;
  const detail::GpuIndexMap gpus = detail::GpuIndexMap::load(db);

  {
    Statement st = db.prepare(
        "SELECT pid, COALESCE(exe, ''), COALESCE(cmdline, ''), start_ns, end_ns, "
        "COALESCE(ended_cleanly, 1), rank FROM processes ORDER BY pid");
    while (st.step()) {
      TimelineProcess p;
      p.pid = st.column_int(0);
      p.cmdline = st.column_text(2);
      p.name = base_name(st.column_text(1), p.cmdline);
      p.start_ns = opt_int(st, 3);
      p.end_ns = opt_int(st, 4);
      p.ended_cleanly = st.column_int(5) != 0;
      p.rank = opt_int(st, 6);
      tl.processes.push_back(std::move(p));
    }
  }
  {
    Statement st = db.prepare("SELECT pid, tid, COALESCE(name, '') FROM threads ORDER BY pid, tid");
    while (st.step()) tl.threads.push_back({st.column_int(0), st.column_int(1), st.column_text(2)});
  }
  {
    Statement st = db.prepare(
        "SELECT pid, device_id, COALESCE(name, ''), COALESCE(uuid, ''), cc_major, cc_minor, "
        "sm_count, global_memory_bytes, max_threads_per_block, max_warps_per_sm, "
        "max_registers_per_sm, max_registers_per_block, max_shared_memory_per_sm, "
        "max_shared_memory_per_block FROM devices ORDER BY pid, device_id");
    while (st.step()) {
      TimelineDevice d;
      d.pid = st.column_int(0);
      d.device_id = st.column_int(1);
      d.gpu_index = gpus.index(d.pid, d.device_id);
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
      tl.devices.push_back(std::move(d));
    }
    std::stable_sort(tl.devices.begin(), tl.devices.end(),
                     [](const TimelineDevice& a, const TimelineDevice& b) { return a.gpu_index < b.gpu_index; });
  }
  {
    Statement st = db.prepare(
        "SELECT a.pid, a.tid, a.domain, COALESCE(s.value, ''), a.cbid, a.start_ns, a.end_ns, "
        "a.correlation_id, a.return_value FROM api_calls a LEFT JOIN strings s ON s.id = a.name_id "
        "ORDER BY a.start_ns");
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
      tl.api_calls.push_back(std::move(e));
    }
  }
  {
    Statement st = db.prepare(
        "SELECT e.pid, e.tid, COALESCE(e.style, ''), COALESCE(t.value, ''), COALESCE(d.value, ''), "
        "e.start_ns, e.end_ns FROM nvtx_events e LEFT JOIN strings t ON t.id = e.text_id "
        "LEFT JOIN strings d ON d.id = e.domain_id ORDER BY e.start_ns");
    while (st.step()) {
      NvtxEvent e;
      e.pid = int_or(st, 0);
      e.tid = int_or(st, 1);
      e.style = st.column_text(2);
      e.text = st.column_text(3);
      e.domain = st.column_text(4);
      e.start_ns = int_or(st, 5);
      e.end_ns = opt_int(st, 6);
      tl.nvtx.push_back(std::move(e));
    }
  }
  {
    Statement st = db.prepare(
        "SELECT pid, tid, COALESCE(sync_type, 'unknown'), context_id, stream_id, event_id, start_ns, "
        "end_ns, correlation_id FROM syncs ORDER BY start_ns");
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
      tl.syncs.push_back(std::move(e));
    }
  }
  {
    Statement st = db.prepare(
        std::string("SELECT ") + kGpuBaseColumns +
        ", (SELECT value FROM strings WHERE id = name_id), grid_x, grid_y, grid_z, block_x, block_y, "
        "block_z, registers_per_thread, static_shared_memory, dynamic_shared_memory, graph_id "
        "FROM kernels ORDER BY start_ns");
    while (st.step()) {
      KernelEvent e;
      read_gpu_base(st, gpus, e);
      e.name = st.is_null(7) ? "<unknown kernel>" : st.column_text(7);
      e.grid = {int_or(st, 8, 1), int_or(st, 9, 1), int_or(st, 10, 1)};
      e.block = {int_or(st, 11, 1), int_or(st, 12, 1), int_or(st, 13, 1)};
      e.registers_per_thread = int_or(st, 14);
      e.static_shared_memory = int_or(st, 15);
      e.dynamic_shared_memory = int_or(st, 16);
      e.graph_id = opt_int(st, 17);
      tl.kernels.push_back(std::move(e));
    }
  }
  {
    Statement st = db.prepare(std::string("SELECT ") + kGpuBaseColumns +
                              ", bytes, COALESCE(copy_kind, 'unknown'), COALESCE(src_kind, 'unknown'), "
                              "COALESCE(dst_kind, 'unknown'), is_async FROM memcpys ORDER BY start_ns");
    while (st.step()) {
      MemcpyEvent e;
      read_gpu_base(st, gpus, e);
      e.bytes = int_or(st, 7);
      e.copy_kind = st.column_text(8);
      e.src_kind = st.column_text(9);
      e.dst_kind = st.column_text(10);
      e.is_async = int_or(st, 11) != 0;
      tl.memcpys.push_back(std::move(e));
    }
  }
  {
    Statement st = db.prepare(std::string("SELECT ") + kGpuBaseColumns +
                              ", bytes, value, COALESCE(memory_kind, 'unknown') FROM memsets ORDER BY start_ns");
    while (st.step()) {
      MemsetEvent e;
      read_gpu_base(st, gpus, e);
      e.bytes = int_or(st, 7);
      e.value = int_or(st, 8);
      e.memory_kind = st.column_text(9);
      tl.memsets.push_back(std::move(e));
    }
  }

  // base_ns: the earliest timestamp anywhere, so relative times are never negative.
  std::int64_t base = std::numeric_limits<std::int64_t>::max();
  auto consider = [&base](std::int64_t t) { base = std::min(base, t); };
  for (const auto& p : tl.processes)
    if (p.start_ns) consider(*p.start_ns);
  if (auto w = db.query_int("SELECT MIN(start_ns) FROM capture_windows")) consider(*w);
  if (!tl.api_calls.empty()) consider(tl.api_calls.front().start_ns);
  if (!tl.nvtx.empty()) consider(tl.nvtx.front().start_ns);
  if (!tl.syncs.empty()) consider(tl.syncs.front().start_ns);
  if (!tl.kernels.empty()) consider(tl.kernels.front().start_ns);
  if (!tl.memcpys.empty()) consider(tl.memcpys.front().start_ns);
  if (!tl.memsets.empty()) consider(tl.memsets.front().start_ns);
  tl.base_ns = base == std::numeric_limits<std::int64_t>::max() ? 0 : base;
  return tl;
}

}  // namespace gpuscope::analyze
