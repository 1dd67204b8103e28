#include "analyze/timeline/timeline.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "analyze/metrics/gpu_metrics_data.hpp"
#include "analyze/timeline/statement_rows.hpp"
#include "core/nccl.hpp"
#include "store/database.hpp"

// TraceTimeline's header() and tracks(): what a reader needs before the first event
// (timeline.hpp); the events themselves are read in timeline.cpp.

namespace gpuscope::analyze {
namespace {

using detail::int_or;
using detail::opt_int;
using store::Statement;

std::string base_name(const std::string& exe, const std::string& cmdline) {
  std::string path = exe;
  if (path.empty()) path = cmdline.substr(0, cmdline.find(' '));
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The event tables, each read ORDER BY start_ns, id (id breaks ties: the order is the
// same on every run; api_calls, kernels and nvtx_events walk their start_ns index).
constexpr const char* kEventTables[] = {"api_calls", "nvtx_events", "syncs", "kernels", "memcpys", "memsets"};

}  // namespace

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

}  // namespace gpuscope::analyze
