// Timeline: every event of a trace, loaded from the trace database into plain
// structs, ready for a timeline exporter (render/perfetto_json.hpp).
//
// analyze::load_timeline() reads the tables of store/schema.hpp (api_calls, nvtx_events,
// syncs, kernels, memcpys, memsets, processes, threads, devices) with names
// resolved through `strings`. All times are integer ns on the trace clock
// (CUPTI timestamps, CLOCK_REALTIME); nothing is rounded. Errors: throws
// store::DatabaseError when the database lacks the schema's tables.
//
// Plain data only (core/: no I/O), so render/ uses it without analyze/ or SQLite.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope {

struct TimelineProcess {
  std::int64_t pid = 0;
  std::string name;     // executable base name (from exe, else the first word of cmdline)
  std::string cmdline;
  std::optional<std::int64_t> start_ns;
  std::optional<std::int64_t> end_ns;
  bool ended_cleanly = true;
  std::optional<std::int64_t> rank;  // $RANK of a torchrun/MPI worker
};

struct TimelineThread {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::string name;  // nvtxNameOsThread name, "" if none
};

/// One physical GPU as seen by one process. Device ordinals are per process
/// (CUDA_VISIBLE_DEVICES), so the same GPU can be device 0 in one process and
/// device 1 in another; gpu_index names the physical GPU across the trace
/// (see gpu_index() below).
struct TimelineDevice {
  std::int64_t pid = 0;
  std::int64_t device_id = 0;
  std::int64_t gpu_index = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string uuid;  // "GPU-..." or "" if unknown
  std::int64_t cc_major = 0;
  std::int64_t cc_minor = 0;
  std::int64_t sm_count = 0;
  std::int64_t global_memory_bytes = 0;
  std::int64_t max_threads_per_block = 0;
  std::int64_t max_warps_per_sm = 0;
  std::int64_t max_registers_per_sm = 0;
  std::int64_t max_registers_per_block = 0;
  std::int64_t max_shared_memory_per_sm = 0;     // bytes
  std::int64_t max_shared_memory_per_block = 0;  // bytes
};

/// A CUDA runtime or driver API call (CPU side).
struct ApiCallEvent {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  bool is_driver = false;  // domain 'driver' (cu*) vs 'runtime' (cuda*)
  std::string name;        // "cudaLaunchKernel"
  std::int64_t cbid = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t correlation_id = 0;  // 0 = none
  std::int64_t return_value = 0;
};

/// An NVTX range (push/pop or start/end) or mark (CPU side).
struct NvtxEvent {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::string style;   // "PushPop", "StartEnd" or "Mark"
  std::string text;
  std::string domain;  // "" = default domain
  std::int64_t start_ns = 0;
  std::optional<std::int64_t> end_ns;  // nullopt for marks and ranges never closed
  bool is_mark() const { return style == "Mark"; }
};

/// A CPU wait on the GPU (CUPTI synchronization activity).
struct SyncEvent {
  std::int64_t pid = 0;
  std::optional<std::int64_t> tid;  // nullopt when the waiting thread is unknown
  std::string sync_type;            // "stream_synchronize", ...
  std::int64_t context_id = 0;
  std::optional<std::int64_t> stream_id;
  std::optional<std::int64_t> event_id;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t correlation_id = 0;
};

/// Fields every GPU activity shares.
struct GpuEventBase {
  std::int64_t pid = 0;
  std::int64_t device_id = 0;  // ordinal inside pid
  std::int64_t gpu_index = 0;  // physical GPU across the trace
  std::int64_t context_id = 0;
  std::int64_t stream_id = 0;
  std::int64_t correlation_id = 0;  // 0 = none
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

struct KernelEvent : GpuEventBase {
  std::string name;  // demangled name
  std::array<std::int64_t, 3> grid{};   // blocks
  std::array<std::int64_t, 3> block{};  // threads
  std::int64_t registers_per_thread = 0;
  std::int64_t static_shared_memory = 0;   // bytes per block
  std::int64_t dynamic_shared_memory = 0;  // bytes per block
  std::optional<std::int64_t> graph_id;
};

struct MemcpyEvent : GpuEventBase {
  std::int64_t bytes = 0;
  std::string copy_kind;  // "HtoD", "DtoH", ... (schema values)
  std::string src_kind;   // "pageable", "pinned", "device", ...
  std::string dst_kind;
  bool is_async = false;
};

struct MemsetEvent : GpuEventBase {
  std::int64_t bytes = 0;
  std::int64_t value = 0;
  std::string memory_kind;
};

struct Timeline {
  /// Earliest timestamp in the trace (ns): the smallest of every event start,
  /// process start and capture window start; 0 for an empty trace. Exporters
  /// write times relative to it.
  std::int64_t base_ns = 0;
  std::vector<TimelineProcess> processes;  // sorted by pid
  std::vector<TimelineThread> threads;
  std::vector<TimelineDevice> devices;  // one per (pid, device_id), sorted by gpu_index
  // CPU events, each vector sorted by start_ns.
  std::vector<ApiCallEvent> api_calls;
  std::vector<NvtxEvent> nvtx;
  std::vector<SyncEvent> syncs;
  // GPU events, each vector sorted by start_ns.
  std::vector<KernelEvent> kernels;
  std::vector<MemcpyEvent> memcpys;
  std::vector<MemsetEvent> memsets;
};


}  // namespace gpuscope
