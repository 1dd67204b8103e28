#include "analyze/timeline.hpp"

#include <gtest/gtest.h>

#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using test::TraceDb;

TEST(Timeline, LoadsEveryKindWithNamesResolved) {
  TraceDb t;
  t.exec("INSERT INTO processes (pid, exe, cmdline, start_ns, end_ns, ended_cleanly, rank) "
         "VALUES (1234, '/usr/bin/python3', 'python3 x.py', 1000000, 9000000, 0, 3)");
  t.exec("INSERT INTO threads VALUES (1234, 1234, NULL), (1234, 1240, 'loader')");
  t.exec("INSERT INTO devices (pid, device_id, name, uuid, cc_major, cc_minor, sm_count) "
         "VALUES (1234, 1, 'NVIDIA H100 80GB HBM3', 'GPU-1', 9, 0, 132)");
  t.exec("INSERT INTO strings (id, value) VALUES (1, 'cudaLaunchKernel'), (2, 'vec_add(float*)'), (3, 'step'), (4, 'mydomain')");
  t.exec("INSERT INTO api_calls (pid, tid, domain, cbid, name_id, start_ns, end_ns, correlation_id, return_value) "
         "VALUES (1234, 1234, 'runtime', 211, 1, 2000000, 2000500, 77, 0)");
  t.exec("INSERT INTO nvtx_events (pid, tid, domain_id, style, text_id, start_ns, end_ns) VALUES "
         "(1234, 1234, 4, 'PushPop', 3, 1500000, 3000000), (1234, 1234, NULL, 'Mark', 3, 1600000, NULL)");
  t.exec("INSERT INTO syncs (pid, tid, context_id, stream_id, sync_type, start_ns, end_ns, correlation_id) "
         "VALUES (1234, NULL, 1, 7, 'stream_synchronize', 2600000, 2700000, 78)");
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
  t.exec("INSERT INTO devices (pid, device_id, name, uuid) VALUES (1, 0, 'G', 'GPU-a'), (2, 0, 'G', 'GPU-b')");
  t.exec("INSERT INTO strings (id, value) VALUES (1, 'k')");
  t.kernel(1, 0, 7, 1, 0, 10, 1);
  t.kernel(2, 0, 7, 1, 0, 10, 1);
  const Timeline tl = load_timeline(t.db());
  ASSERT_EQ(tl.kernels.size(), 2u);
  EXPECT_NE(tl.kernels[0].gpu_index, tl.kernels[1].gpu_index);
}

}  // namespace
}  // namespace gpuscope::analyze
