// Test helper: a TimelineEvents source that forwards every event kind to a Timeline's
// vectors (core::TimelineVectors), so that a test source adding one optional kind (request
// spans, GPU metric counters) writes only that kind:
//
//   class WithRequests final : public test::ForwardingTimeline, public RequestSpanSource { ... };
#pragma once

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

}  // namespace gpuscope::test
