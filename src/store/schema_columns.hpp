// Every trace table's columns, declared once as X-macros: for each column its name
// (also the C++ member of the table's row struct), the row member's type, its SQL type,
// its unit and its doc. From these come
//   - the ColumnDef arrays of schema.cpp (CREATE TABLE, docs/trace-schema.md),
//   - the row structs of store/rows.hpp (store::rows::Kernel, ...) that
//     store/row_writer.hpp binds by member.
// Adding a column here changes the DDL, the docs and the writer together; the
// importer then fails to compile until it sets the member (if it must) — nothing else.
//
// X(name, Type, "SQL type", "unit", "doc"). Type is one of store/rows.hpp's aliases:
//   Int     std::int64_t                 always bound
//   OptInt  std::optional<std::int64_t>  nullopt binds NULL (INTEGER PRIMARY KEY: a new rowid)
//   Text    std::string_view             always bound ("" stays "")
//   OptText std::optional<std::string_view>  nullopt binds NULL
//   Real    double
//   OptReal std::optional<double>         nullopt binds NULL
//   OptBlob std::optional<rows::Blob>    bytes as a BLOB; nullopt binds NULL
// Table order, table docs, views and indexes stay in schema.cpp.
#pragma once

#include "store/schema_columns_counters.hpp"  // hardware counters: gpuscope kernels, --gpu-metrics
#include "store/schema_columns_python.hpp"    // the tables of Python programs: PyTorch and Python stacks

// clang-format off
#define GPUSCOPE_COLUMNS_META(X) \
  X(key, Text, "TEXT PRIMARY KEY", "", \
    "Name of the fact (see the list below).") \
  X(value, Text, "TEXT", "", \
    "Its value, as text.")

#define GPUSCOPE_COLUMNS_STRINGS(X) \
  X(id, Int, "INTEGER PRIMARY KEY", "", \
    "String id referenced by *_id columns.") \
  X(value, Text, "TEXT NOT NULL", "", \
    "The string (kernel name, API name, NVTX message, ...), always valid UTF-8: text the program wrote that was not is repaired at import, each ill-formed byte sequence as U+FFFD.") \
  X(raw, OptBlob, "BLOB", "", \
    "The bytes the program wrote, when they were not valid UTF-8 (value holds them repaired); NULL otherwise.")

#define GPUSCOPE_COLUMNS_PROCESSES(X) \
  X(pid, Int, "INTEGER PRIMARY KEY", "", \
    "OS process id of the traced process.") \
  X(ppid, OptInt, "INTEGER", "", \
    "Parent process id.") \
  X(host, OptText, "TEXT", "", \
    "Host name.") \
  X(cmdline, OptText, "TEXT", "", \
    "Command line, arguments separated by spaces.") \
  X(exe, OptText, "TEXT", "", \
    "Executable path (/proc/PID/exe).") \
  X(start_ns, Int, "INTEGER", "ns", \
    "When the collector started in this process.") \
  X(end_ns, Int, "INTEGER", "ns", \
    "Last timestamp seen from this process.") \
  X(ended_cleanly, Int, "INTEGER", "", \
    "1 if the collector finished its log at exit; 0 if the process crashed or was killed (the log was cut short).") \
  X(exit_status, OptInt, "INTEGER", "", \
    "Exit code of the process (the launched command only; NULL for others or when killed by a signal).") \
  X(term_signal, OptInt, "INTEGER", "", \
    "Signal that killed the process (launched command only), else NULL.") \
  X(rank, OptInt, "INTEGER", "", \
    "Rank the launcher gave the process (see launcher), NULL if none.") \
  X(local_rank, OptInt, "INTEGER", "", \
    "Rank among the processes of its host (LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID); NULL if none (PMI gives none).") \
  X(world_size, OptInt, "INTEGER", "", \
    "Number of ranks of the job (WORLD_SIZE, OMPI_COMM_WORLD_SIZE, SLURM_NTASKS, PMI_SIZE); NULL if none.") \
  X(launcher, OptText, "TEXT", "", \
    "Whose environment gave the rank, the first found of: 'torchrun' (RANK, LOCAL_RANK, WORLD_SIZE), 'openmpi' (OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _SIZE), 'slurm' (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS), 'pmi' (PMI_RANK, PMI_SIZE); NULL without a rank. Traces recorded before gpuscope read the others say 'torchrun' when $RANK was set.") \
  X(cupti_api_version, OptInt, "INTEGER", "", \
    "cuptiGetVersion() in the process.") \
  X(cuda_driver_version, OptInt, "INTEGER", "", \
    "cuDriverGetVersion() (e.g. 13000).") \
  X(collector_version, OptText, "TEXT", "", \
    "gpuscope version of the injected collector.") \
  X(log_bytes, Int, "INTEGER", "bytes", \
    "Size of the process's event log.")

#define GPUSCOPE_COLUMNS_THREADS(X) \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(tid, Int, "INTEGER", "", \
    "OS thread id (gettid).") \
  X(name, OptText, "TEXT", "", \
    "Thread name from nvtxNameOsThread, else NULL.")

#define GPUSCOPE_COLUMNS_DEVICES(X) \
  X(pid, Int, "INTEGER", "", \
    "Process that saw the device (device ids are per process).") \
  X(device_id, Int, "INTEGER", "", \
    "CUDA device ordinal inside that process.") \
  X(name, OptText, "TEXT", "", \
    "Device name, e.g. 'NVIDIA H100 80GB HBM3'.") \
  X(uuid, OptText, "TEXT", "", \
    "GPU UUID, 'GPU-xxxxxxxx-xxxx-...'.") \
  X(cc_major, Int, "INTEGER", "", \
    "Compute capability, major.") \
  X(cc_minor, Int, "INTEGER", "", \
    "Compute capability, minor.") \
  X(sm_count, Int, "INTEGER", "", \
    "Number of streaming multiprocessors (SMs).") \
  X(global_memory_bytes, Int, "INTEGER", "bytes", \
    "Device memory size.") \
  X(memory_bandwidth_bytes_per_s, Int, "INTEGER", "bytes/s", \
    "Theoretical DRAM bandwidth reported by CUPTI.") \
  X(l2_cache_bytes, Int, "INTEGER", "bytes", \
    "L2 cache size.") \
  X(core_clock_khz, Int, "INTEGER", "kHz", \
    "SM clock rate reported by CUPTI.") \
  X(memory_clock_khz, Int, "INTEGER", "kHz", \
    "Memory clock rate (cuDeviceGetAttribute), 0 if unknown.") \
  X(memory_bus_width_bits, Int, "INTEGER", "bits", \
    "Memory bus width, 0 if unknown.") \
  X(max_threads_per_block, Int, "INTEGER", "", \
    "Limit on threads per block.") \
  X(max_warps_per_sm, Int, "INTEGER", "", \
    "Resident warps per SM (occupancy limit).") \
  X(max_blocks_per_sm, Int, "INTEGER", "", \
    "Resident blocks per SM (occupancy limit).") \
  X(max_registers_per_sm, Int, "INTEGER", "", \
    "32-bit registers per SM.") \
  X(max_registers_per_block, Int, "INTEGER", "", \
    "32-bit registers per block.") \
  X(max_shared_memory_per_sm, Int, "INTEGER", "bytes", \
    "Shared memory per SM.") \
  X(max_shared_memory_per_block, Int, "INTEGER", "bytes", \
    "Shared memory per block (opt-in maximum).") \
  X(num_memcpy_engines, Int, "INTEGER", "", \
    "Copy engines.") \
  X(ecc_enabled, Int, "INTEGER", "", \
    "1 if ECC is on.")

// The leading columns of every table of GPU work (kernels, memcpys, memsets): where it ran.
#define GPUSCOPE_COLUMNS_GPU_WORK_KEYS(X) \
  X(id, OptInt, "INTEGER PRIMARY KEY", "", \
    "Row id.") \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(device_id, Int, "INTEGER", "", \
    "CUDA device ordinal.") \
  X(context_id, Int, "INTEGER", "", \
    "CUDA context id.") \
  X(stream_id, Int, "INTEGER", "", \
    "CUDA stream id (CUPTI's).")

#define GPUSCOPE_COLUMNS_KERNELS(X) \
  GPUSCOPE_COLUMNS_GPU_WORK_KEYS(X) \
  X(correlation_id, Int, "INTEGER", "", \
    "Matches api_calls.correlation_id of the launch (per process).") \
  X(start_ns, Int, "INTEGER", "ns", \
    "Kernel start on the GPU.") \
  X(end_ns, Int, "INTEGER", "ns", \
    "Kernel end on the GPU.") \
  X(name_id, OptInt, "INTEGER", "", \
    "strings.id of the demangled name.") \
  X(short_name_id, OptInt, "INTEGER", "", \
    "strings.id of the base name (no namespace, template or parameters), as nsys --base.") \
  X(mangled_name_id, OptInt, "INTEGER", "", \
    "strings.id of the mangled name as CUPTI reports it.") \
  X(grid_x, Int, "INTEGER", "", \
    "Grid size in blocks, x.") \
  X(grid_y, Int, "INTEGER", "", \
    "Grid size in blocks, y.") \
  X(grid_z, Int, "INTEGER", "", \
    "Grid size in blocks, z.") \
  X(block_x, Int, "INTEGER", "", \
    "Block size in threads, x.") \
  X(block_y, Int, "INTEGER", "", \
    "Block size in threads, y.") \
  X(block_z, Int, "INTEGER", "", \
    "Block size in threads, z.") \
  X(cluster_x, Int, "INTEGER", "", \
    "Thread-block cluster size, x (0 = no cluster).") \
  X(cluster_y, Int, "INTEGER", "", \
    "Cluster size, y.") \
  X(cluster_z, Int, "INTEGER", "", \
    "Cluster size, z.") \
  X(registers_per_thread, Int, "INTEGER", "", \
    "Registers per thread.") \
  X(static_shared_memory, Int, "INTEGER", "bytes", \
    "Static shared memory per block.") \
  X(dynamic_shared_memory, Int, "INTEGER", "bytes", \
    "Dynamic shared memory per block.") \
  X(local_memory_per_thread, Int, "INTEGER", "bytes", \
    "Local memory (spills, stack) per thread.") \
  X(graph_id, OptInt, "INTEGER", "", \
    "CUDA graph id when launched from a graph, else NULL.") \
  X(graph_node_id, OptInt, "INTEGER", "", \
    "CUDA graph node id when launched from a graph, else NULL.") \
  X(launch_type, Int, "INTEGER", "", \
    "CUpti_ActivityLaunchType (0 regular, 1 cooperative single-device, 2 multi-device).")

#define GPUSCOPE_COLUMNS_MEMCPYS(X) \
  GPUSCOPE_COLUMNS_GPU_WORK_KEYS(X) \
  X(correlation_id, Int, "INTEGER", "", \
    "Matches api_calls.correlation_id.") \
  X(start_ns, Int, "INTEGER", "ns", \
    "Copy start on the GPU.") \
  X(end_ns, Int, "INTEGER", "ns", \
    "Copy end on the GPU.") \
  X(bytes, Int, "INTEGER", "bytes", \
    "Bytes copied.") \
  X(copy_kind, Text, "TEXT", "", \
    "'HtoD', 'DtoH', 'DtoD', 'HtoH', 'PtoP', 'HtoA', 'AtoH', 'AtoA', 'AtoD', 'DtoA' or 'unknown'.") \
  X(src_kind, Text, "TEXT", "", \
    "Source memory: 'pageable', 'pinned', 'device', 'array', 'managed', 'device_static', 'managed_static', 'unknown'.") \
  X(dst_kind, Text, "TEXT", "", \
    "Destination memory kind (same values).") \
  X(src_device_id, Int, "INTEGER", "", \
    "Source device (peer copies), else = device_id.") \
  X(dst_device_id, Int, "INTEGER", "", \
    "Destination device (peer copies), else = device_id.") \
  X(is_async, Int, "INTEGER", "", \
    "1 for an asynchronous copy.") \
  X(graph_id, OptInt, "INTEGER", "", \
    "CUDA graph id, else NULL.") \
  X(graph_node_id, OptInt, "INTEGER", "", \
    "CUDA graph node id, else NULL.")

#define GPUSCOPE_COLUMNS_MEMSETS(X) \
  GPUSCOPE_COLUMNS_GPU_WORK_KEYS(X) \
  X(correlation_id, Int, "INTEGER", "", \
    "Matches api_calls.correlation_id.") \
  X(start_ns, Int, "INTEGER", "ns", \
    "Start on the GPU.") \
  X(end_ns, Int, "INTEGER", "ns", \
    "End on the GPU.") \
  X(bytes, Int, "INTEGER", "bytes", \
    "Bytes set.") \
  X(value, Int, "INTEGER", "", \
    "Value written.") \
  X(memory_kind, Text, "TEXT", "", \
    "Memory kind (as memcpys.src_kind).") \
  X(graph_id, OptInt, "INTEGER", "", \
    "CUDA graph id, else NULL.") \
  X(graph_node_id, OptInt, "INTEGER", "", \
    "CUDA graph node id, else NULL.")

#define GPUSCOPE_COLUMNS_MEMORY_EVENTS(X) \
  X(id, OptInt, "INTEGER PRIMARY KEY", "", \
    "Row id; rows of one process are numbered in time order.") \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(device_id, Int, "INTEGER", "", \
    "CUDA device ordinal inside that process.") \
  X(context_id, OptInt, "INTEGER", "", \
    "CUDA context id, NULL if none (pool operations).") \
  X(stream_id, OptInt, "INTEGER", "", \
    "Stream of a stream-ordered operation (cudaMallocAsync, cudaFreeAsync), else NULL.") \
  X(correlation_id, Int, "INTEGER", "", \
    "api_calls.correlation_id (with pid) of the call that allocated, freed or changed the pool (cudaMalloc, cudaFree, cuMemAlloc, ...); 0 if none.") \
  X(ts_ns, Int, "INTEGER", "ns", \
    "When the operation happened (CPU side, inside its API call).") \
  X(operation, Text, "TEXT", "", \
    "'alloc', 'free', 'pool_create', 'pool_destroy', 'pool_trim' or 'unknown'.") \
  X(memory_kind, Text, "TEXT", "", \
    "Memory allocated: 'device', 'device_static' (a module's __device__ variables), 'pinned' (page-locked host memory), 'managed', 'managed_static', 'pageable', 'array', 'unknown' (as memcpys.src_kind). Pool rows: 'managed' for a managed pool, else 'device'.") \
  X(address, Int, "INTEGER", "", \
    "Virtual address of the allocation (pool rows: of the pool), as a signed 64-bit integer.") \
  X(bytes, Int, "INTEGER", "bytes", \
    "Bytes allocated or freed (a free matched to its allocation: the allocation's size); pool rows: the pool's size.") \
  X(is_async, Int, "INTEGER", "", \
    "1 for a stream-ordered allocation or free (from a memory pool), else 0.") \
  X(pool_type, OptText, "TEXT", "", \
    "'local' or 'imported' ('unknown' for a type this gpuscope does not know) when the memory came from (or the row is about) a CUDA memory pool; NULL otherwise.") \
  X(pool_address, OptInt, "INTEGER", "", \
    "Base address of that pool, NULL if none.") \
  X(pool_size_bytes, OptInt, "INTEGER", "bytes", \
    "The pool's size as CUPTI reported it with this row (local pools), NULL if unknown.") \
  X(pool_utilized_bytes, OptInt, "INTEGER", "bytes", \
    "Bytes of the pool in use as CUPTI reported it with this row (local pools), NULL if unknown.") \
  X(pool_release_threshold_bytes, OptInt, "INTEGER", "bytes", \
    "The pool's release threshold (local pools), NULL if unknown.") \
  X(pool_min_bytes_to_keep, OptInt, "INTEGER", "bytes", \
    "pool_trim rows: the minimum the trim kept; NULL otherwise.") \
  X(alloc_id, OptInt, "INTEGER", "", \
    "free rows: memory_events.id of the allocation freed; NULL when the allocation has no row (made before a capture window, or never seen: data_loss 'unmatched_memory_free').") \
  X(in_use_bytes, OptInt, "INTEGER", "bytes", \
    "Device memory in use by this process on this device just after the row: the sizes of its live 'device' and 'device_static' allocations (allocations minus frees, from the process start, whatever the capture windows). A free never seen allocated leaves it unchanged (never negative). NULL for other memory kinds and pool rows.")

#define GPUSCOPE_COLUMNS_API_CALLS(X) \
  X(id, OptInt, "INTEGER PRIMARY KEY", "", \
    "Row id.") \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(tid, Int, "INTEGER", "", \
    "OS thread id of the caller.") \
  X(domain, Text, "TEXT", "", \
    "'runtime' (cuda*) or 'driver' (cu*).") \
  X(cbid, Int, "INTEGER", "", \
    "CUPTI callback id (cupti_runtime_cbid.h / cupti_driver_cbid.h).") \
  X(name_id, OptInt, "INTEGER", "", \
    "strings.id of the function name, e.g. cudaLaunchKernel.") \
  X(start_ns, Int, "INTEGER", "ns", \
    "Call entry on the CPU.") \
  X(end_ns, Int, "INTEGER", "ns", \
    "Call return.") \
  X(correlation_id, Int, "INTEGER", "", \
    "Links the call to the GPU work it launched (per process).") \
  X(return_value, Int, "INTEGER", "", \
    "cudaError_t or CUresult returned (0 = success).") \
  X(py_stack_id, OptInt, "INTEGER", "", \
    "py_stacks.id of the calling thread's Python stack at the call (`gpuscope trace --python-callsites`), NULL when none was taken.")

#define GPUSCOPE_COLUMNS_SYNCS(X) \
  X(id, OptInt, "INTEGER PRIMARY KEY", "", \
    "Row id.") \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(tid, OptInt, "INTEGER", "", \
    "Thread of the API call that waited (from correlation_id), NULL if unknown.") \
  X(context_id, Int, "INTEGER", "", \
    "CUDA context id.") \
  X(stream_id, OptInt, "INTEGER", "", \
    "Stream waited on, NULL if n/a.") \
  X(event_id, OptInt, "INTEGER", "", \
    "Event waited on, NULL if n/a.") \
  X(sync_type, Text, "TEXT", "", \
    "'event_synchronize', 'stream_wait_event', 'stream_synchronize', 'context_synchronize' or 'unknown'.") \
  X(start_ns, Int, "INTEGER", "ns", \
    "Wait start (CPU).") \
  X(end_ns, Int, "INTEGER", "ns", \
    "Wait end.") \
  X(correlation_id, Int, "INTEGER", "", \
    "api_calls.correlation_id of the synchronizing call.")

#define GPUSCOPE_COLUMNS_NVTX_EVENTS(X) \
  X(id, Int, "INTEGER PRIMARY KEY", "", \
    "Row id.") \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(tid, Int, "INTEGER", "", \
    "Thread that opened the range or put the mark.") \
  X(end_tid, Int, "INTEGER", "", \
    "Thread that closed a start/end range (may differ), else = tid.") \
  X(domain_id, OptInt, "INTEGER", "", \
    "strings.id of the NVTX domain name; NULL = default domain.") \
  X(style, Text, "TEXT", "", \
    "'PushPop', 'StartEnd' or 'Mark' (nsys's names).") \
  X(text_id, OptInt, "INTEGER", "", \
    "strings.id of the message.") \
  X(start_ns, Int, "INTEGER", "ns", \
    "Range start or mark time.") \
  X(end_ns, OptInt, "INTEGER", "ns", \
    "Range end; NULL for marks and ranges never closed.") \
  X(depth, OptInt, "INTEGER", "", \
    "Push/pop nesting depth on its thread (0 = outermost); NULL for StartEnd and marks.") \
  X(parent_id, OptInt, "INTEGER", "", \
    "nvtx_events.id of the enclosing push/pop range, NULL at top level.") \
  X(color, OptInt, "INTEGER", "", \
    "ARGB color, NULL if none.") \
  X(category, Int, "INTEGER", "", \
    "NVTX category, 0 if none.")

#define GPUSCOPE_COLUMNS_OVERHEADS(X) \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(overhead_kind, Text, "TEXT", "", \
    "CUPTI overhead kind: 'driver_compiler', 'cupti_buffer_flush', 'cupti_instrumentation', 'cupti_resource', 'runtime_triggered_module_loading', 'lazy_function_loading', 'command_buffer_full', 'activity_buffer_request', 'unknown'.") \
  X(object_id, Int, "INTEGER", "", \
    "Thread or device the overhead applies to.") \
  X(start_ns, Int, "INTEGER", "ns", \
    "Start.") \
  X(end_ns, Int, "INTEGER", "ns", \
    "End.")

#define GPUSCOPE_COLUMNS_CAPTURE_WINDOWS(X) \
  X(pid, Int, "INTEGER", "", \
    "Process id.") \
  X(start_ns, Int, "INTEGER", "ns", \
    "Window start.") \
  X(end_ns, Int, "INTEGER", "ns", \
    "Window end (the process end if never stopped).") \
  X(reason, Text, "TEXT", "", \
    "What opened it: 'all' (no capture range: the whole process), 'cudaProfilerStart', 'nvtx:RANGE', 'delay', 'process_start' (a stop with no start before it: capturing from the start), or 'unknown' (the run had a capture range but the log lost its capture records and nothing read placed the window: the whole process).")

#define GPUSCOPE_COLUMNS_DATA_LOSS(X) \
  X(pid, OptInt, "INTEGER", "", \
    "Process id (NULL for the whole trace).") \
  X(what, Text, "TEXT", "", \
    "'cupti_dropped_records' (and other collector-reported losses), 'truncated_log', 'corrupt_log', 'unreadable_log', 'unknown_log_records', 'capture_window_recovered', 'capture_window_unknown', 'unmatched_nvtx_pop', 'unmatched_nvtx_end', 'unclosed_nvtx_range', 'missing_kernel_records', 'unmatched_memory_free', 'memory_alloc_over_live', 'truncated_gpu_metrics_log', 'gpu_metrics_overflow'.") \
  X(count, Int, "INTEGER", "", \
    "How many records or bytes (see detail).") \
  X(severity, Text, "TEXT", "", \
    "'info', 'warning' or 'data_loss'.") \
  X(detail, Text, "TEXT", "", \
    "Plain-language explanation and what to do.")

#define GPUSCOPE_COLUMNS_MESSAGES(X) \
  X(pid, Int, "INTEGER", "", \
    "Process id; for the GPU-metrics sampler (`gpuscope trace --gpu-metrics`) the launcher's pid, which has no processes row.") \
  X(ts_ns, Int, "INTEGER", "ns", \
    "When.") \
  X(severity, Text, "TEXT", "", \
    "'info', 'warning' or 'error'.") \
  X(text, Text, "TEXT", "", \
    "Message from the collector (e.g. another CUPTI client holds the subscription).")
#define GPUSCOPE_COLUMNS_REQUESTS(X) \
  X(id, OptInt, "INTEGER PRIMARY KEY", "", \
    "Row id, in the order of the requests files and their lines.") \
  X(client_pid, Int, "INTEGER", "", \
    "Process id of the gpuscope bench serve that sent the request (from its file name, requests-PID.jsonl); not a traced process.") \
  X(request, Text, "TEXT", "", \
    "The X-Request-Id header it was sent with (gpuscope-PID-N; vLLM uses it as its request id).") \
  X(request_index, Int, "INTEGER", "", \
    "Its number in the run; warm-up requests are numbered apart.") \
  X(warmup, Int, "INTEGER", "", \
    "1 for a warm-up request (not counted in bench serve's numbers), else 0.") \
  X(start_ns, Int, "INTEGER NOT NULL", "ns", \
    "When the client handed the request to libcurl, on the trace clock.") \
  X(first_token_ns, OptInt, "INTEGER", "ns", \
    "When the first token reached the client; NULL without a token. TTFT = first_token_ns - start_ns.") \
  X(end_ns, Int, "INTEGER NOT NULL", "ns", \
    "When the response ended (or failed) at the client.") \
  X(prompt_tokens, Int, "INTEGER", "", \
    "Prompt tokens as sent (synthetic prompts: words; a prompts file: its count, else 0).") \
  X(output_tokens, Int, "INTEGER", "", \
    "Output tokens: the server's usage.completion_tokens when it sent it, else the events with text.") \
  X(new_connection, Int, "INTEGER", "", \
    "1 when the request opened a TCP connection (its start_ns includes the handshake), 0 when it reused a kept-alive one.") \
  X(error, OptText, "TEXT", "", \
    "Why the request failed (HTTP 500: ..., connection: ..., malformed event N: ...: docs/bench.md); NULL when it succeeded.")

#define GPUSCOPE_COLUMNS_MERGED_TRACES(X) \
  X(trace, Int, "INTEGER PRIMARY KEY", "", \
    "Position of the trace in `gpuscope merge`'s arguments, from 0 (the reference clock).") \
  X(path, Text, "TEXT", "", \
    "The trace file as given to gpuscope merge.") \
  X(host, OptText, "TEXT", "", \
    "Its meta.host.") \
  X(processes, Int, "INTEGER", "", \
    "Processes it holds.") \
  X(clock_offset_ns, Int, "INTEGER", "ns", \
    "Added to every timestamp of this trace to put it on trace 0's clock.") \
  X(offset_method, Text, "TEXT", "", \
    "'reference' (trace 0), 'nccl_kernel_ends' (median difference of the ends of the k-th NCCL kernel of every rank: store/clock_offset.hpp), or 'none' (no NCCL kernel on some rank: offset 0, the hosts' clocks are trusted as they are).") \
  X(matched_collectives, Int, "INTEGER", "", \
    "Collective instances the offset was estimated from (0 for 'reference' and 'none').") \
  X(residual_median_ns, OptInt, "INTEGER", "ns", \
    "The error left after the offset: median over the matched instances of |end difference - offset|; NULL when no offset was estimated.") \
  X(residual_max_ns, OptInt, "INTEGER", "ns", \
    "The largest such difference: how far apart the same moment can still be between this trace and trace 0.") \
  X(gpu_metrics_device_base, Int, "INTEGER", "", \
    "Added to this trace's gpu_metrics.device_id and gpu_metrics_sessions.device_id (1000 x trace), so the sampled GPUs of different hosts stay apart.")

#define GPUSCOPE_COLUMNS_MERGED_PIDS(X) \
  X(trace, Int, "INTEGER", "", \
    "merged_traces.trace the process came from.") \
  X(original_pid, Int, "INTEGER", "", \
    "Its pid in that trace (on its host).") \
  X(pid, Int, "INTEGER", "", \
    "Its pid in this trace: the original, or, when an earlier trace already used it, original_pid + 4194304 x k (above any Linux pid) for the smallest k that is free.")

// clang-format on
