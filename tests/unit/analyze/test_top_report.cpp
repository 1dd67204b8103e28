#include "analyze/nsys/top_report.hpp"

#include <string>

#include <gtest/gtest.h>

#include "analyze/nsys/gpu_util_report.hpp"
#include "analyze/nsys/launch_reports.hpp"
#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using test::cell;
using test::col;
using test::has_note;
using test::TraceDb;
using test::warnings;

// One kernel of pid 100 on the H100: 1-D grid of `grid` blocks of 1024 threads, 32 registers,
// no shared memory → 2 blocks per SM, so it occupies min(132, ceil(grid / 2)) SMs.
void kernel(TraceDb& t, int stream, int corr, long long start, long long end, int grid, int name_id) {
  store::rows::Kernel k = TraceDb::kernel_row(100, 0, stream, corr, start, end, name_id);
  k.grid_x = grid;
  k.block_x = 1024;
  k.static_shared_memory = 0;
  k.dynamic_shared_memory = 0;
  t.add(k);
}

TraceDb base_trace() {
  TraceDb t;
  t.add(store::rows::Process{.pid = 100, .start_ns = 0, .end_ns = 100000, .ended_cleanly = 1});
  t.h100(100);
  t.strings(
      {{1, "small_grid"}, {2, "other"}, {10, "cudaLaunchKernel"}, {11, "cudaDeviceSynchronize"}, {12, "cudaMemcpy"}});
  return t;
}

// Wall [0,100000) (the process). Two 66-block kernels (33 SMs each): K1 [10000,20000)
// launched by [0,9000), K2 [60000,70000) launched by [20000,58000), both stream 7.
// A synchronous pageable HtoD copy [72000,73000) (cudaMemcpy [71500,73500)) and
// cudaDeviceSynchronize [75000,100000).
//   Busy 21000 → 21 %; idle 79000, of which the CPU launched 9000 + 38000 = 47000 → 59.49 %.
//   SM coverage 33 × 20000 / (132 × 100000) = 5 % < 21 / 2 → low coverage.
//   Blocked: [71500,73500) ∪ [75000,100000) = 27000 → 27 %.
//   Serialized copy time 1000 = 1 % → no serialized diagnosis. Busy < 50 % but launch-bound
//   → not CPU-starved.
TEST(Top, FiveNumbersAndDiagnosesByHand) {
  TraceDb t = base_trace();
  kernel(t, 7, 1, 10000, 20000, 66, 1);
  kernel(t, 7, 2, 60000, 70000, 66, 2);
  t.api(100, 1, 10, 0, 9000, 1);
  t.api(100, 1, 10, 20000, 58000, 2);
  t.api(100, 1, 12, 71500, 73500, 3);
  t.api(100, 1, 11, 75000, 100000, 4);
  t.copy({.corr = 3, .start = 72000, .end = 73000, .bytes = 1000000, .src = "pageable", .is_async = 0});

  const std::vector<Report> reports = top(t.db());
  ASSERT_EQ(reports.size(), 2u);
  const Report& r = reports[0];
  EXPECT_EQ(r.name, "top");
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Wall Time"), 0.1);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "GPU Busy"), 21.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "SM Coverage"), 5.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Launch-Bound"), 47000.0 / 79000.0 * 100.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Sync-Blocked"), 27.0);
  for (const Column& c : r.columns) EXPECT_FALSE(c.unit.empty()) << c.name;

  // The same numbers as the detailed reports.
  const Report util = gpu_util(t.db());
  EXPECT_DOUBLE_EQ(cell<double>(util, 0, "Busy"), cell<double>(r, 0, "GPU Busy"));
  EXPECT_DOUBLE_EQ(cell<double>(util, 0, "SM Coverage"), cell<double>(r, 0, "SM Coverage"));
  EXPECT_TRUE(has_note(launch_overhead(t.db()), "launch-bound share 59 %"));
  EXPECT_TRUE(has_note(sync_wait(t.db()), "total blocked: 27 µs"));

  EXPECT_EQ(warnings(r),
            (std::vector<std::string>{"launch-bound", "sync-blocked", "low SM coverage", "pageable copies"}));
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning, "a CUDA graph could save up to 40 µs"));
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning, "torch.compile(mode=\"reduce-overhead\")"));
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning, "27 % of the wall time, mostly in cudaDeviceSynchronize"));
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning, "its kernels could occupy 24 % of its SMs"));
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning, "1 host-device copies (1000000 bytes, 1 µs, 1.0 % of the wall time)"));

  const Report& k = reports[1];
  EXPECT_EQ(k.name, "top_kernels");
  ASSERT_EQ(k.rows.size(), 2u);
  EXPECT_EQ(cell<std::string>(k, 0, "Name"), "other");  // equal totals: by name
  EXPECT_DOUBLE_EQ(cell<double>(k, 0, "Time"), 50.0);
  EXPECT_EQ(cell<std::int64_t>(k, 1, "Total Time"), 10000);
  EXPECT_EQ(cell<std::int64_t>(k, 1, "Instances"), 1);
}

// Wall 100000. One full-GPU kernel [1000,13000) (264 blocks → 132 SMs) launched by [0,1000),
// and an async pinned copy [20000,30000) with no kernel alongside.
//   Busy 22 %, coverage 12 % (over half of busy: not low). Idle 78000; launching while idle
//   1000 → 1.28 %: not launch-bound; nothing blocks → CPU-starved. Serialized copies 10 %.
TEST(Top, CpuStarvedAndSerializedCopies) {
  TraceDb t = base_trace();
  kernel(t, 7, 1, 1000, 13000, 264, 1);
  t.api(100, 1, 10, 0, 1000, 1);
  t.copy({.stream = 8, .start = 20000, .end = 30000, .bytes = 100000000});
  const Report r = top(t.db()).at(0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "GPU Busy"), 22.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "SM Coverage"), 12.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Launch-Bound"), 1000.0 / 78000.0 * 100.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Sync-Blocked"), 0.0);
  EXPECT_EQ(warnings(r), (std::vector<std::string>{"CPU-starved", "serialized copies"}));
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning, "the GPU was idle 78 % of the wall time"));
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning, "1 of 1 host-device copies serialize with compute"));
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning, "10 µs, 10 % of the wall time"));
  // Not launch-bound: no CUDA graph saving is claimed.
  EXPECT_FALSE(has_note(r, "could save"));
}

// A busy, full GPU (idle 10 %, launching during 10 % of it): nothing fires; data loss first.
TEST(Top, HealthyRunSaysNoDiagnosisFiredAfterDataLoss) {
  TraceDb t = base_trace();
  kernel(t, 7, 1, 5000, 95000, 264, 1);
  t.api(100, 1, 10, 0, 1000, 1);
  t.add(store::rows::DataLoss{.pid = 100,
                              .what = "cupti_dropped_records",
                              .count = 3,
                              .severity = "data_loss",
                              .detail = "raise the buffer size"});
  const Report r = top(t.db()).at(0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "GPU Busy"), 90.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "SM Coverage"), 90.0);
  ASSERT_EQ(r.notes.size(), 3u);
  EXPECT_EQ(r.notes[0].level, NoteLevel::kDataLoss);
  EXPECT_EQ(r.notes[1].text.rfind("GPU Busy (%) is of the wall time", 0), 0u) << r.notes[1].text;
  EXPECT_EQ(r.notes[2].level, NoteLevel::kInfo);
  EXPECT_EQ(r.notes[2].text.rfind("no diagnosis fired: GPU busy 90 % of the wall time", 0), 0u) << r.notes[2].text;
}

// Copies only: the five numbers, no kernels, no coverage; never a division by zero.
TEST(Top, CopiesButNoKernels) {
  TraceDb t = base_trace();
  t.copy({.start = 0, .end = 100000, .bytes = 1000});
  const std::vector<Report> reports = top(t.db());
  const Report& r = reports[0];
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "GPU Busy"), 100.0);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[0][col(r, "SM Coverage")]));
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Launch-Bound"), 0.0);
  EXPECT_TRUE(reports[1].rows.empty());
  ASSERT_EQ(reports[1].notes.size(), 1u);
  EXPECT_EQ(reports[1].notes[0].text, "no CUDA kernels in the capture range");
}

TEST(Top, EmptyCapture) {
  TraceDb t;
  for (const Report& r : top(t.db())) {
    EXPECT_FALSE(r.columns.empty());
    EXPECT_TRUE(r.rows.empty()) << r.name;
    ASSERT_EQ(r.notes.size(), 1u);
    EXPECT_EQ(r.notes[0].text, "no GPU activity in the capture range");
  }
}

}  // namespace
}  // namespace gpuscope::analyze
