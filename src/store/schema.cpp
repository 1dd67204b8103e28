#include "store/schema.hpp"

#include <array>

namespace gpuscope::store {
namespace {

constexpr ColumnDef kMeta[] = {
    {"key", "TEXT PRIMARY KEY", "", "Name of the fact (see the list below)."},
    {"value", "TEXT", "", "Its value, as text."},
};

constexpr ColumnDef kStrings[] = {
    {"id", "INTEGER PRIMARY KEY", "", "String id referenced by *_id columns."},
    {"value", "TEXT NOT NULL", "", "The string (kernel name, API name, NVTX message, ...)."},
};

constexpr ColumnDef kProcesses[] = {
    {"pid", "INTEGER PRIMARY KEY", "", "OS process id of the traced process."},
    {"ppid", "INTEGER", "", "Parent process id."},
    {"host", "TEXT", "", "Host name."},
    {"cmdline", "TEXT", "", "Command line, arguments separated by spaces."},
    {"exe", "TEXT", "", "Executable path (/proc/PID/exe)."},
    {"start_ns", "INTEGER", "ns", "When the collector started in this process."},
    {"end_ns", "INTEGER", "ns", "Last timestamp seen from this process."},
    {"ended_cleanly", "INTEGER", "", "1 if the collector finished its log at exit; 0 if the process crashed or was killed (the log was cut short)."},
    {"exit_status", "INTEGER", "", "Exit code of the process (the launched command only; NULL for others or when killed by a signal)."},
    {"term_signal", "INTEGER", "", "Signal that killed the process (launched command only), else NULL."},
    {"rank", "INTEGER", "", "$RANK of a torchrun/MPI worker, NULL if unset."},
    {"local_rank", "INTEGER", "", "$LOCAL_RANK, NULL if unset."},
    {"cupti_api_version", "INTEGER", "", "cuptiGetVersion() in the process."},
    {"cuda_driver_version", "INTEGER", "", "cuDriverGetVersion() (e.g. 13000)."},
    {"collector_version", "TEXT", "", "gpuscope version of the injected collector."},
    {"log_bytes", "INTEGER", "bytes", "Size of the process's event log."},
};

constexpr ColumnDef kThreads[] = {
    {"pid", "INTEGER", "", "Process id."},
    {"tid", "INTEGER", "", "OS thread id (gettid)."},
    {"name", "TEXT", "", "Thread name from nvtxNameOsThread, else NULL."},
};

constexpr ColumnDef kDevices[] = {
    {"pid", "INTEGER", "", "Process that saw the device (device ids are per process)."},
    {"device_id", "INTEGER", "", "CUDA device ordinal inside that process."},
    {"name", "TEXT", "", "Device name, e.g. 'NVIDIA H100 80GB HBM3'."},
    {"uuid", "TEXT", "", "GPU UUID, 'GPU-xxxxxxxx-xxxx-...'."},
    {"cc_major", "INTEGER", "", "Compute capability, major."},
    {"cc_minor", "INTEGER", "", "Compute capability, minor."},
    {"sm_count", "INTEGER", "", "Number of streaming multiprocessors (SMs)."},
    {"global_memory_bytes", "INTEGER", "bytes", "Device memory size."},
    {"memory_bandwidth_bytes_per_s", "INTEGER", "bytes/s", "Theoretical DRAM bandwidth reported by CUPTI."},
    {"l2_cache_bytes", "INTEGER", "bytes", "L2 cache size."},
    {"core_clock_khz", "INTEGER", "kHz", "SM clock rate reported by CUPTI."},
    {"memory_clock_khz", "INTEGER", "kHz", "Memory clock rate (cuDeviceGetAttribute), 0 if unknown."},
    {"memory_bus_width_bits", "INTEGER", "bits", "Memory bus width, 0 if unknown."},
    {"max_threads_per_block", "INTEGER", "", "Limit on threads per block."},
    {"max_warps_per_sm", "INTEGER", "", "Resident warps per SM (occupancy limit)."},
    {"max_blocks_per_sm", "INTEGER", "", "Resident blocks per SM (occupancy limit)."},
    {"max_registers_per_sm", "INTEGER", "", "32-bit registers per SM."},
    {"max_registers_per_block", "INTEGER", "", "32-bit registers per block."},
    {"max_shared_memory_per_sm", "INTEGER", "bytes", "Shared memory per SM."},
    {"max_shared_memory_per_block", "INTEGER", "bytes", "Shared memory per block (opt-in maximum)."},
    {"num_memcpy_engines", "INTEGER", "", "Copy engines."},
    {"ecc_enabled", "INTEGER", "", "1 if ECC is on."},
};

constexpr ColumnDef kKernels[] = {
    {"id", "INTEGER PRIMARY KEY", "", "Row id."},
    {"pid", "INTEGER", "", "Process id."},
    {"device_id", "INTEGER", "", "CUDA device ordinal."},
    {"context_id", "INTEGER", "", "CUDA context id."},
    {"stream_id", "INTEGER", "", "CUDA stream id (CUPTI's)."},
    {"correlation_id", "INTEGER", "", "Matches api_calls.correlation_id of the launch (per process)."},
    {"start_ns", "INTEGER", "ns", "Kernel start on the GPU."},
    {"end_ns", "INTEGER", "ns", "Kernel end on the GPU."},
    {"name_id", "INTEGER", "", "strings.id of the demangled name."},
    {"short_name_id", "INTEGER", "", "strings.id of the base name (no namespace, template or parameters), as nsys --base."},
    {"mangled_name_id", "INTEGER", "", "strings.id of the mangled name as CUPTI reports it."},
    {"grid_x", "INTEGER", "", "Grid size in blocks, x."},
    {"grid_y", "INTEGER", "", "Grid size in blocks, y."},
    {"grid_z", "INTEGER", "", "Grid size in blocks, z."},
    {"block_x", "INTEGER", "", "Block size in threads, x."},
    {"block_y", "INTEGER", "", "Block size in threads, y."},
    {"block_z", "INTEGER", "", "Block size in threads, z."},
    {"cluster_x", "INTEGER", "", "Thread-block cluster size, x (0 = no cluster)."},
    {"cluster_y", "INTEGER", "", "Cluster size, y."},
    {"cluster_z", "INTEGER", "", "Cluster size, z."},
    {"registers_per_thread", "INTEGER", "", "Registers per thread."},
    {"static_shared_memory", "INTEGER", "bytes", "Static shared memory per block."},
    {"dynamic_shared_memory", "INTEGER", "bytes", "Dynamic shared memory per block."},
    {"local_memory_per_thread", "INTEGER", "bytes", "Local memory (spills, stack) per thread."},
    {"graph_id", "INTEGER", "", "CUDA graph id when launched from a graph, else NULL."},
    {"graph_node_id", "INTEGER", "", "CUDA graph node id when launched from a graph, else NULL."},
    {"launch_type", "INTEGER", "", "CUpti_ActivityLaunchType (0 regular, 1 cooperative single-device, 2 multi-device)."},
};

constexpr ColumnDef kKernelProfiles[] = {
    {"id", "INTEGER PRIMARY KEY", "", "Row id; kernel_metrics.profile_id refers to it."},
    {"pid", "INTEGER", "", "Process id."},
    {"device_id", "INTEGER", "", "CUDA device ordinal."},
    {"context_id", "INTEGER", "", "CUDA context id (CUPTI's)."},
    {"stream_id", "INTEGER", "", "CUDA stream id (CUPTI's), NULL if unknown."},
    {"correlation_id", "INTEGER", "", "Correlation id of the launch API call: the same key as kernels.(pid, correlation_id) and api_calls.(pid, correlation_id)."},
    {"launch_index", "INTEGER", "", "0-based index of this launch among all kernel launches of the process (profiled or not), as ncu's --launch-skip counts."},
    {"launch_ns", "INTEGER", "ns", "CPU time of the launch call's entry (CLOCK_REALTIME, the trace clock)."},
    {"name_id", "INTEGER", "", "strings.id of the demangled name."},
    {"short_name_id", "INTEGER", "", "strings.id of the base name (no namespace, template or parameters)."},
    {"mangled_name_id", "INTEGER", "", "strings.id of the mangled (symbol) name."},
    {"grid_x", "INTEGER", "", "Grid size in blocks, x."},
    {"grid_y", "INTEGER", "", "Grid size in blocks, y."},
    {"grid_z", "INTEGER", "", "Grid size in blocks, z."},
    {"block_x", "INTEGER", "", "Block size in threads, x."},
    {"block_y", "INTEGER", "", "Block size in threads, y."},
    {"block_z", "INTEGER", "", "Block size in threads, z."},
    {"registers_per_thread", "INTEGER", "", "Registers per thread (cuFuncGetAttribute CU_FUNC_ATTRIBUTE_NUM_REGS)."},
    {"static_shared_memory", "INTEGER", "bytes", "Static shared memory per block (CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)."},
    {"dynamic_shared_memory", "INTEGER", "bytes", "Dynamic shared memory per block (the launch's sharedMemBytes)."},
    {"local_memory_per_thread", "INTEGER", "bytes", "Local memory per thread (CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)."},
    {"metric_set", "TEXT", "", "--set the metrics came from ('quick', 'roofline', 'sol', 'memory', 'occupancy', 'custom')."},
    {"passes", "INTEGER", "", "Replay passes the Range Profiler needed for this launch's metrics (kernel replay)."},
};

constexpr ColumnDef kKernelMetrics[] = {
    {"profile_id", "INTEGER", "", "kernel_profiles.id of the launch."},
    {"metric_id", "INTEGER", "", "strings.id of the metric's Nsight Compute name, e.g. dram__bytes_read.sum."},
    {"value", "REAL", "", "The metric's value for that launch as cuptiProfilerHostEvaluateToGpuValues returns it, in the metric's own unit (bytes, ns, %, instructions, ...: docs/metrics.md)."},
};

constexpr ColumnDef kMemcpys[] = {
    {"id", "INTEGER PRIMARY KEY", "", "Row id."},
    {"pid", "INTEGER", "", "Process id."},
    {"device_id", "INTEGER", "", "CUDA device ordinal."},
    {"context_id", "INTEGER", "", "CUDA context id."},
    {"stream_id", "INTEGER", "", "CUDA stream id."},
    {"correlation_id", "INTEGER", "", "Matches api_calls.correlation_id."},
    {"start_ns", "INTEGER", "ns", "Copy start on the GPU."},
    {"end_ns", "INTEGER", "ns", "Copy end on the GPU."},
    {"bytes", "INTEGER", "bytes", "Bytes copied."},
    {"copy_kind", "TEXT", "", "'HtoD', 'DtoH', 'DtoD', 'HtoH', 'PtoP', 'HtoA', 'AtoH', 'AtoA', 'AtoD', 'DtoA' or 'unknown'."},
    {"src_kind", "TEXT", "", "Source memory: 'pageable', 'pinned', 'device', 'array', 'managed', 'device_static', 'managed_static', 'unknown'."},
    {"dst_kind", "TEXT", "", "Destination memory kind (same values)."},
    {"src_device_id", "INTEGER", "", "Source device (peer copies), else = device_id."},
    {"dst_device_id", "INTEGER", "", "Destination device (peer copies), else = device_id."},
    {"is_async", "INTEGER", "", "1 for an asynchronous copy."},
    {"graph_id", "INTEGER", "", "CUDA graph id, else NULL."},
    {"graph_node_id", "INTEGER", "", "CUDA graph node id, else NULL."},
};

constexpr ColumnDef kMemsets[] = {
    {"id", "INTEGER PRIMARY KEY", "", "Row id."},
    {"pid", "INTEGER", "", "Process id."},
    {"device_id", "INTEGER", "", "CUDA device ordinal."},
    {"context_id", "INTEGER", "", "CUDA context id."},
    {"stream_id", "INTEGER", "", "CUDA stream id."},
    {"correlation_id", "INTEGER", "", "Matches api_calls.correlation_id."},
    {"start_ns", "INTEGER", "ns", "Start on the GPU."},
    {"end_ns", "INTEGER", "ns", "End on the GPU."},
    {"bytes", "INTEGER", "bytes", "Bytes set."},
    {"value", "INTEGER", "", "Value written."},
    {"memory_kind", "TEXT", "", "Memory kind (as memcpys.src_kind)."},
    {"graph_id", "INTEGER", "", "CUDA graph id, else NULL."},
    {"graph_node_id", "INTEGER", "", "CUDA graph node id, else NULL."},
};

constexpr ColumnDef kApiCalls[] = {
    {"id", "INTEGER PRIMARY KEY", "", "Row id."},
    {"pid", "INTEGER", "", "Process id."},
    {"tid", "INTEGER", "", "OS thread id of the caller."},
    {"domain", "TEXT", "", "'runtime' (cuda*) or 'driver' (cu*)."},
    {"cbid", "INTEGER", "", "CUPTI callback id (cupti_runtime_cbid.h / cupti_driver_cbid.h)."},
    {"name_id", "INTEGER", "", "strings.id of the function name, e.g. cudaLaunchKernel."},
    {"start_ns", "INTEGER", "ns", "Call entry on the CPU."},
    {"end_ns", "INTEGER", "ns", "Call return."},
    {"correlation_id", "INTEGER", "", "Links the call to the GPU work it launched (per process)."},
    {"return_value", "INTEGER", "", "cudaError_t or CUresult returned (0 = success)."},
};

constexpr ColumnDef kSyncs[] = {
    {"id", "INTEGER PRIMARY KEY", "", "Row id."},
    {"pid", "INTEGER", "", "Process id."},
    {"tid", "INTEGER", "", "Thread of the API call that waited (from correlation_id), NULL if unknown."},
    {"context_id", "INTEGER", "", "CUDA context id."},
    {"stream_id", "INTEGER", "", "Stream waited on, NULL if n/a."},
    {"event_id", "INTEGER", "", "Event waited on, NULL if n/a."},
    {"sync_type", "TEXT", "", "'event_synchronize', 'stream_wait_event', 'stream_synchronize', 'context_synchronize' or 'unknown'."},
    {"start_ns", "INTEGER", "ns", "Wait start (CPU)."},
    {"end_ns", "INTEGER", "ns", "Wait end."},
    {"correlation_id", "INTEGER", "", "api_calls.correlation_id of the synchronizing call."},
};

constexpr ColumnDef kNvtxEvents[] = {
    {"id", "INTEGER PRIMARY KEY", "", "Row id."},
    {"pid", "INTEGER", "", "Process id."},
    {"tid", "INTEGER", "", "Thread that opened the range or put the mark."},
    {"end_tid", "INTEGER", "", "Thread that closed a start/end range (may differ), else = tid."},
    {"domain_id", "INTEGER", "", "strings.id of the NVTX domain name; NULL = default domain."},
    {"style", "TEXT", "", "'PushPop', 'StartEnd' or 'Mark' (nsys's names)."},
    {"text_id", "INTEGER", "", "strings.id of the message."},
    {"start_ns", "INTEGER", "ns", "Range start or mark time."},
    {"end_ns", "INTEGER", "ns", "Range end; NULL for marks and ranges never closed."},
    {"depth", "INTEGER", "", "Push/pop nesting depth on its thread (0 = outermost); NULL for StartEnd and marks."},
    {"parent_id", "INTEGER", "", "nvtx_events.id of the enclosing push/pop range, NULL at top level."},
    {"color", "INTEGER", "", "ARGB color, NULL if none."},
    {"category", "INTEGER", "", "NVTX category, 0 if none."},
};

constexpr ColumnDef kOverheads[] = {
    {"pid", "INTEGER", "", "Process id."},
    {"overhead_kind", "TEXT", "", "CUPTI overhead kind: 'driver_compiler', 'cupti_buffer_flush', 'cupti_instrumentation', 'cupti_resource', 'runtime_triggered_module_loading', 'lazy_function_loading', 'command_buffer_full', 'activity_buffer_request', 'unknown'."},
    {"object_id", "INTEGER", "", "Thread or device the overhead applies to."},
    {"start_ns", "INTEGER", "ns", "Start."},
    {"end_ns", "INTEGER", "ns", "End."},
};

constexpr ColumnDef kCaptureWindows[] = {
    {"pid", "INTEGER", "", "Process id."},
    {"start_ns", "INTEGER", "ns", "Window start."},
    {"end_ns", "INTEGER", "ns", "Window end (the process end if never stopped)."},
    {"reason", "TEXT", "", "What opened it: 'all' (no capture range: the whole process), 'cudaProfilerStart', 'nvtx:RANGE', 'delay', or 'process_start' (a stop with no start before it: capturing from the start)."},
};

constexpr ColumnDef kDataLoss[] = {
    {"pid", "INTEGER", "", "Process id (NULL for the whole trace)."},
    {"what", "TEXT", "", "'cupti_dropped_records' (and other collector-reported losses), 'truncated_log', 'unreadable_log', 'unknown_log_records', 'unmatched_nvtx_pop', 'unmatched_nvtx_end', 'unclosed_nvtx_range', 'missing_kernel_records'."},
    {"count", "INTEGER", "", "How many records or bytes (see detail)."},
    {"severity", "TEXT", "", "'info', 'warning' or 'data_loss'."},
    {"detail", "TEXT", "", "Plain-language explanation and what to do."},
};

constexpr ColumnDef kMessages[] = {
    {"pid", "INTEGER", "", "Process id."},
    {"ts_ns", "INTEGER", "ns", "When."},
    {"severity", "TEXT", "", "'info', 'warning' or 'error'."},
    {"text", "TEXT", "", "Message from the collector (e.g. another CUPTI client holds the subscription)."},
};

constexpr TableDef kTables[] = {
    {"meta", "Facts about the trace: schema_version, gpuscope_version, command, start_time (ISO 8601), host, capture_range, trace_sources, clock ('CLOCK_REALTIME ns, CUPTI'), duration_ns (first to last event inside the capture windows), process_count, launched_pid, and any extra keys the launcher adds: `gpuscope trace` adds cuda_api_calls ('gpu' or 'all', its --cuda-api), tracer_launch_cost_ns and tracer_api_cost_ns (CPU ns tracing adds to one kernel launch call and to one other recorded API call, calibrated on the machine: cli/tracer_calibration.hpp) and tracer_cost_method (how they were measured, or 'not calibrated: WHY').", "META_DATA_CAPTURE", kMeta},
    {"strings", "String table: every name and message once.", "StringIds", kStrings},
    {"processes", "One row per traced process (the command and its CUDA-using children).", "PROCESSES", kProcesses},
    {"threads", "Threads seen in API calls and NVTX events.", "ThreadNames", kThreads},
    {"devices", "GPUs seen by each process.", "TARGET_INFO_GPU", kDevices},
    {"kernels", "One row per kernel execution (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).", "CUPTI_ACTIVITY_KIND_KERNEL", kKernels},
    {"kernel_profiles", "One row per kernel launch profiled by `gpuscope kernels` (CUPTI Range Profiler, auto range, kernel replay): launch facts.", "", kKernelProfiles},
    {"kernel_metrics", "Hardware-counter values per profiled launch (one row per launch and metric), joined to kernel_profiles by profile_id.", "", kKernelMetrics},
    {"memcpys", "One row per memory copy (CUPTI_ACTIVITY_KIND_MEMCPY, MEMCPY2).", "CUPTI_ACTIVITY_KIND_MEMCPY", kMemcpys},
    {"memsets", "One row per memset (CUPTI_ACTIVITY_KIND_MEMSET).", "CUPTI_ACTIVITY_KIND_MEMSET", kMemsets},
    {"api_calls", "CUDA runtime and driver API calls. With `gpuscope trace --cuda-api=gpu` (the default) only the calls that put work on the GPU, move or allocate memory, or wait (launches, memcpy, memset, synchronize, event record, stream wait, malloc/free, graph launch), timed by gpuscope's own CUPTI callbacks (the outermost call only: a runtime call's nested driver calls are part of it); with --cuda-api=all every call but the polling ones, from CUPTI_ACTIVITY_KIND_RUNTIME and DRIVER records.", "CUPTI_ACTIVITY_KIND_RUNTIME", kApiCalls},
    {"syncs", "CPU waits on the GPU (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION); recorded only with `gpuscope trace --cuda-sync-records` (they cost about 5 us per PyTorch op on H100). The synchronizing API calls are in api_calls either way.", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", kSyncs},
    {"nvtx_events", "NVTX ranges and marks, from C/C++ nvtx3 and torch.cuda.nvtx.", "NVTX_EVENTS", kNvtxEvents},
    {"overheads", "CUPTI's own overhead (CUPTI_ACTIVITY_KIND_OVERHEAD).", "", kOverheads},
    {"capture_windows", "Time windows recorded (--capture-range, --delay, --duration).", "", kCaptureWindows},
    {"data_loss", "Everything known lost or doubtful; shown by every summary.", "", kDataLoss},
    {"messages", "Messages the collector left for the user.", "", kMessages},
};

constexpr ViewDef kViews[] = {
    {"v_kernels", "kernels with names resolved and duration_ns.",
     "SELECT k.*, k.end_ns - k.start_ns AS duration_ns, n.value AS name, s.value AS short_name, "
     "m.value AS mangled_name FROM kernels k LEFT JOIN strings n ON n.id = k.name_id "
     "LEFT JOIN strings s ON s.id = k.short_name_id LEFT JOIN strings m ON m.id = k.mangled_name_id"},
    {"v_kernel_metrics", "kernel_metrics with the launch's names and facts and the metric name resolved.",
     "SELECT p.id AS profile_id, p.pid, p.device_id, p.correlation_id, p.launch_index, n.value AS name, "
     "s.value AS short_name, mn.value AS metric, m.value AS value FROM kernel_metrics m "
     "JOIN kernel_profiles p ON p.id = m.profile_id LEFT JOIN strings n ON n.id = p.name_id "
     "LEFT JOIN strings s ON s.id = p.short_name_id LEFT JOIN strings mn ON mn.id = m.metric_id"},
    {"v_api_calls", "api_calls with the name resolved and duration_ns.",
     "SELECT a.*, a.end_ns - a.start_ns AS duration_ns, n.value AS name FROM api_calls a "
     "LEFT JOIN strings n ON n.id = a.name_id"},
    {"v_nvtx", "nvtx_events with text and domain resolved and duration_ns.",
     "SELECT e.*, e.end_ns - e.start_ns AS duration_ns, t.value AS text, d.value AS domain "
     "FROM nvtx_events e LEFT JOIN strings t ON t.id = e.text_id LEFT JOIN strings d ON d.id = e.domain_id"},
};

constexpr std::string_view kIndexes[] = {
    "CREATE INDEX kernels_start ON kernels(start_ns)",
    "CREATE INDEX kernels_corr ON kernels(pid, correlation_id)",
    "CREATE INDEX memcpys_corr ON memcpys(pid, correlation_id)",
    "CREATE INDEX api_calls_corr ON api_calls(pid, correlation_id)",
    "CREATE INDEX api_calls_start ON api_calls(start_ns)",
    "CREATE INDEX nvtx_start ON nvtx_events(start_ns)",
    "CREATE INDEX kernel_profiles_corr ON kernel_profiles(pid, correlation_id)",
    "CREATE INDEX kernel_metrics_profile ON kernel_metrics(profile_id)",
};

}  // namespace

std::span<const TableDef> tables() { return kTables; }
std::span<const ViewDef> views() { return kViews; }
std::span<const std::string_view> indexes() { return kIndexes; }

std::string create_schema_sql() { return create_tables_sql() + create_indexes_sql(); }

std::string create_tables_sql() {
  std::string sql;
  for (const TableDef& t : kTables) {
    sql += "CREATE TABLE ";
    sql += t.name;
    sql += " (";
    bool first = true;
    for (const ColumnDef& c : t.columns) {
      if (!first) sql += ", ";
      first = false;
      sql += c.name;
      sql += ' ';
      sql += c.sql_type;
    }
    sql += ");\n";
  }
  for (const ViewDef& v : kViews) {
    sql += "CREATE VIEW ";
    sql += v.name;
    sql += " AS ";
    sql += v.select_sql;
    sql += ";\n";
  }
  return sql;
}

std::string create_indexes_sql() {
  std::string sql;
  for (std::string_view ix : kIndexes) {
    sql += ix;
    sql += ";\n";
  }
  return sql;
}

std::string schema_markdown() {
  std::string md;
  md += "# gpuscope trace schema (version " + std::to_string(kSchemaVersion) + ")\n\n";
  md += "<!-- Generated by `gpuscope schema` from src/store/schema.cpp; a unit test checks this file. -->\n\n";
  md += "A trace is one SQLite database (`NAME.sqlite`). Open it with `sqlite3 NAME.sqlite`.\n"
        "All timestamps are integers in **ns** on one clock (CUPTI's timestamp, CLOCK_REALTIME on Linux),\n"
        "shared by every process of the trace. Names live once in `strings`; `*_id` columns point there,\n"
        "and the `v_*` views resolve them. A reader checks `meta.schema_version` and refuses another version.\n\n";
  md += "Example: the ten kernels with the most GPU time\n\n```sql\n"
        "SELECT name, COUNT(*) AS calls, SUM(duration_ns) AS total_ns\n"
        "FROM v_kernels GROUP BY name ORDER BY total_ns DESC LIMIT 10;\n```\n\n";
  for (const TableDef& t : kTables) {
    md += "## `" + std::string(t.name) + "`\n\n" + std::string(t.doc) + "\n";
    if (!t.nsys_equivalent.empty())
      md += "Nsight Systems export equivalent: `" + std::string(t.nsys_equivalent) + "`.\n";
    md += "\n| column | type | unit | meaning |\n|---|---|---|---|\n";
    for (const ColumnDef& c : t.columns) {
      md += "| `" + std::string(c.name) + "` | " + std::string(c.sql_type) + " | " +
            std::string(c.unit) + " | " + std::string(c.doc) + " |\n";
    }
    md += "\n";
  }
  md += "## Views\n\n";
  for (const ViewDef& v : kViews) {
    md += "- `" + std::string(v.name) + "`: " + std::string(v.doc) + "\n";
  }
  md += "\n";
  md += "## What a crash loses\n\n"
        "The collector writes each process's events to its event log in batches, one flush about\n"
        "every 200 ms (and whenever an activity buffer fills). If the process crashes or is killed\n"
        "(SIGKILL, OOM killer, a timeout), everything flushed before survives and is imported; what\n"
        "was still in memory -- the last flush period, at most ~200 ms of events -- is lost, and a\n"
        "record being written at that instant may be cut short (it is dropped).\n\n"
        "Such a process has `processes.ended_cleanly = 0`, its `end_ns` is the last timestamp that\n"
        "survived, and `data_loss` has a `truncated_log` row for it (`count` = bytes of the cut\n"
        "record, often 0; severity `data_loss`). NVTX ranges it left open have `end_ns` NULL\n"
        "(`unclosed_nvtx_range`, severity `info`). Every summary shows these rows.\n\n"
        "```sql\nSELECT pid, what, count, severity, detail FROM data_loss;\n```\n";
  return md;
}

}  // namespace gpuscope::store
