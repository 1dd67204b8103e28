#include "analyze/timeline/timeline.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using test::TraceDb;
namespace rows = store::rows;

TEST(Timeline, LoadsEveryKindWithNamesResolved) {
  TraceDb t;
  t.add(rows::Process{.pid = 1234,
                      .cmdline = "python3 x.py",
                      .exe = "/usr/bin/python3",
                      .start_ns = 1000000,
                      .end_ns = 9000000,
                      .ended_cleanly = 0,
                      .rank = 3});
  t.add<rows::Thread>({{.pid = 1234, .tid = 1234}, {.pid = 1234, .tid = 1240, .name = "loader"}});
  t.add(rows::Device{.pid = 1234,
                     .device_id = 1,
                     .name = "NVIDIA H100 80GB HBM3",
                     .uuid = "GPU-1",
                     .cc_major = 9,
                     .cc_minor = 0,
                     .sm_count = 132});
  t.strings({{1, "cudaLaunchKernel"}, {2, "vec_add(float*)"}, {3, "step"}, {4, "mydomain"}});
  t.add(rows::ApiCall{.pid = 1234,
                      .tid = 1234,
                      .domain = "runtime",
                      .cbid = 211,
                      .name_id = 1,
                      .start_ns = 2000000,
                      .end_ns = 2000500,
                      .correlation_id = 77,
                      .return_value = 0});
  t.add<rows::NvtxEvent>(
      {{.id = 1,
        .pid = 1234,
        .tid = 1234,
        .end_tid = 1234,
        .domain_id = 4,
        .style = "PushPop",
        .text_id = 3,
        .start_ns = 1500000,
        .end_ns = 3000000},
       {.id = 2, .pid = 1234, .tid = 1234, .end_tid = 1234, .style = "Mark", .text_id = 3, .start_ns = 1600000}});
  t.add(rows::Sync{.pid = 1234,
                   .tid = std::nullopt,
                   .context_id = 1,
                   .stream_id = 7,
                   .sync_type = "stream_synchronize",
                   .start_ns = 2600000,
                   .end_ns = 2700000,
                   .correlation_id = 78});
  t.kernel(1234, 1, 7, 77, 2100000, 2200000, 2);
  t.memcpy(1234, "HtoD", 1200000, 1300000, 4096);

  const Timeline tl = load_timeline(t.db());
  EXPECT_EQ(tl.base_ns, 1000000);  // the process start is the earliest timestamp
  ASSERT_EQ(tl.processes.size(), 1u);
  EXPECT_EQ(tl.processes[0].name, "python3");
  EXPECT_FALSE(tl.processes[0].ended_cleanly);
  EXPECT_EQ(tl.processes[0].rank, 3);
  ASSERT_EQ(tl.threads.size(), 2u);
  EXPECT_EQ(tl.threads[1].name, "loader");
  ASSERT_EQ(tl.devices.size(), 1u);
  EXPECT_EQ(tl.devices[0].gpu_index, 1);  // single process: the ordinal is kept
  EXPECT_EQ(tl.devices[0].sm_count, 132);

  ASSERT_EQ(tl.api_calls.size(), 1u);
  EXPECT_EQ(tl.api_calls[0].name, "cudaLaunchKernel");
  EXPECT_FALSE(tl.api_calls[0].is_driver);
  EXPECT_EQ(tl.api_calls[0].correlation_id, 77);

  ASSERT_EQ(tl.nvtx.size(), 2u);
  EXPECT_EQ(tl.nvtx[0].text, "step");
  EXPECT_EQ(tl.nvtx[0].domain, "mydomain");
  EXPECT_EQ(tl.nvtx[0].end_ns, 3000000);
  EXPECT_TRUE(tl.nvtx[1].is_mark());
  EXPECT_FALSE(tl.nvtx[1].end_ns.has_value());

  ASSERT_EQ(tl.syncs.size(), 1u);
  EXPECT_FALSE(tl.syncs[0].tid.has_value());
  EXPECT_EQ(tl.syncs[0].stream_id, 7);

  ASSERT_EQ(tl.kernels.size(), 1u);
  const KernelEvent& k = tl.kernels[0];
  EXPECT_EQ(k.name, "vec_add(float*)");
  EXPECT_EQ(k.gpu_index, 1);
  EXPECT_EQ(k.grid, (std::array<std::int64_t, 3>{264, 1, 1}));
  EXPECT_EQ(k.block, (std::array<std::int64_t, 3>{256, 1, 1}));
  EXPECT_EQ(k.registers_per_thread, 32);
  EXPECT_EQ(k.static_shared_memory + k.dynamic_shared_memory, 3072);
  EXPECT_EQ(k.end_ns - k.start_ns, 100000);

  ASSERT_EQ(tl.memcpys.size(), 1u);
  EXPECT_EQ(tl.memcpys[0].copy_kind, "HtoD");
  EXPECT_EQ(tl.memcpys[0].src_kind, "pageable");
  EXPECT_EQ(tl.memcpys[0].bytes, 4096);
}

TEST(Timeline, EmptyTraceHasZeroBase) {
  TraceDb t;
  const Timeline tl = load_timeline(t.db());
  EXPECT_EQ(tl.base_ns, 0);
  EXPECT_TRUE(tl.kernels.empty());
}

TEST(Timeline, SameOrdinalOnDifferentGpusGetsDistinctIndices) {
  TraceDb t;
  t.add<rows::Device>({{.pid = 1, .device_id = 0, .name = "G", .uuid = "GPU-a"},
                       {.pid = 2, .device_id = 0, .name = "G", .uuid = "GPU-b"}});
  t.strings({{1, "k"}});
  t.kernel(1, 0, 7, 1, 0, 10, 1);
  t.kernel(2, 0, 7, 1, 0, 10, 1);
  const Timeline tl = load_timeline(t.db());
  ASSERT_EQ(tl.kernels.size(), 2u);
  EXPECT_NE(tl.kernels[0].gpu_index, tl.kernels[1].gpu_index);
}

// Two processes on one GPU (same UUID), correlation ids shared across processes and
// repeated inside one, GPU work of every kind with and without its launch call.
void add_two_process_trace(TraceDb& t) {
  t.add<rows::Process>({{.pid = 1, .exe = "/bin/a", .start_ns = 100, .end_ns = 9000},
                        {.pid = 2, .exe = "/bin/b", .start_ns = 150, .end_ns = 9500}});
  t.add<rows::Device>({TraceDb::h100_row(1, "GPU-same"), TraceDb::h100_row(2, "GPU-same")});
  t.strings({{1, "cudaLaunchKernel"}, {2, "k"}, {3, "r"}});
  t.api(1, 1, 1, 1000, 1100, 5);  // launches the kernel of (1, 5)
  t.api(1, 2, 1, 1200, 1300, 5);  // same (pid, correlation): not the first, no flow start
  t.api(1, 1, 1, 1400, 1500, 6);  // no GPU work
  t.api(2, 2, 1, 1000, 1100, 5);  // (2, 5): another process's correlation 5
  t.api(1, 1, 1, 1600, 1700, 7);  // launches the memset
  t.api(2, 2, 1, 1800, 1900, 8);  // launches the memcpy
  t.api(1, 1, 1, 1950, 1990, 0);  // no correlation
  t.kernel(1, 0, 7, 5, 2000, 2500, 2);
  t.kernel(2, 0, 7, 5, 2100, 2600, 2);
  t.kernel(2, 0, 9, 9, 2700, 2800, 2);  // no launch call in the trace
  t.add(rows::Memset{.pid = 1,
                     .device_id = 0,
                     .context_id = 1,
                     .stream_id = 8,
                     .correlation_id = 7,
                     .start_ns = 3000,
                     .end_ns = 3100,
                     .bytes = 64,
                     .value = 0,
                     .memory_kind = "device"});
  t.copy({.pid = 2, .stream = 3, .corr = 8, .start = 3200, .end = 3300, .bytes = 4096});
  t.add(rows::Sync{.pid = 2,
                   .tid = std::nullopt,
                   .context_id = 1,
                   .stream_id = 3,
                   .sync_type = "stream_synchronize",
                   .start_ns = 3400,
                   .end_ns = 3500,
                   .correlation_id = 10});
  t.add(rows::NvtxEvent{
      .id = 1, .pid = 1, .tid = 3, .end_tid = 3, .style = "PushPop", .text_id = 3, .start_ns = 900});  // never closed
}

TEST(Timeline, LaunchFlagsFromSqlMatchTheVectorRule) {
  TraceDb t;
  add_two_process_trace(t);
  const Timeline tl = load_timeline(t.db());
  ASSERT_EQ(tl.api_calls.size(), 7u);
  std::vector<std::pair<std::int64_t, std::int64_t>> starts;  // (pid, correlation) of flow starts
  for (const ApiCallEvent& a : tl.api_calls)
    if (a.launched_traced_gpu_work) starts.push_back({a.pid, a.correlation_id});
  EXPECT_EQ(starts, (std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 5}, {2, 5}, {1, 7}, {2, 8}}));
  ASSERT_EQ(tl.kernels.size(), 3u);
  EXPECT_TRUE(tl.kernels[0].launch_traced);
  EXPECT_TRUE(tl.kernels[1].launch_traced);
  EXPECT_FALSE(tl.kernels[2].launch_traced);  // correlation 9 has no call
  ASSERT_EQ(tl.memsets.size(), 1u);
  EXPECT_TRUE(tl.memsets[0].launch_traced);
  ASSERT_EQ(tl.memcpys.size(), 1u);
  EXPECT_TRUE(tl.memcpys[0].launch_traced);

  // The same flags from the in-memory rule (core/timeline.hpp).
  Timeline linked = tl;
  link_launches(linked);
  for (std::size_t i = 0; i < tl.api_calls.size(); ++i)
    EXPECT_EQ(linked.api_calls[i].launched_traced_gpu_work, tl.api_calls[i].launched_traced_gpu_work) << i;
  for (std::size_t i = 0; i < tl.kernels.size(); ++i)
    EXPECT_EQ(linked.kernels[i].launch_traced, tl.kernels[i].launch_traced) << i;
}

TEST(Timeline, TracksFromSqlMatchTheVectors) {
  TraceDb t;
  add_two_process_trace(t);
  TraceTimeline source(t.db());
  const TimelineHeader header = source.header();
  EXPECT_EQ(header.base_ns, 100);
  const TimelineTracks streamed = source.tracks(header);
  const TimelineTracks in_memory = timeline_tracks(load_timeline(t.db()));

  EXPECT_EQ(streamed.pids, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(streamed.cpu_threads,
            (std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {1, 2}, {1, 3}, {2, 2}}));  // sync: (2, 2)
  ASSERT_EQ(streamed.gpu_streams.size(), 5u);  // one GPU: (1,7) (1,8) (2,3) (2,7) (2,9)
  for (const TimelineStream& s : streamed.gpu_streams) EXPECT_EQ(s.gpu_index, streamed.gpu_streams[0].gpu_index);
  EXPECT_EQ(streamed.end_ns, 9500);  // process 2's end

  EXPECT_EQ(streamed.pids, in_memory.pids);
  EXPECT_EQ(streamed.cpu_threads, in_memory.cpu_threads);
  EXPECT_EQ(streamed.gpu_streams, in_memory.gpu_streams);
  EXPECT_EQ(streamed.end_ns, in_memory.end_ns);
}

// NCCL lanes (every process and GPU with NCCL kernels) and each process's host and rank,
// the same from SQL and from the vectors.
TEST(Timeline, NcclLanesAndHostsFromSqlMatchTheVectors) {
  TraceDb t;
  t.add(rows::Process{.pid = 1, .host = "node1", .rank = 0});
  t.add(rows::Process{.pid = 2, .host = "node2", .rank = 1});
  t.strings({{1, "gemm"},
             {2, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"},
             {3, "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"}});
  t.kernel(1, 0, 7, 1, 100, 200, 1);
  t.kernel(1, 0, 13, 2, 300, 400, 2);
  t.kernel(1, 0, 13, 3, 500, 600, 3);
  t.kernel(2, 0, 13, 2, 310, 400, 2);
  TraceTimeline source(t.db());
  const TimelineHeader header = source.header();
  ASSERT_EQ(header.processes.size(), 2u);
  EXPECT_EQ(header.processes[1].host, "node2");
  EXPECT_EQ(header.processes[1].rank, 1);
  const TimelineTracks streamed = source.tracks(header);
  ASSERT_EQ(streamed.nccl_lanes.size(), 2u);
  EXPECT_EQ(streamed.nccl_lanes[0].pid, 1);
  EXPECT_EQ(streamed.nccl_lanes[0].kernels, 2);  // both generations of names; gemm is not one
  EXPECT_EQ(streamed.nccl_lanes[1].kernels, 1);
  EXPECT_EQ(streamed.nccl_lanes, timeline_tracks(load_timeline(t.db())).nccl_lanes);
}

TEST(Timeline, EventsAreVisitedInTimeOrderOneAtATime) {
  TraceDb t;
  add_two_process_trace(t);
  TraceTimeline source(t.db());
  std::vector<std::int64_t> starts;
  source.api_calls([&starts](const ApiCallEvent& a) { starts.push_back(a.start_ns); });
  EXPECT_TRUE(std::is_sorted(starts.begin(), starts.end()));
  EXPECT_EQ(starts.size(), 7u);
  int unclosed = 0;
  source.nvtx([&unclosed](const NvtxEvent& e) { unclosed += !e.end_ns.has_value(); });
  EXPECT_EQ(unclosed, 1);
}

}  // namespace
}  // namespace gpuscope::analyze
