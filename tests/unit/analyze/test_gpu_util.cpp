#include "analyze/nsys/gpu_util_report.hpp"

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "analyze/nsys/nsys_reports.hpp"
#include "analyze/nsys/trace_summary.hpp"
#include "analyze/report_registry.hpp"
#include "store/trace.hpp"
#include "trace_db.hpp"
#include "../committed_traces.hpp"

namespace gpuscope::analyze {
namespace {

using test::cell;
using test::col;
using test::has_note;
using test::TraceDb;

void add_h100(TraceDb& t) { t.h100(100); }

// One kernel: 1-D grid of `grid` blocks of `block` threads, 32 registers, no shared memory.
void kernel(TraceDb& t, int stream, long long start, long long end, int grid, int block) {
  t.add(store::rows::Kernel{.pid = 100,
                            .device_id = 0,
                            .context_id = 1,
                            .stream_id = stream,
                            .start_ns = start,
                            .end_ns = end,
                            .grid_x = grid,
                            .grid_y = 1,
                            .grid_z = 1,
                            .block_x = block,
                            .block_y = 1,
                            .block_z = 1,
                            .registers_per_thread = 32,
                            .static_shared_memory = 0,
                            .dynamic_shared_memory = 0});
}

void process(TraceDb& t, long long end) {
  t.add(store::rows::Process{.pid = 100, .start_ns = 0, .end_ns = end, .ended_cleanly = 1});
}

// 1024-thread blocks at 32 registers: 2 blocks per SM (64 warps / 32).
// A: 264 blocks → 132 SMs (all) for [0, 10000); B: 66 blocks → 33 SMs for [20000, 60000).
// Wall 100000 ns, busy 50000 ns = 50 %; coverage = (132×10000 + 33×40000) / (132×100000) = 20 %.
TEST(GpuUtil, BusyAndSmCoverageOfTwoKernels) {
  TraceDb t;
  process(t, 100000);
  add_h100(t);
  kernel(t, 7, 0, 10000, 264, 1024);
  kernel(t, 7, 20000, 60000, 66, 1024);
  const Report r = gpu_util(t.db());
  EXPECT_EQ(r.name, "gpu_util");
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "GPU"), 0);
  EXPECT_EQ(cell<std::string>(r, 0, "Name"), "NVIDIA H100");
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Wall Time"), 0.1);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Busy Time"), 0.05);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Busy"), 50.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "SM Coverage"), 20.0);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Max Concurrent Streams"), 1);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Kernels"), 2);
  EXPECT_EQ(r.columns[col(r, "SM Coverage")].unit, "%");
  // busy 50 %, coverage 20 % < 25 %: the "busy is not utilization" verdict.
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning,
                       "GPU 0: low SM coverage: SM coverage 20 % of the SMs x wall time against GPU busy 50 % of "
                       "the wall time: while busy, its kernels could occupy 40 % of its SMs"))
      << r.notes[0].text;
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning, "busy time is not utilization"));
  // One gap of 10000 ns: the 10-100 us bucket.
  EXPECT_TRUE(has_note(r, NoteLevel::kInfo, "< 10 µs: 0 (0 s); 10-100 µs: 1 (10 µs); 0.1-1 ms: 0"));
}

// Concurrent kernels share the SMs: two 100-SM kernels overlapping on two streams fill
// 132 SMs (capped), not 200. A [0, 1000) stream 1, B [500, 1500) stream 2, 200 blocks of
// 1024 threads → 100 SMs each; then C [1500, 1600), 1 block → 1 SM. Occupied:
// 100×500 + 132×500 + 100×500 + 1×100 = 166100 SM·ns; wall 2000 → 166100 / (132×2000) × 100.
TEST(GpuUtil, ConcurrentKernelsAreCappedAtTheSmCount) {
  TraceDb t;
  process(t, 2000);
  add_h100(t);
  kernel(t, 1, 0, 1000, 200, 1024);
  kernel(t, 2, 500, 1500, 200, 1024);
  kernel(t, 1, 1500, 1600, 1, 1024);  // touches B's end: not concurrent with it
  const Report r = gpu_util(t.db());
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "SM Coverage"), 166100.0 / (132.0 * 2000) * 100.0);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Max Concurrent Streams"), 2);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Busy"), 80.0);
}

TEST(GpuUtil, KernelsWithoutDeviceLimitsAreFlagged) {
  TraceDb t;
  process(t, 1000);
  kernel(t, 1, 0, 500, 264, 1024);  // no devices row
  const Report r = gpu_util(t.db());
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[0][col(r, "SM Coverage")]));
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Busy"), 50.0);
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning, "1 of 1 kernels lack launch facts"));
}

TEST(GpuUtil, IdleGapBuckets) {
  // Gaps: 9999 (< 10 us), 10000 and 99999 (10-100 us), 100000 (0.1-1 ms), 1000000 (>= 1 ms).
  const std::vector<stats::Interval> busy = {{0, 10},          {10009, 10010},   {20010, 20020},
                                             {120019, 120020}, {220020, 220030}, {1220030, 1220040}};
  const IdleGapHistogram h = idle_gaps(busy);
  EXPECT_EQ(h[0].count, 1);
  EXPECT_EQ(h[0].total_ns, 9999);
  EXPECT_EQ(h[1].count, 2);
  EXPECT_EQ(h[1].total_ns, 10000 + 99999);
  EXPECT_EQ(h[2].count, 1);
  EXPECT_EQ(h[2].total_ns, 100000);
  EXPECT_EQ(h[3].count, 1);
  EXPECT_EQ(h[3].total_ns, 1000000);
  const IdleGapHistogram none = idle_gaps(std::vector<stats::Interval>{{0, 10}});
  for (const IdleGapBucket& b : none) EXPECT_EQ(b.count, 0);
}

TEST(GpuUtil, EmptyDatabaseGivesNoRowsAndANote) {
  TraceDb t;
  const Report r = gpu_util(t.db());
  EXPECT_FALSE(r.columns.empty());
  EXPECT_TRUE(r.rows.empty());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0].text, "no GPU activity in the capture range");
}

TEST(GpuUtil, RunByNameButNotByDefault) {
  TraceDb t;
  EXPECT_EQ(run_report(t.db(), "gpu_util").at(0).name, "gpu_util");
  const auto all = all_report_names();
  EXPECT_NE(std::find(all.begin(), all.end(), "gpu_util"), all.end());
  const auto defaults = report_names();
  EXPECT_EQ(std::find(defaults.begin(), defaults.end(), "gpu_util"), defaults.end());
}

// The committed real trace: one GPU; Busy (%) is trace_summary's GPU Busy (%).
TEST(GpuUtil, CommittedTraceAgreesWithTraceSummary) {
  store::Database db = store::open_trace(gpuscope::test::committed_trace("cnn"));
  const Report r = gpu_util(db);
  ASSERT_EQ(r.rows.size(), 1u);
  const std::vector<Report> summary = trace_summary(db, 10, true);  // gpu_util here judges the whole run
  ASSERT_FALSE(summary.empty());
  ASSERT_EQ(summary[0].name, "trace_overview");
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Busy"), cell<double>(summary[0], 0, "GPU Busy"));
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Wall Time"), cell<double>(summary[0], 0, "Wall Time"));
  const double coverage = cell<double>(r, 0, "SM Coverage");
  EXPECT_GT(coverage, 0.0);
  EXPECT_LE(coverage, 100.0);
  EXPECT_LE(coverage, cell<double>(r, 0, "Busy"));
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Kernels"), 306);
  EXPECT_FALSE(has_note(r, NoteLevel::kWarning, "lack launch facts"));
}

}  // namespace
}  // namespace gpuscope::analyze
