#include "store/schema.hpp"

#include <array>

#include "store/schema_columns.hpp"

namespace gpuscope::store {
namespace {

// One ColumnDef per X(...) of store/schema_columns.hpp; the C++ type is the row writer's.
#define GPUSCOPE_COLUMN_DEF(name, type, sql_type, unit, doc) ColumnDef{#name, sql_type, unit, doc},

constexpr ColumnDef kMeta[] = {GPUSCOPE_COLUMNS_META(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kStrings[] = {GPUSCOPE_COLUMNS_STRINGS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kProcesses[] = {GPUSCOPE_COLUMNS_PROCESSES(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kThreads[] = {GPUSCOPE_COLUMNS_THREADS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kDevices[] = {GPUSCOPE_COLUMNS_DEVICES(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kKernels[] = {GPUSCOPE_COLUMNS_KERNELS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kKernelProfiles[] = {GPUSCOPE_COLUMNS_KERNEL_PROFILES(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kKernelMetrics[] = {GPUSCOPE_COLUMNS_KERNEL_METRICS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kMemcpys[] = {GPUSCOPE_COLUMNS_MEMCPYS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kMemsets[] = {GPUSCOPE_COLUMNS_MEMSETS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kMemoryEvents[] = {GPUSCOPE_COLUMNS_MEMORY_EVENTS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kGpuMetricNames[] = {GPUSCOPE_COLUMNS_GPU_METRIC_NAMES(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kGpuMetrics[] = {GPUSCOPE_COLUMNS_GPU_METRICS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kGpuMetricsSessions[] = {GPUSCOPE_COLUMNS_GPU_METRICS_SESSIONS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kApiCalls[] = {GPUSCOPE_COLUMNS_API_CALLS(GPUSCOPE_COLUMN_DEF)};
constexpr ColumnDef kPyFrames[] = {GPUSCOPE_COLUMNS_PY_FRAMES(GPUSCOPE_COLUMN_DEF)};
constexpr ColumnDef kPyStacks[] = {GPUSCOPE_COLUMNS_PY_STACKS(GPUSCOPE_COLUMN_DEF)};
constexpr ColumnDef kPySamples[] = {GPUSCOPE_COLUMNS_PY_SAMPLES(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kSyncs[] = {GPUSCOPE_COLUMNS_SYNCS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kNvtxEvents[] = {GPUSCOPE_COLUMNS_NVTX_EVENTS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kTorchOps[] = {GPUSCOPE_COLUMNS_TORCH_OPS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kTorchModules[] = {GPUSCOPE_COLUMNS_TORCH_MODULES(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kTorchSteps[] = {GPUSCOPE_COLUMNS_TORCH_STEPS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kTorchOpActivities[] = {GPUSCOPE_COLUMNS_TORCH_OP_ACTIVITIES(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kTorchMemoryStats[] = {GPUSCOPE_COLUMNS_TORCH_MEMORY_STATS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kTorchMemorySegments[] = {GPUSCOPE_COLUMNS_TORCH_MEMORY_SEGMENTS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kTorchMemoryEvents[] = {GPUSCOPE_COLUMNS_TORCH_MEMORY_EVENTS(GPUSCOPE_COLUMN_DEF)};
constexpr ColumnDef kRequests[] = {GPUSCOPE_COLUMNS_REQUESTS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kOverheads[] = {GPUSCOPE_COLUMNS_OVERHEADS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kCaptureWindows[] = {GPUSCOPE_COLUMNS_CAPTURE_WINDOWS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kDataLoss[] = {GPUSCOPE_COLUMNS_DATA_LOSS(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kMessages[] = {GPUSCOPE_COLUMNS_MESSAGES(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kMergedTraces[] = {GPUSCOPE_COLUMNS_MERGED_TRACES(GPUSCOPE_COLUMN_DEF)};

constexpr ColumnDef kMergedPids[] = {GPUSCOPE_COLUMNS_MERGED_PIDS(GPUSCOPE_COLUMN_DEF)};

constexpr TableDef kTables[] = {
    {"meta",
     "Facts about the trace: schema_version, gpuscope_version, command, start_time (ISO 8601), host, capture_range, "
     "trace_sources, clock ('CLOCK_REALTIME ns, CUPTI'), duration_ns (first to last event inside the capture windows), "
     "process_count, launched_pid, and any extra keys the launcher adds: `gpuscope trace` adds cuda_api_calls ('gpu' "
     "or 'all', its --cuda-api), cuda_memory_usage ('1' with --cuda-memory-usage), gpu_metrics_rate_hz (the "
     "sampling rate asked with --gpu-metrics), python_sampling_hz (the rate asked with --python-sampling), pytorch "
     "(gpuscope's Python hooks: 'steps,generate' by default, "
     "more with --pytorch, 'none' with --pytorch=none or without NVTX), tracer_launch_cost_ns and "
     "tracer_api_cost_ns (CPU ns tracing adds to one kernel "
     "launch call and to one other recorded API call, calibrated on the machine: cli/tracer_calibration.hpp) and "
     "tracer_cost_method (how they were measured, or 'not calibrated: WHY'). The importer adds, from a log of "
     "gpuscope's PyTorch observer (--pytorch=ops), tracer_torch_op_cost_ns and tracer_torch_module_cost_ns (CPU ns "
     "recording adds to one operator call and to one module call, measured in the process as it exits; absent "
     "when it ended without running its atexit handlers) and tracer_torch_cost_method. capture_window is written only "
     "when a "
     "log lost its capture records (cut short or damaged): 'recovered' (rebuilt from its cudaProfilerStart calls) or "
     "'unknown' (the whole process kept; data_loss 'capture_window_unknown').",
     "META_DATA_CAPTURE", kMeta},
    {"strings", "String table: every name and message once.", "StringIds", kStrings},
    {"processes", "One row per traced process (the command and its CUDA-using children).", "PROCESSES", kProcesses},
    {"threads", "Threads seen in API calls and NVTX events.", "ThreadNames", kThreads},
    {"devices", "GPUs seen by each process.", "TARGET_INFO_GPU", kDevices},
    {"kernels", "One row per kernel execution (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).", "CUPTI_ACTIVITY_KIND_KERNEL",
     kKernels},
    {"kernel_profiles",
     "One row per kernel launch profiled by `gpuscope kernels` (CUPTI Range Profiler, auto range, kernel replay): "
     "launch facts.",
     "", kKernelProfiles},
    {"kernel_metrics",
     "Hardware-counter values per profiled launch (one row per launch and metric), joined to kernel_profiles by "
     "profile_id.",
     "", kKernelMetrics},
    {"memcpys", "One row per memory copy (CUPTI_ACTIVITY_KIND_MEMCPY, MEMCPY2).", "CUPTI_ACTIVITY_KIND_MEMCPY",
     kMemcpys},
    {"memsets", "One row per memset (CUPTI_ACTIVITY_KIND_MEMSET).", "CUPTI_ACTIVITY_KIND_MEMSET", kMemsets},
    {"memory_events",
     "Allocations, frees and memory pool operations, recorded with `gpuscope trace --cuda-memory-usage` (CUPTI "
     "MEMORY2 and MEMORY_POOL records), with the device memory in use after each. PyTorch's caching allocator shows "
     "as the segments it takes with cudaMalloc (2 MiB and up, kept and reused), not as tensors. Rows are kept inside "
     "the capture windows; in_use_bytes counts every allocation since the process started.",
     "CUDA_GPU_MEMORY_USAGE_EVENTS", kMemoryEvents},
    {"gpu_metric_names",
     "The hardware metrics sampled by `gpuscope trace --gpu-metrics`, with a short label and the unit of their values "
     "(core/gpu_metrics.hpp).",
     "", kGpuMetricNames},
    {"gpu_metrics",
     "GPU hardware counters sampled over time with `gpuscope trace --gpu-metrics` (CUPTI PM sampling, by the launcher: "
     "a GPU's counters count the work of every process on it): one row per sample and metric. Samples are kept when "
     "they overlap a capture window of the traced processes (all of them when no process has windows other than "
     "'all').",
     "GPU_METRICS", kGpuMetrics},
    {"gpu_metrics_sessions",
     "One row per GPU sampled by `gpuscope trace --gpu-metrics`: the chip, the interval and what was imported.", "",
     kGpuMetricsSessions},
    {"api_calls",
     "CUDA runtime and driver API calls. With `gpuscope trace --cuda-api=gpu` (the default) only the calls that put "
     "work on the GPU, move or allocate memory, or wait (launches, memcpy, memset, synchronize, event record, stream "
     "wait, malloc/free, graph launch), timed by gpuscope's own CUPTI callbacks (the outermost call only: a runtime "
     "call's nested driver calls are part of it); with --cuda-api=all every call but the polling ones, from "
     "CUPTI_ACTIVITY_KIND_RUNTIME and DRIVER records.",
     "CUPTI_ACTIVITY_KIND_RUNTIME", kApiCalls},
    {"py_stacks",
     "Python stacks of the program's threads at CUDA calls (`gpuscope trace --python-callsites`, on by default for "
     "Python programs at synchronizing calls, copies, memsets and allocations): a prefix tree of call sites, each "
     "row a frame and its caller's row, so api_calls.py_stack_id names the innermost call site and shared callers "
     "are stored once. Taken by gpuscope's frame walker on the calling thread, without the GIL (CPython 3.11-3.13).",
     "", kPyStacks},
    {"py_frames", "The Python frames of py_stacks: file, line and function, resolved once per instruction.", "",
     kPyFrames},
    {"py_samples",
     "Periodic samples of every Python thread's stack (`gpuscope trace --python-sampling[=RATE]`): a sampler thread "
     "of gpuscope's reads each thread's frames without the GIL, RATE times a second (default 1000), on the trace "
     "clock. Stacks are py_stacks rows, shared with the call sites. A stack read while its frames changed (torn) is "
     "not stored: data_loss py_stacks_torn counts it.",
     "", kPySamples},
    {"syncs",
     "CPU waits on the GPU (CUPTI_ACTIVITY_KIND_SYNCHRONIZATION); recorded only with `gpuscope trace "
     "--cuda-sync-records` (they cost about 5 us per PyTorch op on H100). The synchronizing API calls are in api_calls "
     "either way.",
     "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", kSyncs},
    {"nvtx_events", "NVTX ranges and marks, from C/C++ nvtx3 and torch.cuda.nvtx.", "NVTX_EVENTS", kNvtxEvents},
    {"torch_ops",
     "PyTorch operator calls (`gpuscope trace --pytorch=ops`): the ranges PyTorch's RecordFunction observer put in "
     "nvtx_events, parsed at import (core/pytorch_ranges.hpp). Those ranges stay in nvtx_events (the timeline shows "
     "them) but nvtx_sum and nvtx_gpu_proj_sum leave them out.",
     "", kTorchOps},
    {"torch_modules",
     "nn.Module forward calls (`gpuscope trace --pytorch=modules`), parsed from their NVTX ranges.\n\n"
     "Model bytes: the range of an outermost module call (a model's forward; parent_module NULL) keeps, in its "
     "nvtx_events text after \"nn.Module: PATH (CLASS)\", what a language model's decode step must read: "
     "\", weight_bytes = N, weight_dtype = D\" (bytes: numel x element_size over the model's unique parameters, tied "
     "weights once, and its buffers but bool ones; counted at the module object's first call; D the dtype holding "
     "most of them, e.g. float16) and, when the call is passed a KV cache (transformers' Cache objects, "
     "tuples of per-layer (key, value) tensors), \", kv_bytes = N, kv_tokens = T\" (the cache's key and value tensors "
     "at the call, T positions per sequence) or \", kv_static = 1\" in place of kv_tokens (a preallocated cache, "
     "StaticCache: N is its allocated size; the filled length is not known without a GPU sync). `stats -r llm_sum` "
     "reads them (docs/llm.md).",
     "", kTorchModules},
    {"torch_steps",
     "Training steps of a PyTorch program (gpuscope trace marks them by default; not with --pytorch=none): one per "
     "optimizer.step() call (its gpuscope.step mark).",
     "", kTorchSteps},
    {"torch_op_activities",
     "Which operator call launched each GPU activity (kernel, memcpy, memset): the innermost torch_ops range on the "
     "launching API call's thread that holds the call.",
     "", kTorchOpActivities},
    {"torch_memory_stats",
     "PyTorch's caching-allocator counters per process and device, read at exit by gpuscope's hooks (`gpuscope trace "
     "--cuda-memory-usage` or --pytorch=memory on a program that imports torch; collect/python/sitecustomize.py).",
     "", kTorchMemoryStats},
    {"torch_memory_segments",
     "The segments PyTorch's caching allocator held at exit (torch.cuda.memory._snapshot()): which memory_events "
     "allocations are PyTorch's.",
     "", kTorchMemorySegments},
    {"torch_memory_events",
     "Every event of PyTorch's caching allocator (`gpuscope trace --pytorch=memory`: "
     "torch.cuda.memory._record_memory_history(context=None) from `import torch` on): tensors' blocks handed out and "
     "freed, segments taken and released.",
     "", kTorchMemoryEvents},
    {"requests",
     "Requests sent to a server by `gpuscope bench serve --session NAME` while that server ran under `gpuscope launch "
     "--session NAME` (its requests-PID.jsonl in the session's log folder; docs/bench.md): one row per request, "
     "warm-up ones too, on the trace clock, so a slow request leads to the kernels that ran during it. Every "
     "request of the file is kept, also those outside the capture windows.",
     "", kRequests},
    {"overheads", "CUPTI's own overhead (CUPTI_ACTIVITY_KIND_OVERHEAD).", "", kOverheads},
    {"capture_windows", "Time windows recorded (--capture-range, --delay, --duration).", "", kCaptureWindows},
    {"data_loss", "Everything known lost or doubtful; shown by every summary.", "", kDataLoss},
    {"messages", "Messages the collector left for the user.", "", kMessages},
    {"merged_traces",
     "The traces `gpuscope merge` joined into this one (empty in a trace it did not write), with the clock offset "
     "applied to each: hosts' clocks differ, so every timestamp of trace N was moved by its clock_offset_ns onto trace "
     "0's clock. The offset comes from NCCL collective kernels, which end at nearly the same moment on every rank; "
     "residual_median_ns and residual_max_ns say how far apart the same moment can still be across hosts (compare "
     "them with the intervals you read across hosts). String ids, row ids and pids are renumbered; every row is "
     "kept.",
     "", kMergedTraces},
    {"merged_pids",
     "Every process of the traces `gpuscope merge` joined: its pid in its own trace and here (two hosts can run "
     "processes with the same pid; the later one is renumbered).",
     "", kMergedPids},
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
    {"v_torch_ops", "torch_ops with the name, times and duration_ns.",
     "SELECT o.*, n.value AS name, e.start_ns, e.end_ns, e.end_ns - e.start_ns AS duration_ns, e.depth "
     "FROM torch_ops o JOIN nvtx_events e ON e.id = o.nvtx_id LEFT JOIN strings n ON n.id = o.name_id"},
    {"v_torch_modules", "torch_modules with the path, class, thread, times and duration_ns.",
     "SELECT m.*, p.value AS path, c.value AS class_name, e.tid, e.start_ns, e.end_ns, "
     "e.end_ns - e.start_ns AS duration_ns FROM torch_modules m JOIN nvtx_events e ON e.id = m.nvtx_id "
     "LEFT JOIN strings p ON p.id = m.path_id LEFT JOIN strings c ON c.id = m.class_id"},
    {"v_memory",
     "memory_events with the name of the API call that made each one (api_name, e.g. cudaMalloc; NULL if not "
     "recorded).",
     "SELECT m.*, (SELECT s.value FROM api_calls a JOIN strings s ON s.id = a.name_id WHERE a.pid = m.pid AND "
     "a.correlation_id = m.correlation_id AND m.correlation_id <> 0 ORDER BY a.start_ns, a.id LIMIT 1) AS api_name "
     "FROM memory_events m"},
    {"v_gpu_metrics", "gpu_metrics with the metric's name, label and unit.",
     "SELECT g.device_id, g.start_ns, g.end_ns, n.name, n.label, n.unit, g.value FROM gpu_metrics g "
     "JOIN gpu_metric_names n ON n.id = g.metric_id"},
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
    "CREATE INDEX memory_events_ts ON memory_events(ts_ns)",
    "CREATE INDEX gpu_metrics_device ON gpu_metrics(device_id, metric_id, start_ns)",
};

#undef GPUSCOPE_COLUMN_DEF

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
  md +=
      "A trace is one SQLite database (`NAME.sqlite`). Open it with `sqlite3 NAME.sqlite`.\n"
      "All timestamps are integers in **ns** on one clock (CUPTI's timestamp, CLOCK_REALTIME on Linux),\n"
      "shared by every process of the trace. Names live once in `strings`; `*_id` columns point there,\n"
      "and the `v_*` views resolve them. A reader checks `meta.schema_version` and refuses another version.\n\n";
  md +=
      "Example: the ten kernels with the most GPU time\n\n```sql\n"
      "SELECT name, COUNT(*) AS calls, SUM(duration_ns) AS total_ns\n"
      "FROM v_kernels GROUP BY name ORDER BY total_ns DESC LIMIT 10;\n```\n\n";
  for (const TableDef& t : kTables) {
    md += "## `" + std::string(t.name) + "`\n\n" + std::string(t.doc) + "\n";
    if (!t.nsys_equivalent.empty())
      md += "Nsight Systems export equivalent: `" + std::string(t.nsys_equivalent) + "`.\n";
    md += "\n| column | type | unit | meaning |\n|---|---|---|---|\n";
    for (const ColumnDef& c : t.columns) {
      md += "| `" + std::string(c.name) + "` | " + std::string(c.sql_type) + " | " + std::string(c.unit) + " | " +
            std::string(c.doc) + " |\n";
    }
    md += "\n";
  }
  md += "## Views\n\n";
  for (const ViewDef& v : kViews) {
    md += "- `" + std::string(v.name) + "`: " + std::string(v.doc) + "\n";
  }
  md += "\n";
  md +=
      "## What a crash loses\n\n"
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
