#include "store/importer.hpp"
#include "store/pytorch_tables.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "store/atomic_file.hpp"
#include "store/data_loss_kinds.hpp"
#include "store/database.hpp"
#include "store/event_log_reader.hpp"
#include "store/event_tables.hpp"
#include "store/gpu_metrics_tables.hpp"
#include "store/import_state.hpp"
#include "store/log_scan.hpp"
#include "store/request_tables.hpp"
#include "store/schema.hpp"
#include "store/torch_memory_tables.hpp"

// import_logs() runs the pieces, each in its own file:
//   log_scan        pass 1 over a log: time span, API calls by correlation id, capture windows
//   event_tables    pass 2: the event tables, clipped to the windows; NVTX through
//                   nvtx_range_tracker; the log's data_loss rows
//   process_tables  processes, threads, devices, capture_windows, meta
//   gpu_metrics_tables  the GPU-metrics sampler's logs, read after every process log (their
//                   device ids and clipping come from the processes' devices and windows)
//   torch_memory_tables  PyTorch's allocator state (torch-memory-PID.json files among the paths)
//   import_state    what they share: row writers (row_writer.hpp), strings, data_loss
//                   (kinds declared in data_loss_kinds.hpp), the ImportResult
namespace gpuscope::store {
namespace {

using detail::ImportState;

// A GPU-metrics sampler's log, read after the process logs, and its session records.
struct MetricsLog {
  std::string path;
  std::vector<log::GpuMetricsSessionRecord> sessions;
  bool sampler_log = true;  // no ProcessRecord: the launcher's
};

// A log the collector did not close (or a damaged one) may have lost its capture records: the
// collector writes them from its host-event queue, after the activity records of the window
// (a committed cnn log holds them last). `capture_range` (ImportOptions::capture_range) says
// whether the run had windows; if so and none was read, the window is rebuilt from the
// cudaProfilerStart calls the log recorded, or marked unknown (reason 'unknown', a
// capture_window_unknown row, meta.capture_window) instead of passing for a whole-process 'all'.
// Returns the windows' reason override: "" (as read), "recovered" or "unknown".
std::string recover_capture_windows(ImportState& state, std::uint32_t pid, detail::LogScan& scan,
                                    const std::string& capture_range) {
  if (capture_range.empty() || capture_range == "none" || capture_range == "session") return "";
  if (!scan.captures.empty() || scan.max_ts == 0) return "";
  if (capture_range == "cudaProfilerApi" && !scan.profiler_spans.empty()) {
    for (const auto& [start, end] : scan.profiler_spans) {
      scan.captures.push_back({start, true, "cudaProfilerStart"});
      scan.captures.push_back({end, false, "cudaProfilerStop"});
    }
    state.add_data_loss(pid, DataLossKind::kCaptureWindowRecovered, scan.profiler_spans.size(),
                        capture_range + ": its window was rebuilt from the " +
                            std::to_string(scan.profiler_spans.size()) +
                            " cudaProfilerStart call(s) it recorded, each to the end of the last API call "
                            "recorded after it (the capture records were lost with the end of the log)");
    return "recovered";
  }
  state.add_data_loss(pid, DataLossKind::kCaptureWindowUnknown, scan.kernel_records,
                      capture_range +
                          " (its capture records were lost with the end of the log, and nothing read "
                          "places the window): all of its " +
                          std::to_string(scan.kernel_records) +
                          " kernel records were kept, some of which may lie outside the window");
  return "unknown";
}

// Reads one log (two passes) into `state`. A log that cannot be opened is skipped with an
// 'unreadable_log' row. A log with GPU-metrics records is added to `metrics_logs`; without a
// ProcessRecord it is the launcher's sampler log and nothing else of it is read here.
// A capture range that records nothing until opened (options.capture_range "session",
// gpuscope launch --session): a log with no capture edge then holds no window, rather than one
// over the whole process. options.live_logs: see ImportOptions.
void import_log(ImportState& state, const std::string& path, std::vector<MetricsLog>& metrics_logs,
                const ImportOptions& options) {
  const bool starts_closed = options.capture_range == "session";
  const bool live = options.live_logs;
  EventLogReader reader;
  const LogStatus status = reader.open(path);
  if (!status.ok()) {
    ++state.result.logs_skipped;
    state.result.skip_reasons.push_back(status.message);
    state.add_data_loss(std::nullopt, DataLossKind::kUnreadableLog, 1, status.message);
    return;
  }
  ++state.result.logs_read;
  const std::uint32_t pid = reader.pid();

  detail::LogScan scan(reader);
  const LogReadStats stats = reader.read(scan);
  if (scan.has_gpu_metrics()) {
    metrics_logs.push_back({path, std::move(scan.gpu_metrics_sessions), !scan.process});
    if (!scan.process) return;  // no process: its losses are counted when it is read
  }

  std::string window_state;
  if (!live && (!scan.has_end || stats.truncated_bytes > 0 || stats.corrupt_bytes > 0))
    window_state = recover_capture_windows(state, pid, scan, options.capture_range);
  const bool clip = !scan.captures.empty() || starts_closed;
  std::vector<detail::Window> windows = detail::capture_windows(scan.captures, scan.start_ns(), starts_closed);
  if (window_state == "unknown") {
    for (detail::Window& w : windows) w.reason = "unknown";  // the one 'all' window, named for what it is
    state.capture_window_unknown = true;
  } else if (window_state == "recovered") {
    state.capture_window_recovered = true;
  }
  state.processes.add_windows(pid, windows, scan.end_ns());

  detail::EventTables events(state, reader, scan, std::move(windows), clip);
  (void)reader.read(events);
  events.finish(scan.has_end);
  state.result.events_outside_windows += events.clipped();

  if (!state.processes.add_log(pid, scan, reader, stats.file_bytes)) {
    state.result.warnings.push_back("two event logs for process " + std::to_string(pid) +
                                    " (did it exec?): merged into one process");
  }
  if (!live && (!scan.has_end || stats.truncated_bytes > 0)) {
    std::string detail;
    if (stats.truncated_bytes > 0) {
      detail = "; a partly written record (" + std::to_string(stats.truncated_bytes) + " bytes) was dropped";
    }
    state.add_data_loss(pid, DataLossKind::kTruncatedLog, stats.truncated_bytes, detail);
  }
  if (stats.corrupt_bytes > 0) {
    state.add_data_loss(pid, DataLossKind::kCorruptLog, stats.corrupt_bytes,
                        " in " + std::to_string(stats.corrupt_regions) + " place(s), the first at byte " +
                            std::to_string(stats.first_corrupt_offset) + " of " + path + ": at least " +
                            std::to_string(stats.corrupt_regions) + " record(s) lost there; the " +
                            std::to_string(stats.records_after_corruption) + " whole records after it were read");
  }
  if (const std::uint64_t skipped = stats.unknown_records + stats.malformed_records; skipped > 0) {
    state.add_data_loss(pid, DataLossKind::kUnknownLogRecords, skipped);
  }
}

// After the process logs: the GPU-metrics sampler's logs (they need the processes' devices
// and capture windows). A log that can no longer be opened is skipped like any other.
void import_metrics_logs(ImportState& state, const std::vector<MetricsLog>& logs) {
  if (logs.empty()) return;
  std::vector<log::GpuMetricsSessionRecord> sessions;
  for (const MetricsLog& l : logs) sessions.insert(sessions.end(), l.sessions.begin(), l.sessions.end());
  detail::GpuMetricsTables tables(state, sessions);
  for (const MetricsLog& l : logs) {
    EventLogReader reader;
    const LogStatus status = reader.open(l.path);
    if (!status.ok()) {  // gone since its first pass
      if (l.sampler_log) {
        --state.result.logs_read;
        ++state.result.logs_skipped;
        state.result.skip_reasons.push_back(status.message);
      }
      state.add_data_loss(std::nullopt, DataLossKind::kUnreadableLog, 1, status.message);
      continue;
    }
    tables.import_log(reader, l.sampler_log);
  }
}

// After the last log: the per-process tables, data_loss, meta, then the indexes.
void finish(ImportState& state, Database& db, const ImportOptions& opts) {
  state.processes.write(db, opts, state.result.rows);
  state.write_data_loss();
  ImportOptions with_meta = opts;
  if (state.capture_window_unknown || state.capture_window_recovered) {
    // meta.capture_window: only when a log lost its capture records (recover_capture_windows).
    with_meta.extra_meta.emplace_back("capture_window", state.capture_window_unknown ? "unknown" : "recovered");
  }
  // The PyTorch observer's own cost, beside the launch cost the launcher measured.
  with_meta.extra_meta.insert(with_meta.extra_meta.end(), state.torch_cost_meta.begin(), state.torch_cost_meta.end());
  state.processes.write_meta(db, with_meta, state.duration_ns());
  db.exec(create_indexes_sql());
  write_pytorch_tables(state, db);  // reads the NVTX, kernel and API tables just indexed
  // A profiled launch whose facts the launch call did not give (a runtime launch has no
  // CUfunction to ask for registers) takes them from its kernel activity record.
  if (state.result.rows.kernel_profiles > 0 && state.result.rows.kernels > 0) {
    db.exec(
        "UPDATE kernel_profiles AS p SET "
        "registers_per_thread = COALESCE(p.registers_per_thread, k.registers_per_thread), "
        "static_shared_memory = COALESCE(p.static_shared_memory, k.static_shared_memory), "
        "local_memory_per_thread = COALESCE(p.local_memory_per_thread, k.local_memory_per_thread), "
        "stream_id = COALESCE(p.stream_id, k.stream_id) "
        "FROM kernels AS k WHERE k.pid = p.pid AND k.correlation_id = p.correlation_id");
  }
}

}  // namespace

std::vector<std::string> list_trace_inputs(const std::string& dir, std::error_code& ec) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".gslog" || detail::is_torch_memory_file(name) || detail::is_requests_file(name))
      out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

ImportResult import_logs(const std::vector<std::string>& log_paths, const std::string& db_path,
                         const ImportOptions& options) {
  // Built in a hidden temporary file beside db_path (store/atomic_file.hpp), renamed over it
  // only when complete: a failed or interrupted import leaves the old trace as it was.
  std::optional<AtomicFile> file;
  try {
    file.emplace(db_path, overwrite_if(options.overwrite));
  } catch (const FileWriteError& e) {
    throw DatabaseError(std::string("cannot write trace: ") + e.what());
  }
  ImportResult result;
  {
    Database db(file->temp_path().string(), Database::Mode::kReadWriteCreate);
    // Written once, start to finish: no journal, no fsync until the end (AtomicFile::commit
    // syncs once). Indexes are built after the bulk insert (create_indexes_sql in
    // finish()); measured slower both with indexes kept up to date and with sorter worker
    // threads.
    db.exec(
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
        "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-262144; PRAGMA temp_store=MEMORY");
    db.exec("BEGIN");
    db.exec(create_tables_sql());
    {
      ImportState state(db);
      std::vector<MetricsLog> metrics_logs;
      std::vector<std::string> torch_memory, requests;
      std::size_t event_logs = 0;
      for (const std::string& path : log_paths) {
        if (detail::is_torch_memory_file(std::filesystem::path(path).filename().string())) {
          torch_memory.push_back(path);
          continue;
        }
        if (detail::is_requests_file(std::filesystem::path(path).filename().string())) {
          requests.push_back(path);
          continue;
        }
        ++event_logs;
        import_log(state, path, metrics_logs, options);
      }
      import_metrics_logs(state, metrics_logs);
      for (const std::string& path : torch_memory) detail::import_torch_memory(state, path);
      for (const std::string& path : requests) detail::import_requests(state, path);
      // Logs were given but none could be read: an empty trace would look like a run that
      // recorded nothing. Fail, and leave any trace already at db_path as it was.
      if (event_logs > 0 && state.result.logs_read == 0) {
        throw DatabaseError(
            "none of the " + std::to_string(event_logs) + " event log(s) could be read, so no trace was written" +
            (state.result.warnings.empty() ? std::string() : " (first: " + state.result.warnings.front() + ")"));
      }
      finish(state, db, options);
      result = std::move(state.result);
    }
    db.exec("COMMIT");
  }  // closed before the rename
  try {
    file->commit();
  } catch (const FileWriteError& e) {
    throw DatabaseError(std::string("cannot write trace: ") + e.what());
  }
  return result;
}

}  // namespace gpuscope::store
