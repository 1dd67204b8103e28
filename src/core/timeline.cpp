#include "core/timeline.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/nccl.hpp"

namespace gpuscope::core {
namespace {

template <typename T>
std::vector<T> sorted(const std::set<T>& s) {
  return {s.begin(), s.end()};
}

}  // namespace

TimelineTracks timeline_tracks(const Timeline& tl) {
  TimelineTracks t;
  std::set<std::int64_t> pids;
  std::set<std::pair<std::int64_t, std::int64_t>> threads;
  std::set<TimelineStream> streams;
  std::int64_t end = tl.base_ns;
  auto end_at = [&end](std::int64_t ns) { end = std::max(end, ns); };

  for (const auto& p : tl.processes) {
    pids.insert(p.pid);
    if (p.end_ns) end_at(*p.end_ns);
  }
  for (const auto& e : tl.api_calls) {
    threads.insert({e.pid, e.tid});
    end_at(e.end_ns);
  }
  for (const auto& e : tl.nvtx) {
    threads.insert({e.pid, e.tid});
    end_at(e.end_ns.value_or(e.start_ns));
  }
  for (const auto& e : tl.syncs) {
    threads.insert({e.pid, e.tid.value_or(e.pid)});
    end_at(e.end_ns);
  }
  auto add_gpu = [&](const GpuEventBase& e) {
    streams.insert({e.gpu_index, e.pid, e.stream_id});
    end_at(e.end_ns);
  };
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> nccl;  // (pid, gpu_index) -> kernels
  for (const auto& e : tl.kernels) {
    add_gpu(e);
    if (parse_nccl_kernel(e.name)) ++nccl[{e.pid, e.gpu_index}];
  }
  for (const auto& e : tl.memcpys) add_gpu(e);
  for (const auto& e : tl.memsets) add_gpu(e);
  for (const auto& e : tl.memory) end_at(e.ts_ns);

  for (const auto& [pid, tid] : threads) pids.insert(pid);
  for (const auto& s : streams) pids.insert(s.pid);
  t.end_ns = end;
  t.pids = sorted(pids);
  t.cpu_threads = sorted(threads);
  t.gpu_streams = sorted(streams);
  for (const auto& [lane, n] : nccl) t.nccl_lanes.push_back({lane.first, lane.second, n});
  return t;
}

void link_launches(Timeline& tl) {
  using Key = std::pair<std::int64_t, std::int64_t>;  // (pid, correlation_id)
  std::set<Key> gpu_work;
  auto note = [&gpu_work](const GpuEventBase& e) {
    if (e.correlation_id != 0) gpu_work.insert({e.pid, e.correlation_id});
  };
  for (const auto& e : tl.kernels) note(e);
  for (const auto& e : tl.memcpys) note(e);
  for (const auto& e : tl.memsets) note(e);

  std::set<Key> launches;  // every (pid, correlation_id) of an API call
  for (auto& a : tl.api_calls) {
    a.launched_traced_gpu_work = false;
    if (a.correlation_id == 0) continue;
    const bool first = launches.insert({a.pid, a.correlation_id}).second;
    a.launched_traced_gpu_work = first && gpu_work.count({a.pid, a.correlation_id}) > 0;
  }
  auto link = [&launches](GpuEventBase& e) {
    e.launch_traced = e.correlation_id != 0 && launches.count({e.pid, e.correlation_id}) > 0;
  };
  for (auto& e : tl.kernels) link(e);
  for (auto& e : tl.memcpys) link(e);
  for (auto& e : tl.memsets) link(e);
}

}  // namespace gpuscope::core
