// The verdict corpus: for every diagnosis of `gpuscope stats`, a trace where it must fire and
// one where it must not, built through the typed row writer (trace_db.hpp), including the
// shapes where a verdict once contradicted its evidence (docs/stats.md, "Diagnoses"):
//   - cnn-pytorch: 4-byte pinned .item() reads beside pageable uploads, copies 0.1 % of the run;
//   - cnn: big gaps between kernels while not launch-bound (no CUDA graph saving may be claimed);
//   - a launch loop with the GPU 99 % busy (the 1M-launch trace, scaled down): not
//     launch-bound, not sync-blocked, and the Launch-Bound column says it is of the idle time;
//   - a loop of large device-to-device copies: never serialized, never pinned-memory advice.
// Each case also checks that the detailed report (gpu_util, launch_overhead, sync_wait,
// memcpy_check) says the same as top.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analyze/nsys/gpu_util_report.hpp"
#include "analyze/nsys/launch_reports.hpp"
#include "analyze/nsys/memcpy_check.hpp"
#include "analyze/nsys/top_report.hpp"
#include "comm_trace.hpp"
#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using test::has_note;
using test::TraceDb;
namespace rows = store::rows;

constexpr int kLaunch = 10, kSync = 11, kK = 1;

// pid 100, one H100, a process [0, wall).
TraceDb base(long long wall) {
  TraceDb t;
  t.add(rows::Process{.pid = 100, .start_ns = 0, .end_ns = wall, .ended_cleanly = 1});
  t.h100(100);
  t.strings({{kK, "k"}, {kLaunch, "cudaLaunchKernel"}, {kSync, "cudaDeviceSynchronize"}});
  return t;
}

// A kernel of `grid` blocks of 1024 threads (2 per SM: min(132, grid / 2) SMs) and its launch call.
void launched(TraceDb& t, int corr, long long call_start, long long call_end, long long start, long long end,
              int grid = 264) {
  rows::Kernel k = TraceDb::kernel_row(100, 0, 7, corr, start, end, kK);
  k.grid_x = grid;
  k.block_x = 1024;
  k.static_shared_memory = 0;
  k.dynamic_shared_memory = 0;
  t.add(k);
  t.api(100, 1, kLaunch, call_start, call_end, corr);
}

bool fires(const Report& top_row, const std::string& name) {
  const std::vector<std::string> w = test::warnings(top_row);
  return std::find(w.begin(), w.end(), name) != w.end();
}

// launch-bound: 10 launches of 9 µs each feeding 1 µs kernels → idle 90 %, launching 100 % of it.
TraceDb launch_loop() {
  TraceDb t = base(100'000);
  for (int i = 0; i < 10; ++i)
    launched(t, i + 1, i * 10'000, i * 10'000 + 9'000, i * 10'000 + 9'000, i * 10'000 + 10'000);
  return t;
}

TEST(VerdictCorpus, LaunchBound) {
  TraceDb yes = launch_loop();
  const Report r = top(yes.db()).at(0);
  EXPECT_TRUE(fires(r, "launch-bound"));
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning, "a CUDA graph could save up to"));
  EXPECT_TRUE(has_note(launch_overhead(yes.db()), NoteLevel::kWarning, "launch-bound: "));
  const detail::LaunchBound lb = detail::launch_bound(yes.db());
  EXPECT_LE(lb.graph_saving_bound_ns, lb.idle_ns_untraced);  // never more than the idle time

  // The 1M-launch shape: the GPU 99 % busy, the CPU launching during most of the 1 % idle.
  TraceDb no = base(100'000);
  for (int i = 0; i < 10; ++i)
    launched(no, i + 1, i * 10'000, i * 10'000 + 9'950, i * 10'000 + 100, i * 10'000 + 10'000);
  no.api(100, 1, kSync, 0, 100'000, 99);
  const Report n = top(no.db()).at(0);
  EXPECT_FALSE(fires(n, "launch-bound"));
  EXPECT_GT(test::cell<double>(n, 0, "Launch-Bound"), 50.0);  // a share of the idle time ...
  EXPECT_TRUE(has_note(n, NoteLevel::kInfo, "Launch-Bound (%) is of the GPU's idle time (1.0 % of the wall time)"));
  EXPECT_FALSE(has_note(n, "could save"));
  // ... and blocking while the GPU works is fine: not sync-blocked, here or in sync_wait.
  EXPECT_FALSE(fires(n, "sync-blocked"));
  EXPECT_TRUE(has_note(sync_wait(no.db()), NoteLevel::kInfo, "not sync-blocked: the CPU was blocked on the GPU 100 %"));
}

// cnn's shape: the GPU idles between kernels, the CPU mostly outside launch calls.
TEST(VerdictCorpus, CpuStarvedClaimsNoGraphSaving) {
  TraceDb yes = base(100'000);
  for (int i = 0; i < 5; ++i)
    launched(yes, i + 1, i * 20'000, i * 20'000 + 1'000, i * 20'000 + 15'000, i * 20'000 + 17'000);
  const Report r = top(yes.db()).at(0);
  EXPECT_TRUE(fires(r, "CPU-starved"));
  EXPECT_FALSE(fires(r, "launch-bound"));
  EXPECT_FALSE(has_note(r, "could save"));
  EXPECT_FALSE(has_note(launch_overhead(yes.db()), "could save"));
  EXPECT_TRUE(has_note(launch_overhead(yes.db()), "no CUDA graph saving is claimed"));

  TraceDb no = base(100'000);
  launched(no, 1, 0, 1'000, 1'000, 99'000);
  EXPECT_FALSE(fires(top(no.db()).at(0), "CPU-starved"));
}

TEST(VerdictCorpus, SyncBlocked) {
  // The CPU waits 40 % of the run, the GPU idle 80 %.
  TraceDb yes = base(100'000);
  launched(yes, 1, 0, 1'000, 1'000, 21'000);
  yes.api(100, 1, kSync, 1'000, 41'000, 2);
  EXPECT_TRUE(fires(top(yes.db()).at(0), "sync-blocked"));
  EXPECT_TRUE(has_note(sync_wait(yes.db()), NoteLevel::kWarning, "sync-blocked: "));
  EXPECT_FALSE(fires(top(yes.db()).at(0), "CPU-starved"));
  // No waits: nothing.
  TraceDb no = base(100'000);
  launched(no, 1, 0, 1'000, 1'000, 21'000);
  EXPECT_FALSE(fires(top(no.db()).at(0), "sync-blocked"));
}

TEST(VerdictCorpus, LowSmCoverageAgreesWithGpuUtil) {
  TraceDb yes = base(100'000);
  launched(yes, 1, 0, 1'000, 1'000, 91'000, 20);  // 10 of 132 SMs, 90 % busy
  EXPECT_TRUE(fires(top(yes.db()).at(0), "low SM coverage"));
  EXPECT_TRUE(has_note(gpu_util(yes.db()), NoteLevel::kWarning, "GPU 0: low SM coverage: "));
  TraceDb no = base(100'000);
  launched(no, 1, 0, 1'000, 1'000, 91'000, 264);
  EXPECT_FALSE(fires(top(no.db()).at(0), "low SM coverage"));
  EXPECT_TRUE(test::warnings(gpu_util(no.db())).empty());
}

TEST(VerdictCorpus, PageableCopies) {
  // 1 MiB pageable uploads taking 10 % of the run.
  TraceDb yes = base(100'000);
  launched(yes, 1, 0, 1'000, 1'000, 50'000);
  yes.copy({.start = 60'000, .end = 70'000, .bytes = 1 << 20, .src = "pageable"});
  EXPECT_TRUE(fires(top(yes.db()).at(0), "pageable copies"));
  EXPECT_TRUE(has_note(memcpy_check(yes.db()), "pin the pageable host buffers first"));

  // cnn-pytorch's shape: 300 KB of pageable uploads and 4-byte pinned .item() reads, all copies
  // 0.1 % of the run: no pinning verdict, and the .item() reads are not the pinned yardstick.
  TraceDb no = base(10'000'000);
  launched(no, 1, 0, 1'000, 1'000, 1'000'000);
  for (int i = 0; i < 6; ++i) {
    no.copy(
        {.start = 2'000'000 + i * 10'000, .end = 2'000'000 + i * 10'000 + 2'000, .bytes = 51'292, .src = "pageable"});
    no.copy({.start = 3'000'000 + i * 10'000,
             .end = 3'000'000 + i * 10'000 + 1'500,
             .bytes = 4,
             .kind = "DtoH",
             .src = "device",
             .dst = "pinned"});
  }
  const Report n = top(no.db()).at(0);
  EXPECT_FALSE(fires(n, "pageable copies"));
  const Report m = memcpy_check(no.db());
  EXPECT_TRUE(test::warnings(m).empty());
  EXPECT_FALSE(has_note(m, "for pinned copies"));
  EXPECT_FALSE(has_note(m, "pin the pageable host buffers first"));
  EXPECT_TRUE(has_note(m, "copies are not what holds this program back"));
}

TEST(VerdictCorpus, SerializedCopies) {
  // A pinned download alone on the GPU for 10 % of the run.
  TraceDb yes = base(100'000);
  launched(yes, 1, 0, 1'000, 1'000, 50'000);
  yes.copy({.start = 60'000, .end = 70'000, .bytes = 100'000'000, .kind = "DtoH", .src = "device", .dst = "pinned"});
  EXPECT_TRUE(fires(top(yes.db()).at(0), "serialized copies"));

  // A loop of 1 GiB y.copy_(x): device-to-device copies, the whole run, no kernel beside them.
  TraceDb no = base(1'000'000);
  for (int i = 0; i < 4; ++i)
    no.copy({.start = i * 250'000,
             .end = i * 250'000 + 249'000,
             .bytes = 1LL << 30,
             .kind = "DtoD",
             .src = "device",
             .dst = "device"});
  const Report n = top(no.db()).at(0);
  EXPECT_FALSE(fires(n, "serialized copies"));
  EXPECT_FALSE(fires(n, "pageable copies"));
  const Report m = memcpy_check(no.db());
  EXPECT_TRUE(test::warnings(m).empty());
  for (const Report* rep : {&n, &m})
    for (const Note& note : rep->notes) EXPECT_EQ(note.text.find("pinned"), std::string::npos) << note.text;
  EXPECT_TRUE(has_note(m, "4 device copies (device-to-device or peer)"));
}

TEST(VerdictCorpus, ExposedCommunicationAndStraggler) {
  TraceDb yes;
  test::build_comm_job(yes, test::CommJob{});  // 20 % exposed, rank 2 late by 10 % of a step
  const Report r = top(yes.db()).at(0);
  EXPECT_TRUE(fires(r, "exposed communication"));
  EXPECT_TRUE(fires(r, "straggler"));

  TraceDb on_time;
  test::build_comm_job(on_time, test::CommJob{.delay_ns = 0});
  EXPECT_FALSE(fires(top(on_time.db()).at(0), "straggler"));
  // One GPU, no collectives: no communication verdicts.
  TraceDb single = launch_loop();
  const Report s = top(single.db()).at(0);
  EXPECT_FALSE(fires(s, "exposed communication"));
  EXPECT_FALSE(fires(s, "straggler"));
}

}  // namespace
}  // namespace gpuscope::analyze
