// Builds one trace database (schema: store/schema.hpp) from the event logs of
// all traced processes (format: core/event_log_format.hpp).
//
// What it does beyond copying records:
//  - one global string table for all processes; kernel names stored mangled,
//    demangled and as base name (store/kernel_names.hpp);
//  - NVTX push/pop matched per (pid, tid, domain) into ranges with depth and
//    parent; start/end matched per (pid, range id), across threads;
//  - allocations matched to their frees per process (store/memory_tracker.hpp), with
//    the device memory in use after each (memory_events.in_use_bytes);
//  - the GPU-metrics sampler's log (`gpuscope trace --gpu-metrics`: no ProcessRecord,
//    GpuMetricsSession and GpuMetricSample records) is read after the process logs into
//    gpu_metrics, gpu_metric_names and gpu_metrics_sessions (store/gpu_metrics_tables.hpp):
//    no processes row; device ids matched by UUID to the traced processes' devices; samples
//    kept when they overlap a capture window (all of them with no window but 'all');
//  - capture windows (CaptureRecords; none = the whole process, reason 'all'):
//    CPU-side events (API calls, NVTX, syncs, overheads) are kept when they
//    start inside a window; GPU work (kernels, memcpys, memsets) and memory
//    events are kept when they start inside a window or were launched by a kept
//    API call (memory in use still counts every allocation since the start);
//  - everything lost or doubtful goes to data_loss (truncated or unreadable
//    logs, collector-reported drops, unmatched NVTX, missing kernel records),
//    each a kind declared in store/data_loss_kinds.hpp.
//
// Errors: a bad log (missing, not a log, other format version) never stops the
// import: it is skipped with an 'unreadable_log' data_loss row and a warning.
// DatabaseError is thrown only when the database cannot be written (or exists
// and overwrite is false), or when logs were given and none of them could be read
// (an empty trace would pass for a run that recorded nothing). The database is built in a hidden
// temporary file beside `db_path` (".NAME.tmp.XXXXXX", store/atomic_file.hpp), fsync'd and
// renamed over `db_path` only when complete: a failed import leaves no half trace, and the
// old trace untouched even with overwrite.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace gpuscope::store {

/// What the launcher knows about the run; lands in meta and processes.
struct ImportOptions {
  std::string command;                                          // the traced command line, as the user typed it
  std::uint32_t launched_pid = 0;                               // pid of the command itself (0 = unknown)
  std::optional<int> exit_status;                               // its exit code, if it exited
  std::optional<int> term_signal;                               // the signal that killed it, if any
  std::string start_time;                                       // ISO 8601, e.g. "2025-06-01T12:00:00Z"
  std::string gpuscope_version;                                 // "" = this build's version
  std::string trace_sources;                                    // comma-separated, e.g. "cuda,nvtx"
  std::string capture_range;                                    // "none", "cudaProfilerApi", "nvtx:NAME", ...
  std::vector<std::pair<std::string, std::string>> extra_meta;  // more meta rows
  bool overwrite = false;                                       // replace an existing db_path
  /// The logs' processes still run (gpuscope stop's trace of a session so far): a log not
  /// closed yet, or ending in a record being written, is not data loss.
  bool live_logs = false;
};

/// Rows written per table.
struct TableCounts {
  std::int64_t strings = 0;
  std::int64_t processes = 0;
  std::int64_t threads = 0;
  std::int64_t devices = 0;
  std::int64_t kernels = 0;
  std::int64_t memcpys = 0;
  std::int64_t memsets = 0;
  std::int64_t api_calls = 0;
  std::int64_t memory_events = 0;
  std::int64_t torch_memory_stats = 0;
  std::int64_t torch_memory_segments = 0;
  std::int64_t torch_memory_events = 0;
  std::int64_t requests = 0;
  std::int64_t gpu_metric_names = 0;
  std::int64_t gpu_metrics = 0;
  std::int64_t gpu_metrics_sessions = 0;
  std::int64_t syncs = 0;
  std::int64_t nvtx_events = 0;
  std::int64_t overheads = 0;
  std::int64_t capture_windows = 0;
  std::int64_t data_loss = 0;
  std::int64_t messages = 0;
  std::int64_t kernel_profiles = 0;
  std::int64_t kernel_metrics = 0;
};

/// One data_loss row, as written.
struct DataLossEntry {
  std::optional<std::uint32_t> pid;  // nullopt: not tied to a process
  std::string what;
  std::uint64_t count = 0;
  std::string severity;  // "info", "warning", "data_loss" (parse_loss_severity)
  std::string detail;
};

struct ImportResult {
  TableCounts rows;
  std::int64_t logs_read = 0;               // logs imported (possibly truncated)
  std::int64_t logs_skipped = 0;            // unreadable logs
  std::vector<std::string> skip_reasons;    // why each was skipped (names the file), in order
  std::int64_t events_outside_windows = 0;  // records clipped by capture windows
  std::vector<std::string> warnings;        // plain-language, one line each
  std::vector<DataLossEntry> data_loss;     // every data_loss row
  std::int64_t data_loss_total = 0;         // data_loss rows with severity 'data_loss'
};

/// What a trace is built from in the log folder `dir`: every event log (*.gslog) and every
/// file of PyTorch's allocator state (torch-memory-PID.json, store/torch_memory_tables.hpp)
/// and every requests file of bench serve (requests-PID.jsonl, store/request_tables.hpp),
/// sorted by path. Errors: `ec` set (and what was listed so far returned) if `dir` cannot be read.
[[nodiscard]] std::vector<std::string> list_trace_inputs(const std::string& dir, std::error_code& ec);

/// Imports `log_paths` (event logs and torch-memory files, as list_trace_inputs gives) into
/// a new database at `db_path`. See the file comment for semantics and errors.
[[nodiscard]] ImportResult import_logs(const std::vector<std::string>& log_paths, const std::string& db_path,
                                       const ImportOptions& options);

}  // namespace gpuscope::store
