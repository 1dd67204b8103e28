// The per-process tables of a trace: processes, threads, devices, capture_windows and
// meta. Facts are gathered while the logs are read (several logs of one pid, after an
// exec, merge into one process) and written once at the end, when they are complete.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/event_log_format.hpp"
#include "store/importer.hpp"
#include "store/log_scan.hpp"

namespace gpuscope::store {
class Database;
class EventLogReader;
}  // namespace gpuscope::store

namespace gpuscope::store::detail {

class ProcessTables {
 public:
  /// Merges one log's process facts (its first pass and its size). Returns false when
  /// the pid already had a log (an exec): the caller warns.
  bool add_log(std::uint32_t pid, const LogScan& scan, const EventLogReader& reader, std::uint64_t log_bytes);
  /// The capture windows of one log; an open end becomes `end_ns` (the process end).
  void add_windows(std::uint32_t pid, const std::vector<Window>& windows, std::uint64_t end_ns);
  void add_thread(std::uint32_t pid, std::uint32_t tid) { m_threads.emplace(pid, tid); }
  void name_thread(std::uint32_t pid, std::uint32_t tid, std::string name);
  /// The first record of each (pid, device) is kept.
  void add_device(std::uint32_t pid, const log::DeviceRecord& r, std::string name);

  /// Every capture window so far (pid, window with its end resolved).
  [[nodiscard]] const std::vector<std::pair<std::uint32_t, Window>>& windows() const { return m_windows; }
  /// devices.device_id of every (pid, device) seen, by devices.uuid (uuid_text).
  [[nodiscard]] std::map<std::string, std::set<std::uint32_t>> device_ids_by_uuid() const;

  /// Writes processes, threads, devices and capture_windows (in that order), counting rows.
  void write(Database& db, const ImportOptions& opts, TableCounts& rows) const;
  /// Writes meta: the fixed keys, then opts.extra_meta (a repeated key keeps its first value).
  void write_meta(Database& db, const ImportOptions& opts, std::uint64_t duration_ns) const;

 private:
  struct ProcessInfo {
    std::optional<log::ProcessRecord> record;
    std::optional<log::RankRecord> rank;  // none from collectors older than RankRecord
    std::string host, cmdline, exe, collector_version;
    std::uint64_t start_ns = kOpenEnd;
    std::uint64_t end_ns = 0;
    bool ended_cleanly = true;
    std::uint64_t log_bytes = 0;
  };
  struct DeviceRow {
    std::uint32_t pid;
    log::DeviceRecord record;
    std::string name;
  };

  std::map<std::uint32_t, ProcessInfo> m_processes;
  std::set<std::pair<std::uint32_t, std::uint32_t>> m_threads;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> m_thread_names;
  std::set<std::pair<std::uint32_t, std::uint32_t>> m_devices;
  std::vector<DeviceRow> m_device_rows;
  std::vector<std::pair<std::uint32_t, Window>> m_windows;  // end already resolved
};

}  // namespace gpuscope::store::detail
