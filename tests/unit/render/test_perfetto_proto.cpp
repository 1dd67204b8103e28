// render/perfetto_proto.hpp: the .pftrace holds what the Chrome JSON of the same timeline
// holds (slices by category and name, instants, counters, flows, process and thread names),
// read back with the protobuf library's parser; names are interned once.
#include "render/perfetto_proto.hpp"

#include <algorithm>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "pftrace_summary.hpp"
#include "render/perfetto_json.hpp"

namespace gpuscope::render {
namespace {

constexpr std::int64_t kBase = 1'700'000'000'000'000'000;  // realistic CLOCK_REALTIME ns

KernelEvent kernel(std::int64_t pid, std::int64_t gpu, std::int64_t stream, std::int64_t corr, std::int64_t start,
                   std::int64_t end, std::string name) {
  KernelEvent k;
  k.pid = pid;
  k.gpu_index = gpu;
  k.stream_id = stream;
  k.correlation_id = corr;
  k.start_ns = kBase + start;
  k.end_ns = kBase + end;
  k.name = std::move(name);
  return k;
}

// Two ranks (own process groups, NCCL lanes, collective flows) and a process without a
// rank sharing GPU 0 with rank 0; API calls launching kernels (flows), NVTX ranges, a mark
// and an unclosed range, a sync, a memcpy, a memset and memory-in-use counters.
Timeline synthetic() {
  Timeline tl;
  tl.base_ns = kBase;
  tl.processes.push_back({.pid = 10, .name = "python3", .rank = 0, .host = "node1"});
  tl.processes.push_back({.pid = 20, .name = "python3", .rank = 1, .host = "node2"});
  tl.processes.push_back({.pid = 30, .name = "helper", .end_ns = kBase + 90'000});
  tl.threads.push_back({10, 11, "loader"});
  for (std::int64_t pid : {10, 20, 30}) {
    const std::int64_t gpu = pid == 20 ? 1 : 0;
    TimelineDevice d;
    d.pid = pid;
    d.gpu_index = gpu;
    d.name = "NVIDIA H100 80GB HBM3";
    d.sm_count = 132;
    tl.devices.push_back(d);
    for (std::int64_t i = 0; i < 3; ++i) {
      const std::int64_t corr = 100 + i;
      tl.api_calls.push_back({.pid = pid,
                              .tid = i == 2 && pid == 10 ? 11 : pid,
                              .name = "cudaLaunchKernel",
                              .cbid = 211,
                              .start_ns = kBase + 1000 * i,
                              .end_ns = kBase + 1000 * i + 500,
                              .correlation_id = corr});
      tl.kernels.push_back(kernel(pid, gpu, 7, corr, 10'000 + 1000 * i, 10'000 + 1000 * i + 800,
                                  i == 1 ? "gemm_kernel<float>" : "relu(float*, int)"));
      if (pid != 30)
        tl.kernels.push_back(kernel(pid, gpu, 13, 0, 20'000 + 1000 * i + (pid == 20 ? 50 : 0), 20'000 + 1000 * i + 900,
                                    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
    }
    tl.nvtx.push_back(
        {.pid = pid, .tid = pid, .style = "PushPop", .text = "step", .start_ns = kBase, .end_ns = kBase + 30'000});
    tl.nvtx.push_back({.pid = pid, .tid = pid, .style = "Mark", .text = "here", .start_ns = kBase + 600});
    tl.syncs.push_back({.pid = pid,
                        .sync_type = "stream_synchronize",
                        .stream_id = 7,
                        .start_ns = kBase + 3000,
                        .end_ns = kBase + 15'000});
    MemcpyEvent m;
    static_cast<GpuEventBase&>(m) = kernel(pid, gpu, 7, 0, 40'000, 41'000, "");
    m.bytes = 1 << 20;
    m.copy_kind = "HtoD";
    m.src_kind = "pageable";
    m.dst_kind = "device";
    tl.memcpys.push_back(m);
    MemsetEvent s;
    static_cast<GpuEventBase&>(s) = kernel(pid, gpu, 7, 0, 42'000, 42'100, "");
    s.bytes = 4096;
    s.memory_kind = "device";
    tl.memsets.push_back(s);
  }
  tl.nvtx.push_back({.pid = 30, .tid = 30, .style = "PushPop", .text = "never closed", .start_ns = kBase + 50'000});
  for (std::int64_t i = 0; i < 4; ++i)
    tl.memory.push_back({.gpu_index = i % 2, .ts_ns = kBase + 100 * i, .in_use_bytes = 1024 * i});
  auto by_start = [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; };
  std::stable_sort(tl.api_calls.begin(), tl.api_calls.end(), by_start);
  std::stable_sort(tl.kernels.begin(), tl.kernels.end(), by_start);
  std::stable_sort(tl.nvtx.begin(), tl.nvtx.end(), by_start);
  link_launches(tl);
  return tl;
}

std::string as_json(const Timeline& tl) {
  std::ostringstream out;
  write_perfetto_json(tl, out);
  return out.str();
}

std::string as_pftrace(const Timeline& tl) {
  std::ostringstream out;
  write_perfetto_proto(tl, out);
  return out.str();
}

TEST(PerfettoProto, HoldsWhatTheJsonHolds) {
  const Timeline tl = synthetic();
  const std::string json = as_json(tl);
  const std::string pftrace = as_pftrace(tl);
  test::PftraceFacts facts;
  const test::ExportSummary from_json = test::expect_same_events(pftrace, json, facts);
  // What the synthetic trace has: 9 launches, 9 kernels and 6 NCCL kernels, 2 collectives'
  // chains, memory counters on both GPUs.
  EXPECT_EQ(from_json.slices.count({"kernel", "relu(float*, int)"}), 6U);
  EXPECT_GE(from_json.flow_steps, 18 + 6);
  EXPECT_EQ(from_json.counter_points.at("memory in use (device 0)"), 2);
  EXPECT_TRUE(from_json.thread_names.contains("GPU 0 NCCL"));
  EXPECT_EQ(facts.slice_begins, static_cast<std::int64_t>(from_json.slices.size()));
}

TEST(PerfettoProto, NamesAreInternedOnce) {
  const std::string pftrace = as_pftrace(synthetic());
  test::PftraceFacts facts;
  test::summarize_pftrace(pftrace, &facts);
  EXPECT_EQ(facts.interned_names, static_cast<std::int64_t>(facts.distinct_names.size()));
  // The NCCL kernel's long name is in the file once, though six kernels carry it.
  const std::string nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
  EXPECT_EQ(pftrace.find(nccl), pftrace.rfind(nccl));
}

TEST(PerfettoProto, SmallerThanTheJson) {
  const Timeline tl = synthetic();
  EXPECT_LT(as_pftrace(tl).size() * 3, as_json(tl).size());
}

TEST(PerfettoProto, EmptyTimelineIsAValidTrace) {
  Timeline tl;
  const std::string pftrace = as_pftrace(tl);
  test::PftraceFacts facts;
  const test::ExportSummary s = test::summarize_pftrace(pftrace, &facts);
  EXPECT_EQ(facts.packets, 1);  // the one that clears the sequence's state
  EXPECT_TRUE(s.slices.empty());
}

}  // namespace
}  // namespace gpuscope::render
