#include "render/timeline_layout.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/metric_attribution.hpp"
#include "core/nccl.hpp"
#include "core/occupancy.hpp"
#include "core/request_spans.hpp"
#include "core/saturating.hpp"
#include "core/timeline_labels.hpp"

namespace gpuscope::render {
namespace {

using Json = TimelineSink::Json;

constexpr std::int64_t kGpuTidStride = 1'000'000;                    // see "Several processes on one GPU"
constexpr std::int64_t kGpuSortIndexBase = 1'000'000;                // GPU rows after every CPU process
constexpr std::int64_t kUnrankedSortIndexBase = 500'000;             // ranked processes first, by rank
constexpr std::int64_t kLaneTidBase = 4'000'000'000;                 // a rank's GPU lanes: above any OS tid, < 2^32
constexpr std::int64_t kCollectiveFlowBase = std::int64_t{1} << 52;  // above every ac2g flow id, < 2^53
constexpr std::int64_t kMaxCollectiveLanes = std::int64_t{1} << 16;  // lanes one collective flow id space holds
constexpr std::int64_t kRequestsPid = 2'000'000'000;  // bench serve's requests: no OS or merged pid, < 2^31

std::string sync_name(std::string_view type) {
  if (type == "event_synchronize") return "Event Sync";
  if (type == "stream_wait_event") return "Stream Wait Event";
  if (type == "stream_synchronize") return "Stream Sync";
  if (type == "context_synchronize") return "Context Sync";
  return "Unknown Sync";
}

class Writer {
 public:
  Writer(const TimelineHeader& header, const TimelineTracks& tracks, TimelineSink& sink)
      : m_tl(header), m_tracks(tracks), m_sink(sink), m_args(sink.wants_args()) {
    index();
  }

  void write(TimelineEvents& events, PythonSampleSource* python) {
    m_sink.begin();
    write_metadata();
    events.api_calls([this](const ApiCallEvent& e) { write_api_call(e); });
    events.nvtx([this](const NvtxEvent& e) { write_nvtx(e); });
    events.syncs([this](const SyncEvent& e) { write_sync(e); });
    events.kernels([this](const KernelEvent& e) { write_kernel(e); });
    events.memcpys([this](const MemcpyEvent& e) { write_memcpy(e); });
    events.memsets([this](const MemsetEvent& e) { write_memset(e); });
    events.memory([this](const MemoryCounterEvent& e) { write_memory(e); });
    // Sampled GPU metrics come from a source that has them beside its timeline events
    // (core/timeline.hpp's TimelineEvents has no visitor for them).
    if (auto* metrics = dynamic_cast<GpuMetricCounterSource*>(&events))
      metrics->gpu_metric_counters([this](const GpuMetricCounterEvent& e) { write_gpu_metric(e); });
    // Requests a load generator sent to the traced server (the trace's requests table).
    if (auto* requests = dynamic_cast<RequestSpanSource*>(&events))
      requests->request_spans([this](const RequestSpanEvent& e) { write_request(e); });
    // Python stack samples (trace --python-sampling), on their threads' rows.
    if (python == nullptr) python = dynamic_cast<PythonSampleSource*>(&events);
    if (python != nullptr) python->python_samples([this](const PythonSampleEvent& e) { m_sink.python_sample(e); });
    m_sink.end();
  }

 private:
  // --- indexing: per process, thread and stream only, never per event ---------
  void index() {
    std::int64_t ordinal = 0;
    for (std::int64_t pid : m_tracks.pids) m_ordinal[pid] = ordinal++;
    m_single_process = m_tracks.pids.size() <= 1;
    for (const TimelineStream& s : m_tracks.gpu_streams) m_gpu_pids[s.gpu_index].insert(s.pid);
    for (const auto& d : m_tl.devices) m_devices[{d.pid, d.device_id}] = &d;
    m_trace_end = m_tracks.end_ns;
    for (const auto& p : m_tl.processes) {
      m_process_end[p.pid] = p.end_ns;
      m_process[p.pid] = &p;
      if (p.rank) m_ranked = true;
    }
    // A rank's GPU work goes in its own process group: one lane per stream and one for its
    // NCCL kernels per GPU, numbered from kLaneTidBase.
    std::int64_t lane = kLaneTidBase;
    for (const TimelineStream& s : m_tracks.gpu_streams)
      if (ranked(s.pid)) m_lane_tid[{s.gpu_index, s.pid, s.stream_id}] = lane++;
    for (const NcclLane& l : m_tracks.nccl_lanes) {
      m_nccl_tid[{l.pid, l.gpu_index}] = ranked(l.pid) ? lane++ : unranked_nccl_tid(l.gpu_index, l.pid);
      m_nccl_counts.push_back(l.kernels);
    }
    std::sort(m_nccl_counts.begin(), m_nccl_counts.end(), std::greater<>());
  }

  // A process whose GPU work has a process group of its own (the trace has ranks, it has one).
  bool ranked(std::int64_t pid) const {
    if (!m_ranked) return false;
    const auto it = m_process.find(pid);
    return it != m_process.end() && it->second->rank.has_value();
  }

  // The NCCL lane of a process without a rank, on its GPU's row: after the streams.
  std::int64_t unranked_nccl_tid(std::int64_t gpu_index, std::int64_t pid) const {
    return gpu_shared(gpu_index) ? (ordinal(pid) + 1) * kGpuTidStride + (kGpuTidStride - 1) : kGpuTidStride - 1;
  }

  // Where a GPU activity is drawn: (pid, tid) of its row.
  std::pair<std::int64_t, std::int64_t> gpu_track(const GpuEventBase& e, bool nccl) const {
    if (nccl) {
      const auto it = m_nccl_tid.find({e.pid, e.gpu_index});
      if (it != m_nccl_tid.end()) return {ranked(e.pid) ? e.pid : e.gpu_index, it->second};
    }
    if (ranked(e.pid)) {
      const auto it = m_lane_tid.find({e.gpu_index, e.pid, e.stream_id});
      if (it != m_lane_tid.end()) return {e.pid, it->second};
    }
    return {e.gpu_index, gpu_tid(e.gpu_index, e.pid, e.stream_id)};
  }

  bool gpu_shared(std::int64_t gpu_index) const {
    const auto it = m_gpu_pids.find(gpu_index);
    return it != m_gpu_pids.end() && it->second.size() > 1;
  }

  // The ordinal of a pid the tracks list; a source whose events disagree with its tracks
  // is a bug, named rather than crashed on.
  std::int64_t ordinal(std::int64_t pid) const {
    const auto it = m_ordinal.find(pid);
    if (it == m_ordinal.end())
      throw std::logic_error("timeline: pid " + std::to_string(pid) + " has events but is not among the tracks");
    return it->second;
  }

  std::int64_t gpu_tid(std::int64_t gpu_index, std::int64_t pid, std::int64_t stream_id) const {
    if (!gpu_shared(gpu_index)) return stream_id;
    return (ordinal(pid) + 1) * kGpuTidStride + stream_id;
  }

  std::int64_t flow_id(std::int64_t pid, std::int64_t correlation_id) const {
    if (m_single_process) return correlation_id;
    return ((ordinal(pid) + 1) << 32) + correlation_id;
  }

  void meta(std::string_view name, std::int64_t pid, std::int64_t tid, const Json& args) {
    m_sink.meta(name, pid, tid, args);
  }

  void write_metadata() {
    // CPU processes.
    for (const auto& [pid, ordinal] : m_ordinal) {
      const std::string label = process_label(m_tl, pid);
      std::optional<std::int64_t> rank;
      if (const auto it = m_process.find(pid); it != m_process.end()) rank = it->second->rank;
      if (ranked(pid)) {
        // One group per rank: "rank 3 (node2, GPU 1)", the command in its labels.
        meta("process_name", pid, 0, Json{{"name", rank_label(pid, *rank)}});
        meta("process_labels", pid, 0, Json{{"labels", label}});
        meta("process_sort_index", pid, 0, Json{{"sort_index", *rank}});
        continue;
      }
      meta("process_name", pid, 0, Json{{"name", label}});
      meta("process_sort_index", pid, 0, Json{{"sort_index", m_ranked ? kUnrankedSortIndexBase + ordinal : ordinal}});
    }
    // CPU threads that have events.
    const auto& threads = m_tracks.cpu_threads;
    for (const auto& [pid, tid] : threads) {
      meta("thread_name", pid, tid, Json{{"name", thread_label(m_tl, pid, tid)}});
      // Main thread (tid == pid) first, others by tid.
      meta("thread_sort_index", pid, tid, Json{{"sort_index", tid == pid ? 0 : tid}});
    }
    // GPUs and their streams.
    std::map<std::int64_t, std::string> gpus;
    for (const auto& d : m_tl.devices) gpus.emplace(d.gpu_index, d.name);
    std::map<std::pair<std::int64_t, std::int64_t>, std::pair<std::int64_t, std::int64_t>> streams;
    for (const TimelineStream& st : m_tracks.gpu_streams) {
      if (ranked(st.pid)) {
        const std::int64_t tid = m_lane_tid.at({st.gpu_index, st.pid, st.stream_id});
        meta("thread_name", st.pid, tid,
             Json{{"name", "GPU " + std::to_string(st.gpu_index) + " stream " + std::to_string(st.stream_id)}});
        meta("thread_sort_index", st.pid, tid, Json{{"sort_index", tid}});
        continue;
      }
      gpus.emplace(st.gpu_index, "");
      streams.emplace(std::pair{st.gpu_index, gpu_tid(st.gpu_index, st.pid, st.stream_id)},
                      std::pair{st.pid, st.stream_id});
    }
    for (const auto& [gpu, name] : gpus) {
      // With ranks, a GPU row holds only the work of processes without one (and counters,
      // which name it when they come: gpu_group()).
      const std::int64_t this_gpu = gpu;  // clang 14 cannot capture a structured binding
      if (m_ranked &&
          !std::any_of(streams.begin(), streams.end(), [this_gpu](const auto& s) { return s.first.first == this_gpu; }))
        continue;
      gpu_group(gpu);
    }
    for (const auto& [key, owner] : streams) {
      const auto& [gpu, tid] = key;
      meta("thread_name", gpu, tid, Json{{"name", stream_label(owner.second, owner.first, gpu_shared(gpu))}});
      meta("thread_sort_index", gpu, tid, Json{{"sort_index", tid}});
    }
    // NCCL lanes: a rank's per GPU in its group; otherwise on the GPU's row.
    for (const NcclLane& l : m_tracks.nccl_lanes) {
      const std::int64_t tid = m_nccl_tid.at({l.pid, l.gpu_index});
      std::string name = "NCCL";
      std::int64_t pid = l.gpu_index;
      if (ranked(l.pid)) {
        name = "GPU " + std::to_string(l.gpu_index) + " NCCL";
        pid = l.pid;
      } else {
        gpu_group(l.gpu_index);
        if (gpu_shared(l.gpu_index)) name += " (pid " + std::to_string(l.pid) + ")";
      }
      meta("thread_name", pid, tid, Json{{"name", name}});
      meta("thread_sort_index", pid, tid, Json{{"sort_index", tid}});
    }
  }

  // The process group of GPU `gpu` (name, label, sort index), written once.
  void gpu_group(std::int64_t gpu) {
    if (!m_gpu_named.insert(gpu).second) return;
    std::string name;
    for (const auto& d : m_tl.devices)
      if (d.gpu_index == gpu && name.empty()) name = d.name;
    meta("process_name", gpu, 0, Json{{"name", "GPU " + std::to_string(gpu)}});
    if (!name.empty()) meta("process_labels", gpu, 0, Json{{"labels", name}});
    meta("process_sort_index", gpu, 0, Json{{"sort_index", kGpuSortIndexBase + gpu}});
  }

  // "rank 3 (node2, GPU 1)": host and the GPUs the process worked on (else those it saw).
  std::string rank_label(std::int64_t pid, std::int64_t rank) const {
    std::set<std::int64_t> gpus;
    for (const TimelineStream& s : m_tracks.gpu_streams)
      if (s.pid == pid) gpus.insert(s.gpu_index);
    if (gpus.empty())
      for (const auto& d : m_tl.devices)
        if (d.pid == pid) gpus.insert(d.gpu_index);
    std::vector<std::string> parts;
    if (const auto it = m_process.find(pid); it != m_process.end() && !it->second->host.empty())
      parts.push_back(it->second->host);
    if (!gpus.empty()) {
      std::string g = gpus.size() == 1 ? "GPU " : "GPUs ";
      bool first = true;
      for (std::int64_t i : gpus) {
        g += (first ? "" : ",") + std::to_string(i);
        first = false;
      }
      parts.push_back(g);
    }
    std::string label = "rank " + std::to_string(rank);
    for (std::size_t i = 0; i < parts.size(); ++i) label += (i == 0 ? " (" : ", ") + parts[i];
    return parts.empty() ? label : label + ")";
  }

  // --- events -------------------------------------------------------------
  void complete(std::string_view cat, std::string_view name, std::int64_t pid, std::int64_t tid, std::int64_t start,
                std::int64_t end, const Json& args) {
    m_sink.complete(cat, name, pid, tid, start, end, args);
  }

  void flow(char phase, std::int64_t id, std::int64_t pid, std::int64_t tid, std::int64_t at,
            std::string_view cat = "ac2g") {
    m_sink.flow(phase, id, pid, tid, at, cat);
  }

  // The k-th NCCL kernel of every lane is one collective instance: its kernels are chained
  // in the order they start (an arrow from each to the next), so the last to start, the one
  // the others waited for, ends the chain. Held per instance still open, never per event.
  void collective_flow(const GpuEventBase& e, std::pair<std::int64_t, std::int64_t> track) {
    const std::int64_t k = m_nccl_seen[{e.pid, e.gpu_index}]++;
    // Lanes that have a k-th NCCL kernel (counts sorted in descending order).
    const auto lanes = static_cast<std::int64_t>(
        std::upper_bound(m_nccl_counts.begin(), m_nccl_counts.end(), k, std::greater<>()) - m_nccl_counts.begin());
    if (lanes < 2 || lanes > kMaxCollectiveLanes) return;
    const std::int64_t arrival = ++m_arrivals[k];  // 1 = the first to start
    const std::int64_t id = kCollectiveFlowBase + k * kMaxCollectiveLanes;
    if (arrival > 1) flow('f', id + arrival - 2, track.first, track.second, e.start_ns, "nccl");
    if (arrival < lanes) flow('s', id + arrival - 1, track.first, track.second, e.start_ns, "nccl");
    if (arrival >= lanes) m_arrivals.erase(k);
  }

  void write_api_call(const ApiCallEvent& e) {
    Json args;
    if (m_args) {
      args = Json{{"cbid", e.cbid}, {"correlation", e.correlation_id}};
      if (e.return_value != 0) args["return value"] = e.return_value;
      if (!e.python_stack.empty()) args["Python stack"] = e.python_stack;
    }
    complete(e.is_driver ? "cuda_driver" : "cuda_runtime", e.name, e.pid, e.tid, e.start_ns, e.end_ns, args);
    // One flow start per launch, even when it launched several GPU activities
    // (a graph launch): each of those gets its own "f" with the same id, as Kineto.
    if (e.launched_traced_gpu_work) flow('s', flow_id(e.pid, e.correlation_id), e.pid, e.tid, e.start_ns);
  }

  void write_nvtx(const NvtxEvent& e) {
    Json args = Json::object();
    if (!e.domain.empty()) args["domain"] = e.domain;
    if (e.is_mark()) {
      m_sink.instant("user_annotation", e.text, e.pid, e.tid, e.start_ns, args);
      return;
    }
    std::int64_t end = e.end_ns.value_or(0);
    if (!e.end_ns) {
      const auto it = m_process_end.find(e.pid);
      end = (it != m_process_end.end() && it->second) ? *it->second : m_trace_end;
      args["unclosed"] = true;
    }
    if (e.seq) args["Sequence number"] = *e.seq;  // torch.profiler's argument names
    if (!e.sizes.empty()) args["Input Dims"] = e.sizes;
    complete(e.pytorch_kind.empty() ? std::string_view("user_annotation") : std::string_view(e.pytorch_kind), e.text,
             e.pid, e.tid, e.start_ns, end, args);
  }

  void write_sync(const SyncEvent& e) {
    Json args{{"cuda_sync_kind", e.sync_type}, {"context", e.context_id}, {"correlation", e.correlation_id}};
    if (e.stream_id) args["stream"] = *e.stream_id;
    if (e.event_id) args["event"] = *e.event_id;
    complete("cuda_sync", sync_name(e.sync_type), e.pid, e.tid.value_or(e.pid), e.start_ns, e.end_ns, args);
  }

  Json gpu_args(const GpuEventBase& e) const {
    return Json{
        {"device", e.device_id}, {"context", e.context_id}, {"stream", e.stream_id}, {"correlation", e.correlation_id}};
  }

  void gpu_event(std::string_view cat, std::string_view name, const GpuEventBase& e, const Json& args,
                 bool nccl = false) {
    const auto track = gpu_track(e, nccl);
    complete(cat, name, track.first, track.second, e.start_ns, e.end_ns, args);
    if (e.launch_traced) flow('f', flow_id(e.pid, e.correlation_id), track.first, track.second, e.start_ns);
    if (nccl) collective_flow(e, track);
  }

  Json kernel_args(const KernelEvent& e) const {
    Json args{{"queued", 0}};
    args.update(gpu_args(e));
    args["registers per thread"] = e.registers_per_thread;
    // Values from the trace: a damaged one may overflow the sum (null then, never UB).
    std::int64_t shared = 0;
    if (__builtin_add_overflow(e.static_shared_memory, e.dynamic_shared_memory, &shared)) {
      args["shared memory"] = nullptr;
    } else {
      args["shared memory"] = shared;
    }
    const auto dev = m_devices.find({e.pid, e.device_id});
    if (dev != m_devices.end() && dev->second->sm_count > 0) {
      // 0 for an unknown or overflowing grid (core/occupancy.hpp).
      const double blocks = static_cast<double>(occupancy::dims_product(e.grid[0], e.grid[1], e.grid[2]));
      const std::int64_t threads = occupancy::dims_product(e.block[0], e.block[1], e.block[2]);
      const double blocks_per_sm = blocks / static_cast<double>(dev->second->sm_count);
      // Warps are allocated whole: a 48-thread block occupies 2 warps.
      args["blocks per SM"] = blocks_per_sm;
      args["warps per SM"] = blocks_per_sm * static_cast<double>((threads + 31) / 32);
    }
    args["grid"] = Json::array({e.grid[0], e.grid[1], e.grid[2]});
    args["block"] = Json::array({e.block[0], e.block[1], e.block[2]});
    return args;
  }

  void write_kernel(const KernelEvent& e) {
    Json args;
    if (m_args) args = kernel_args(e);
    // NCCL kernels: on their lane (with tracks that list it), joined across ranks.
    const bool nccl =
        !m_nccl_tid.empty() && parse_nccl_kernel(e.name).has_value() && m_nccl_tid.contains({e.pid, e.gpu_index});
    gpu_event("kernel", e.name, e, args, nccl);
  }

  Json transfer_args(const GpuEventBase& e, std::int64_t bytes) const {
    Json args = gpu_args(e);
    args["bytes"] = bytes;
    // bytes per ns = GB/s; left out for a zero-length record (no division by zero).
    if (e.end_ns > e.start_ns)
      args["memory bandwidth (GB/s)"] =
          static_cast<double>(bytes) / static_cast<double>(core::sat_sub(e.end_ns, e.start_ns));
    return args;
  }

  void write_memcpy(const MemcpyEvent& e) {
    gpu_event("gpu_memcpy", memcpy_name(e), e, m_args ? transfer_args(e, e.bytes) : Json());
  }

  void write_memset(const MemsetEvent& e) {
    gpu_event("gpu_memset", memset_name(e), e, m_args ? transfer_args(e, e.bytes) : Json());
  }

  // A counter sample on the GPU's row; Perfetto draws one track per name (and argument).
  void write_memory(const MemoryCounterEvent& e) {
    if (m_ranked) gpu_group(e.gpu_index);
    m_sink.counter("gpu_memory", "memory in use (device " + std::to_string(e.gpu_index) + ")", e.gpu_index, e.ts_ns,
                   "bytes", Json(e.in_use_bytes));
  }

  // One point of a sampled metric's counter track on the GPU's row.
  void write_gpu_metric(const GpuMetricCounterEvent& e) {
    if (m_ranked) gpu_group(e.gpu_index);
    m_sink.counter("gpu_metrics", e.track, e.gpu_index, e.ts_ns, "value", Json(e.value));
  }

  // A request on the "requests" group (first in the sort order): concurrent requests on
  // separate lanes, each on the first lane free at its start (requests come in start order),
  // so slices never overlap on a row; the first token as an instant on the same lane.
  void write_request(const RequestSpanEvent& e) {
    if (m_request_lane_end.empty()) {
      m_sink.meta("process_name", kRequestsPid, 0, Json{{"name", "requests (gpuscope bench serve)"}});
      m_sink.meta("process_sort_index", kRequestsPid, 0, Json{{"sort_index", -1}});
    }
    std::size_t lane = 0;
    while (lane < m_request_lane_end.size() && m_request_lane_end[lane] > e.start_ns) ++lane;
    if (lane == m_request_lane_end.size()) {
      m_request_lane_end.push_back(e.start_ns);
      const auto tid = static_cast<std::int64_t>(lane) + 1;
      m_sink.meta("thread_name", kRequestsPid, tid, Json{{"name", "requests, lane " + std::to_string(tid)}});
      m_sink.meta("thread_sort_index", kRequestsPid, tid, Json{{"sort_index", tid}});
    }
    const std::int64_t end = std::max(e.end_ns, e.start_ns);
    m_request_lane_end[lane] = end;
    const auto tid = static_cast<std::int64_t>(lane) + 1;
    Json args;
    if (m_args) {
      args["request"] = e.request;
      if (e.first_token_ns) args["ttft_ms"] = static_cast<double>(*e.first_token_ns - e.start_ns) / 1e6;
      args["prompt_tokens"] = e.prompt_tokens;
      args["output_tokens"] = e.output_tokens;
      if (e.warmup) args["warmup"] = true;
      args["new_connection"] = e.new_connection;
      if (!e.error.empty()) args["error"] = e.error;
    }
    m_sink.complete("request", e.request, kRequestsPid, tid, e.start_ns, end, args);
    if (e.first_token_ns)
      m_sink.instant("request", "first token", kRequestsPid, tid, *e.first_token_ns, Json::object());
  }

  const TimelineHeader& m_tl;
  const TimelineTracks& m_tracks;
  TimelineSink& m_sink;
  const bool m_args;                             // the sink writes event arguments: build them
  std::vector<std::int64_t> m_request_lane_end;  // per requests lane: the end of its last request
  bool m_single_process = true;
  std::int64_t m_trace_end = 0;
  std::map<std::int64_t, std::int64_t> m_ordinal;             // pid → index in pid order
  std::map<std::int64_t, std::set<std::int64_t>> m_gpu_pids;  // gpu_index → pids with GPU work
  std::map<std::pair<std::int64_t, std::int64_t>, const TimelineDevice*> m_devices;
  std::map<std::int64_t, std::optional<std::int64_t>> m_process_end;
  std::map<std::int64_t, const TimelineProcess*> m_process;                                 // by pid
  bool m_ranked = false;                                                                    // some process has a rank
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::int64_t> m_lane_tid;  // (gpu, pid, stream)
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> m_nccl_tid;                 // (pid, gpu) → tid
  std::vector<std::int64_t> m_nccl_counts;                                    // NCCL kernels per lane, descending
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> m_nccl_seen;  // (pid, gpu) → NCCL kernels so far
  std::map<std::int64_t, std::int64_t> m_arrivals;  // collective instance → lanes seen so far
  std::set<std::int64_t> m_gpu_named;               // GPU groups whose metadata is written
};

}  // namespace

void write_timeline(const TimelineHeader& header, const TimelineTracks& tracks, TimelineEvents& events,
                    TimelineSink& sink, PythonSampleSource* python) {
  Writer(header, tracks, sink).write(events, python);
}

}  // namespace gpuscope::render
