// Test helper: a TimelineEvents source that forwards every event kind to a Timeline's
// vectors (core::TimelineVectors), so that a test source adding one optional kind (request
// spans, GPU metric counters) writes only that kind:
//
//   class WithRequests final : public test::ForwardingWith<RequestSpanSource, RequestSpanEvent> { ... };
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/timeline.hpp"

namespace gpuscope::test {

class ForwardingTimeline : public TimelineEvents {
 public:
  explicit ForwardingTimeline(const Timeline& tl) : m_v(tl) {}
  void api_calls(const Visitor<ApiCallEvent>& visit) override { m_v.api_calls(visit); }
  void nvtx(const Visitor<NvtxEvent>& visit) override { m_v.nvtx(visit); }
  void syncs(const Visitor<SyncEvent>& visit) override { m_v.syncs(visit); }
  void kernels(const Visitor<KernelEvent>& visit) override { m_v.kernels(visit); }
  void memcpys(const Visitor<MemcpyEvent>& visit) override { m_v.memcpys(visit); }
  void memsets(const Visitor<MemsetEvent>& visit) override { m_v.memsets(visit); }
  void memory(const Visitor<MemoryCounterEvent>& visit) override { m_v.memory(visit); }

 private:
  TimelineVectors m_v;
};

/// A ForwardingTimeline that is also a `Source` of one optional kind, holding its `Event`s;
/// the subclass's override of Source's visitor calls visit_all.
template <class Source, class Event>
class ForwardingWith : public ForwardingTimeline, public Source {
 public:
  ForwardingWith(const Timeline& tl, std::vector<Event> events) : ForwardingTimeline(tl), m_events(std::move(events)) {}

 protected:
  void visit_all(const std::function<void(const Event&)>& visit) const {
    for (const Event& e : m_events) visit(e);
  }

 private:
  std::vector<Event> m_events;
};

/// One process `pid` ("process", from base_ns to 5 ms after) with one kernel `kernel` on
/// stream 7 of GPU 0, [1.5, 1.6] ms after base_ns.
inline Timeline one_kernel_timeline(std::int64_t base_ns, std::int64_t pid, std::string_view process,
                                    std::string_view kernel) {
  Timeline tl;
  tl.base_ns = base_ns;
  tl.processes.push_back({.pid = pid,
                          .name = std::string(process),
                          .cmdline = std::string(process),
                          .start_ns = base_ns,
                          .end_ns = base_ns + 5'000'000});
  tl.devices.push_back({.pid = pid, .device_id = 0, .name = "NVIDIA H100"});
  KernelEvent k;
  k.pid = pid;
  k.stream_id = 7;
  k.correlation_id = 1;
  k.start_ns = base_ns + 1'500'000;
  k.end_ns = base_ns + 1'600'000;
  k.name = std::string(kernel);
  k.grid = {1, 1, 1};
  k.block = {32, 1, 1};
  tl.kernels.push_back(k);
  return tl;
}

}  // namespace gpuscope::test
