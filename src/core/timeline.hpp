// Timeline: the events of a trace as plain structs, for a timeline exporter
// (render/perfetto_json.hpp).
//
// Two ways to hold them:
//   - streamed: a TimelineHeader and TimelineTracks (small whatever the trace size), then
//     the events one at a time from a TimelineEvents source (analyze::TraceTimelineEvents
//     reads them from the trace database in time order); memory stays bounded;
//   - in memory: a Timeline holding every event in vectors (analyze::load_timeline, tests),
//     with timeline_tracks() and TimelineVectors deriving the same from the vectors.
// The tables behind them are those of store/schema.hpp (api_calls, nvtx_events, syncs,
// kernels, memcpys, memsets, memory_events, processes, threads, devices) with names resolved through
// `strings`. All times are integer ns on the trace clock (CUPTI timestamps,
// CLOCK_REALTIME); nothing is rounded.
//
// Plain data and logic only (core/: no I/O), so render/ uses it without analyze/ or SQLite.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuscope::core {

struct TimelineProcess {
  std::int64_t pid = 0;
  std::string name;  // executable base name (from exe, else the first word of cmdline)
  std::string cmdline;
  std::optional<std::int64_t> start_ns;
  std::optional<std::int64_t> end_ns;
  bool ended_cleanly = true;
  std::optional<std::int64_t> rank;  // the launcher's rank (processes.rank), nullopt if none
  std::string host;                  // processes.host, "" if unknown
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
  /// True on the earliest call (by start, then trace order) with its (pid, correlation_id)
  /// when GPU work with that pid and correlation id is in the trace: the start of a
  /// launch → GPU flow. Set by the source (analyze::TraceTimelineEvents) or link_launches().
  bool launched_traced_gpu_work = false;
  /// The calling thread's Python stack (gpuscope trace --python-callsites), innermost frame
  /// first: "train.py:12 loss_value ← train.py:40 <module>" (analyze::PySites::stack_text);
  /// empty when the call has none.
  std::string python_stack;
};

/// An NVTX range (push/pop or start/end) or mark (CPU side).
struct NvtxEvent {
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::string style;  // "PushPop", "StartEnd" or "Mark"
  std::string text;
  std::string domain;  // "" = default domain
  std::int64_t start_ns = 0;
  std::optional<std::int64_t> end_ns;  // nullopt for marks and ranges never closed
  // A range gpuscope's PyTorch hooks made (trace --pytorch): "cpu_op" (an operator call:
  // text is its name) or "python_function" (a module forward), as torch.profiler's trace
  // names them; "" for the program's own NVTX.
  std::string pytorch_kind;
  std::optional<std::int64_t> seq;  // an operator's autograd sequence number
  std::string sizes;                // an operator's input shapes (--pytorch=ops,shapes)
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
  /// True when the API call that launched it (same pid and correlation_id, not 0) is in
  /// the trace. Set by the source or link_launches(), as ApiCallEvent's flag.
  bool launch_traced = false;
};

struct KernelEvent : GpuEventBase {
  std::string name;                     // demangled name
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

/// Device memory in use on one physical GPU just after an allocation or free, summed over
/// the processes on it (core/memory_usage.hpp GpuMemorySum over memory_events.in_use_bytes):
/// one sample of the GPU's "memory in use" counter.
struct MemoryCounterEvent {
  std::int64_t gpu_index = 0;
  std::int64_t ts_ns = 0;
  std::int64_t in_use_bytes = 0;
};

/// Everything but the events: the time base, the processes, threads and GPUs.
struct TimelineHeader {
  /// Earliest timestamp in the trace (ns): the smallest of every event start,
  /// process start and capture window start; 0 for an empty trace. Exporters
  /// write times relative to it.
  std::int64_t base_ns = 0;
  std::vector<TimelineProcess> processes;  // sorted by pid
  std::vector<TimelineThread> threads;
  std::vector<TimelineDevice> devices;  // one per (pid, device_id), sorted by gpu_index
};

/// The whole trace in memory. Memory grows with the number of events (about 200 bytes
/// each, plus names): for tests and small traces; exporters stream (TimelineEvents).
struct Timeline : TimelineHeader {
  // CPU events, each vector sorted by start_ns.
  std::vector<ApiCallEvent> api_calls;
  std::vector<NvtxEvent> nvtx;
  std::vector<SyncEvent> syncs;
  // GPU events, each vector sorted by start_ns.
  std::vector<KernelEvent> kernels;
  std::vector<MemcpyEvent> memcpys;
  std::vector<MemsetEvent> memsets;
  // Memory in use per GPU (trace --cuda-memory-usage), sorted by ts_ns.
  std::vector<MemoryCounterEvent> memory;
};

/// One GPU stream some process used: a track of the timeline.
struct TimelineStream {
  std::int64_t gpu_index = 0;
  std::int64_t pid = 0;
  std::int64_t stream_id = 0;
  friend auto operator<=>(const TimelineStream&, const TimelineStream&) = default;
};

/// The NCCL kernels of one process on one GPU (a rank's communication lane): kernels whose
/// name core::parse_nccl_kernel recognises (core/nccl.hpp).
struct NcclLane {
  std::int64_t pid = 0;
  std::int64_t gpu_index = 0;
  std::int64_t kernels = 0;  // how many
  friend auto operator<=>(const NcclLane&, const NcclLane&) = default;
};

/// The tracks the events fall on and the trace's end: what an exporter needs before it
/// writes the first event. Its size grows with processes, threads and streams, never
/// with the number of events.
struct TimelineTracks {
  /// Latest timestamp (ns): the largest of base_ns, every event end (the start of an
  /// NVTX mark or of a range never closed, a memory sample's time) and every process end.
  std::int64_t end_ns = 0;
  /// Every pid with a process row or any event, ascending, without repeats.
  std::vector<std::int64_t> pids;
  /// Every (pid, tid) with an API call, NVTX event or sync (a sync whose thread is
  /// unknown counts on (pid, pid)), ascending, without repeats.
  std::vector<std::pair<std::int64_t, std::int64_t>> cpu_threads;
  /// Every stream with a kernel, memcpy or memset, ascending, without repeats.
  std::vector<TimelineStream> gpu_streams;
  /// Every (pid, GPU) with NCCL kernels, ascending by (pid, gpu_index): the k-th NCCL kernel
  /// of each lane is taken as the same collective instance (an exporter joins them).
  std::vector<NcclLane> nccl_lanes;
};

/// A source of events, each kind in time order (start_ns, then trace order), with the
/// launch flags set. Every call visits every event of its kind once; memory held
/// between calls is the source's business (a trace database source holds one row).
/// Errors: whatever the source throws (store::DatabaseError for a trace database).
class TimelineEvents {
 public:
  template <typename Event>
  using Visitor = std::function<void(const Event&)>;
  virtual ~TimelineEvents() = default;
  virtual void api_calls(const Visitor<ApiCallEvent>& visit) = 0;
  virtual void nvtx(const Visitor<NvtxEvent>& visit) = 0;
  virtual void syncs(const Visitor<SyncEvent>& visit) = 0;
  virtual void kernels(const Visitor<KernelEvent>& visit) = 0;
  virtual void memcpys(const Visitor<MemcpyEvent>& visit) = 0;
  virtual void memsets(const Visitor<MemsetEvent>& visit) = 0;
  virtual void memory(const Visitor<MemoryCounterEvent>& visit) = 0;
};

/// The events of an in-memory Timeline, in vector order (the Timeline must outlive it).
class TimelineVectors final : public TimelineEvents {
 public:
  explicit TimelineVectors(const Timeline& timeline) : m_tl(timeline) {}
  void api_calls(const Visitor<ApiCallEvent>& visit) override { each(m_tl.api_calls, visit); }
  void nvtx(const Visitor<NvtxEvent>& visit) override { each(m_tl.nvtx, visit); }
  void syncs(const Visitor<SyncEvent>& visit) override { each(m_tl.syncs, visit); }
  void kernels(const Visitor<KernelEvent>& visit) override { each(m_tl.kernels, visit); }
  void memcpys(const Visitor<MemcpyEvent>& visit) override { each(m_tl.memcpys, visit); }
  void memsets(const Visitor<MemsetEvent>& visit) override { each(m_tl.memsets, visit); }
  void memory(const Visitor<MemoryCounterEvent>& visit) override { each(m_tl.memory, visit); }

 private:
  template <typename Event>
  static void each(const std::vector<Event>& events, const Visitor<Event>& visit) {
    for (const Event& e : events) visit(e);
  }
  const Timeline& m_tl;
};

/// The tracks and end of an in-memory Timeline, from its vectors (same rules as
/// analyze::load_timeline_tracks on a trace database).
[[nodiscard]] TimelineTracks timeline_tracks(const Timeline& timeline);

/// Sets the launch flags of every event from the vectors (ApiCallEvent::
/// launched_traced_gpu_work: the first call in vector order per (pid, correlation_id);
/// GpuEventBase::launch_traced), for a Timeline built by hand.
void link_launches(Timeline& timeline);

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
