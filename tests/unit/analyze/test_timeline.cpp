#include "analyze/timeline.hpp"

#include <gtest/gtest.h>

#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using test::TraceDb;
namespace rows = store::rows;

TEST(Timeline, LoadsEveryKindWithNamesResolved) {
  TraceDb t;
  t.add(rows::Process{.pid = 1234, .cmdline = "python3 x.py", .exe = "/usr/bin/python3", .start_ns = 1000000,
                      .end_ns = 9000000, .ended_cleanly = 0, .rank = 3});
  t.add<rows::Thread>({{.pid = 1234, .tid = 1234}, {.pid = 1234, .tid = 1240, .name = "loader"}});
  t.add(rows::Device{.pid = 1234, .device_id = 1, .name = "NVIDIA H100 80GB HBM3", .uuid = "GPU-1", .cc_major = 9,
                     .cc_minor = 0, .sm_count = 132});
  t.strings({{1, "cudaLaunchKernel"}, {2, "vec_add(float*)"}, {3, "step"}, {4, "mydomain"}});
  t.add(rows::ApiCall{.pid = 1234, .tid = 1234, .domain = "runtime", .cbid = 211, .name_id = 1,
                      .start_ns = 2000000, .end_ns = 2000500, .correlation_id = 77, .return_value = 0});
  t.add<rows::NvtxEvent>({{.id = 1, .pid = 1234, .tid = 1234, .end_tid = 1234, .domain_id = 4, .style = "PushPop",
                           .text_id = 3, .start_ns = 1500000, .end_ns = 3000000},
                          {.id = 2, .pid = 1234, .tid = 1234, .end_tid = 1234, .style = "Mark", .text_id = 3,
                           .start_ns = 1600000}});
  t.add(rows::Sync{.pid = 1234, .tid = std::nullopt, .context_id = 1, .stream_id = 7,
                   .sync_type = "stream_synchronize", .start_ns = 2600000, .end_ns = 2700000,
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

}  // namespace
}  // namespace gpuscope::analyze
