#include "analyze/nsys/nvtx_gpu_proj.hpp"

#include <cmath>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using test::cell;
using test::col;
using test::has_note;
using test::TraceDb;
namespace rows = store::rows;

// pid 1, main thread 10, worker thread 11. Launch calls (thread, start → op):
//   c1 (10, 100) → kernel [1000,1400) stream 7     c2 (10, 200) → kernel [1200,1600) stream 8
//   c3 (10, 500) → memcpy [1700,1800)              c4 (10, 650) → zero-length kernel [1900,1900)
//   c5 (10, 2100) cudaGraphLaunch → graph 9's kernels [2200,2300) [2300,2450) [2500,2600)
//   c7 (10, 2150) → memset [2450,2500)             c6 (11, 2200) → kernel [2700,2800)
//   and a kernel (corr 99) with no launch call in the trace.
// Ranges on thread 10: "step" [0,1000) ⊃ "fwd" [100,500); "step" [2000,3000); "step"
// [4000,4100) launches nothing; "io:load" StartEnd [600,900); "zero" [700,700);
// "xthread" StartEnd [0,3000) ends on thread 11. On thread 11: "worker" [0,3000).
//   step #1: c1 c2 c3 c4 → union [1000,1600) + [1700,1800) + ∅ = 700 ns, 4 ops, kernels 800 ns
//   step #2: c5 (3 kernels) + c7 → union [2200,2600) = 400 ns, 4 ops, kernels 350 ns
//   fwd: c1 c2 (c3 starts at its end: outside) → 600 ns, 2 ops, kernels 800 ns
//   io:load: c4 → 0 ns, 1 op;  worker: c6 → 100 ns
class NvtxGpuProjTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t.strings({{1, "k"},
               {2, "cudaLaunchKernel"},
               {3, "cudaGraphLaunch"},
               {4, "cudaMemcpyAsync"},
               {5, "cudaMemsetAsync"},
               {20, "step"},
               {21, "fwd"},
               {22, "load"},
               {23, "io"},
               {24, "zero"},
               {25, "xthread"},
               {26, "worker"}});
    t.api(1, 10, 2, 100, 150, 1);
    t.api(1, 10, 2, 200, 250, 2);
    t.api(1, 10, 4, 500, 550, 3);
    t.api(1, 10, 2, 650, 680, 4);
    t.api(1, 10, 3, 2100, 2140, 5);
    t.api(1, 11, 2, 2200, 2240, 6);
    t.api(1, 10, 5, 2150, 2160, 7);
    t.kernel(1, 0, 7, 1, 1000, 1400, 1);
    t.kernel(1, 0, 8, 2, 1200, 1600, 1);
    t.copy({.pid = 1, .corr = 3, .start = 1700, .end = 1800, .bytes = 64});
    t.kernel(1, 0, 7, 4, 1900, 1900, 1);
    auto graph_kernel = [&](std::int64_t node, long long start, long long end) {  // kernels rows 4, 5, 6
      rows::Kernel k = TraceDb::kernel_row(1, 0, 7, 5, start, end, 1);
      k.graph_id = 9;
      k.graph_node_id = node;
      t.add(k);
    };
    graph_kernel(4, 2200, 2300);
    graph_kernel(5, 2300, 2450);
    graph_kernel(6, 2500, 2600);
    t.add(rows::Memset{.pid = 1,
                       .device_id = 0,
                       .context_id = 1,
                       .stream_id = 7,
                       .correlation_id = 7,
                       .start_ns = 2450,
                       .end_ns = 2500,
                       .bytes = 16});
    t.kernel(1, 0, 7, 6, 2700, 2800, 1);
    t.kernel(1, 0, 7, 99, 2900, 2950, 1);
    // The importer numbers nvtx_events rows from 1 and closes a push/pop range on its own thread.
    auto range = [](std::int64_t id, std::int64_t tid, std::int64_t end_tid, std::string_view style, std::int64_t text,
                    long long start, std::optional<std::int64_t> end) {
      return rows::NvtxEvent{.id = id,
                             .pid = 1,
                             .tid = tid,
                             .end_tid = end_tid,
                             .style = style,
                             .text_id = text,
                             .start_ns = start,
                             .end_ns = end};
    };
    rows::NvtxEvent load = range(5, 10, 10, "StartEnd", 22, 600, 900);
    load.domain_id = 23;
    t.add<rows::NvtxEvent>({range(1, 10, 10, "PushPop", 20, 0, 1000), range(2, 10, 10, "PushPop", 21, 100, 500),
                            range(3, 10, 10, "PushPop", 20, 2000, 3000), range(4, 10, 10, "PushPop", 20, 4000, 4100),
                            load, range(6, 10, 10, "PushPop", 24, 700, 700), range(7, 10, 11, "StartEnd", 25, 0, 3000),
                            range(8, 11, 11, "PushPop", 26, 0, 3000), range(9, 10, 10, "Mark", 20, 150, std::nullopt)});
  }
  TraceDb t;
};

TEST_F(NvtxGpuProjTest, ColumnsAsNsys) {
  const Report r = nvtx_gpu_proj_sum(t.db());
  EXPECT_EQ(r.name, "nvtx_gpu_proj_sum");
  std::vector<std::string> names;
  for (const Column& c : r.columns) names.push_back(c.unit.empty() ? c.name : c.name + " (" + c.unit + ")");
  EXPECT_EQ(names, (std::vector<std::string>{"Range", "Style", "Total Proj Time (ns)", "Total Range Time (ns)",
                                             "Range Instances", "Proj Avg (ns)", "Proj Med (ns)", "Proj Min (ns)",
                                             "Proj Max (ns)", "Proj StdDev (ns)", "Total GPU Ops", "Avg GPU Ops",
                                             "Total Kernel Time (ns)"}));
}

TEST_F(NvtxGpuProjTest, NestedRangesGraphLaunchAndOverlappingStreams) {
  const Report r = nvtx_gpu_proj_sum(t.db());
  ASSERT_EQ(r.rows.size(), 4u);  // step, fwd, worker, io:load; not zero, xthread, the mark
  EXPECT_EQ(cell<std::string>(r, 0, "Range"), "step");
  EXPECT_EQ(cell<std::string>(r, 0, "Style"), "PushPop");
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Total Proj Time"), 1100);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Total Range Time"), 2000);  // the instance without ops is left out
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Range Instances"), 2);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Proj Avg"), 550.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Proj Med"), 550.0);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Proj Min"), 400);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Proj Max"), 700);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Proj StdDev"), std::sqrt(2 * 150.0 * 150.0));
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Total GPU Ops"), 8);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Avg GPU Ops"), 4.0);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Total Kernel Time"), 1150);

  // Nested: the enclosing step counts the same ops; the overlapping kernels count once
  // in the projection and in full in the kernel time.
  EXPECT_EQ(cell<std::string>(r, 1, "Range"), "fwd");
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Total Proj Time"), 600);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Total GPU Ops"), 2);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Total Kernel Time"), 800);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[1][col(r, "Proj StdDev")]));  // one instance

  EXPECT_EQ(cell<std::string>(r, 2, "Range"), "worker");
  EXPECT_EQ(cell<std::int64_t>(r, 2, "Total Proj Time"), 100);

  // A zero-length kernel is a GPU op of zero projected time.
  EXPECT_EQ(cell<std::string>(r, 3, "Range"), "io:load");
  EXPECT_EQ(cell<std::string>(r, 3, "Style"), "StartEnd");
  EXPECT_EQ(cell<std::int64_t>(r, 3, "Total Proj Time"), 0);
  EXPECT_EQ(cell<std::int64_t>(r, 3, "Total Range Time"), 300);
  EXPECT_EQ(cell<std::int64_t>(r, 3, "Total GPU Ops"), 1);
  EXPECT_EQ(cell<std::int64_t>(r, 3, "Total Kernel Time"), 0);

  EXPECT_TRUE(has_note(r, NoteLevel::kInfo, "1 of 10 GPU operations have no launch call"));
  EXPECT_TRUE(has_note(r, NoteLevel::kInfo, "1 ranges end on another thread"));
  EXPECT_FALSE(has_note(r, "threads without NVTX ranges"));
}

// When several API records share a correlation id (a runtime call and the driver call
// inside it), the op belongs to the ranges around the first one.
TEST(NvtxGpuProj, OpsFromThreadsWithoutRangesAreCounted) {
  TraceDb t;
  t.strings({{1, "k"}, {2, "cudaLaunchKernel"}, {20, "step"}});
  t.api(1, 10, 2, 100, 150, 1);
  t.api(1, 10, 2, 120, 140, 1);
  t.api(1, 12, 2, 300, 350, 2);
  t.kernel(1, 0, 7, 1, 1000, 1100, 1);
  t.kernel(1, 0, 7, 2, 1200, 1300, 1);
  t.add(rows::NvtxEvent{
      .id = 1, .pid = 1, .tid = 10, .end_tid = 10, .style = "PushPop", .text_id = 20, .start_ns = 90, .end_ns = 110});
  const Report r = nvtx_gpu_proj_sum(t.db());
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Total GPU Ops"), 1);  // its first call (100) is inside, the second not
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Total Proj Time"), 100);
  EXPECT_TRUE(has_note(r, "1 of 2 GPU operations were launched from threads without NVTX ranges"));
}

TEST(NvtxGpuProj, GpuWorkButNoRanges) {
  TraceDb t;
  t.strings({{1, "k"}});
  t.kernel(1, 0, 7, 1, 0, 10, 1);
  const Report r = nvtx_gpu_proj_sum(t.db());
  EXPECT_TRUE(r.rows.empty());
  ASSERT_FALSE(r.notes.empty());
  EXPECT_EQ(r.notes[0].text, "no NVTX ranges with GPU operations in the capture range");
}

}  // namespace
}  // namespace gpuscope::analyze
