#include "store/process_tables.hpp"

#include <algorithm>

#include "core/version.hpp"
#include "store/database.hpp"
#include "store/event_log_reader.hpp"
#include "store/record_text.hpp"
#include "store/row_writer.hpp"
#include "store/schema.hpp"

namespace gpuscope::store::detail {
namespace {

using rows::i64;

// rank/local_rank: negative = unset.
[[nodiscard]] rows::OptInt rank_or_null(std::int32_t rank) { return rank < 0 ? std::nullopt : rows::OptInt(rank); }

[[nodiscard]] rows::OptInt opt_int(const std::optional<int>& v) { return v ? rows::OptInt(*v) : std::nullopt; }

}  // namespace

bool ProcessTables::add_log(std::uint32_t pid, const LogScan& scan, const EventLogReader& reader,
                            std::uint64_t log_bytes) {
  auto [it, added] = m_processes.try_emplace(pid);
  ProcessInfo& p = it->second;
  if (scan.process && !p.record) {
    p.record = scan.process;
    p.host = reader.string(scan.process->host_string);
    p.cmdline = cmdline_text(reader.string(scan.process->cmdline_string));
    p.exe = reader.string(scan.process->exe_string);
    p.collector_version = reader.string(scan.process->version_string);
  }
  if (scan.rank && !p.rank) p.rank = scan.rank;
  p.start_ns = std::min(p.start_ns, scan.start_ns());
  p.end_ns = std::max(p.end_ns, scan.end_ns());
  p.ended_cleanly = p.ended_cleanly && scan.has_end;
  p.log_bytes += log_bytes;
  return added;
}

void ProcessTables::add_windows(std::uint32_t pid, const std::vector<Window>& windows, std::uint64_t end_ns) {
  for (const Window& w : windows) {
    m_windows.push_back({pid, {w.start, w.end == kOpenEnd ? end_ns : w.end, w.reason}});
  }
}

void ProcessTables::name_thread(std::uint32_t pid, std::uint32_t tid, std::string name) {
  m_threads.emplace(pid, tid);
  m_thread_names[{pid, tid}] = std::move(name);
}

void ProcessTables::add_device(std::uint32_t pid, const log::DeviceRecord& r, std::string name) {
  if (m_devices.emplace(pid, r.device_id).second) m_device_rows.push_back({pid, r, std::move(name)});
}

std::map<std::string, std::set<std::uint32_t>> ProcessTables::device_ids_by_uuid() const {
  std::map<std::string, std::set<std::uint32_t>> ids;
  for (const DeviceRow& d : m_device_rows) ids[uuid_text(d.record.uuid)].insert(d.record.device_id);
  return ids;
}

void ProcessTables::write(Database& db, const ImportOptions& opts, TableCounts& rows) const {
  {
    RowWriter<rows::Process> w(db);
    for (const auto& [pid, p] : m_processes) {
      rows::Process row{
          .pid = i64(pid),
          .host = rows::text_or_null(p.host),
          .cmdline = rows::text_or_null(p.cmdline),
          .exe = rows::text_or_null(p.exe),
          .start_ns = i64(p.start_ns == kOpenEnd ? 0 : p.start_ns),
          .end_ns = i64(p.end_ns),
          .ended_cleanly = p.ended_cleanly ? 1 : 0,
          .collector_version = rows::text_or_null(p.collector_version),
          .log_bytes = i64(p.log_bytes),
      };
      if (p.record) {
        row.ppid = i64(p.record->ppid);
        row.rank = rank_or_null(p.record->rank);
        row.local_rank = rank_or_null(p.record->local_rank);
        // Collectors before RankRecord read $RANK/$LOCAL_RANK only: torchrun's variables.
        if (row.rank) row.launcher = "torchrun";
        row.cupti_api_version = i64(p.record->cupti_api_version);
        row.cuda_driver_version = i64(p.record->cuda_driver_version);
      }
      if (p.rank) {
        row.rank = rank_or_null(p.rank->rank);
        row.local_rank = rank_or_null(p.rank->local_rank);
        row.world_size = rank_or_null(p.rank->world_size);
        row.launcher = rows::text_or_null(rank_launcher_text(p.rank->launcher));
      }
      if (pid == opts.launched_pid) {
        row.exit_status = opt_int(opts.exit_status);
        row.term_signal = opt_int(opts.term_signal);
      }
      w.insert(row);
      ++rows.processes;
    }
  }
  {
    RowWriter<rows::Thread> w(db);
    for (const auto& [pid, tid] : m_threads) {
      const auto name = m_thread_names.find({pid, tid});
      w.insert({.pid = i64(pid),
                .tid = i64(tid),
                .name = name == m_thread_names.end() ? std::nullopt : rows::text_or_null(name->second)});
      ++rows.threads;
    }
  }
  {
    RowWriter<rows::Device> w(db);
    for (const DeviceRow& d : m_device_rows) {
      const log::DeviceRecord& r = d.record;
      const std::string uuid = uuid_text(r.uuid);
      w.insert({
          .pid = i64(d.pid),
          .device_id = i64(r.device_id),
          .name = rows::text_or_null(d.name),
          .uuid = rows::text_or_null(uuid),
          .cc_major = i64(r.cc_major),
          .cc_minor = i64(r.cc_minor),
          .sm_count = i64(r.sm_count),
          .global_memory_bytes = i64(r.global_memory_bytes),
          .memory_bandwidth_bytes_per_s = i64(r.global_memory_bandwidth_kbps * 1000),  // KB/s
          .l2_cache_bytes = i64(r.l2_cache_bytes),
          .core_clock_khz = i64(r.core_clock_khz),
          .memory_clock_khz = i64(r.memory_clock_khz),
          .memory_bus_width_bits = i64(r.memory_bus_width_bits),
          .max_threads_per_block = i64(r.max_threads_per_block),
          .max_warps_per_sm = i64(r.max_warps_per_sm),
          .max_blocks_per_sm = i64(r.max_blocks_per_sm),
          .max_registers_per_sm = i64(r.max_registers_per_sm),
          .max_registers_per_block = i64(r.max_registers_per_block),
          .max_shared_memory_per_sm = i64(r.max_shared_memory_per_sm),
          .max_shared_memory_per_block = i64(r.max_shared_memory_per_block),
          .num_memcpy_engines = i64(r.num_memcpy_engines),
          .ecc_enabled = i64(r.ecc_enabled),
      });
      ++rows.devices;
    }
  }
  {
    RowWriter<rows::CaptureWindow> w(db);
    for (const auto& [pid, win] : m_windows) {
      w.insert({.pid = i64(pid), .start_ns = i64(win.start), .end_ns = i64(win.end), .reason = win.reason});
      ++rows.capture_windows;
    }
  }
}

void ProcessTables::write_meta(Database& db, const ImportOptions& opts, std::uint64_t duration_ns) const {
  std::string host;
  if (const auto it = m_processes.find(opts.launched_pid); it != m_processes.end()) {
    host = it->second.host;
  }
  for (const auto& [pid, p] : m_processes) {
    if (host.empty()) host = p.host;
  }
  RowWriter<rows::Meta> w(db, Conflict::kIgnore);
  auto put = [&](std::string_view key, std::string_view value) { w.insert({.key = key, .value = value}); };
  put("schema_version", std::to_string(kSchemaVersion));
  put("gpuscope_version", opts.gpuscope_version.empty() ? std::string(kVersion) : opts.gpuscope_version);
  put("command", opts.command);
  put("start_time", opts.start_time);
  put("host", host);
  put("capture_range", opts.capture_range.empty() ? "none" : opts.capture_range);
  put("trace_sources", opts.trace_sources);
  put("clock", "CLOCK_REALTIME ns, CUPTI");
  put("duration_ns", std::to_string(duration_ns));
  put("process_count", std::to_string(m_processes.size()));
  put("launched_pid", std::to_string(opts.launched_pid));
  for (const auto& [key, value] : opts.extra_meta) put(key, value);
}

}  // namespace gpuscope::store::detail
