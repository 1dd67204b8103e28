#include "analyze/nsys/launch_reports.hpp"

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "analyze/nsys/nsys_reports.hpp"
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
namespace rows = store::rows;

void api(TraceDb& t, int name_id, long long start, long long end, int corr) { t.api(1, 1, name_id, start, end, corr); }

// Wall [0, 1000). Stream 7: K1 [100,200) launched by [50,90); K2 [300,350) by [150,190);
// K3 [360,400) by [300,365). cudaMalloc [0,1000) is not a launch call.
//   Queue delays: 100-90 = 10, 300-190 = 110, 360-365 = -5 → avg 115/3, median 10.
//   Launch times 40, 40, 65 → avg 145/3; GPU times 100, 50, 40 → avg 190/3.
//   Busy 190 → idle 810. Launching while idle: [50,90) 40 + [350,360) 10 = 50 ([150,190) is busy).
//   Graph saving: K1→K2: launch end 190 < K1 end 200 → no; K2→K3: 365 > 350 → 360-350 = 10.
TEST(LaunchOverhead, HandComputedStream) {
  TraceDb t;
  t.strings({{1, "k(float*)"}, {2, "k"}, {10, "cudaLaunchKernel"}, {11, "cudaMalloc"}});
  t.add(rows::CaptureWindow{.pid = 1, .start_ns = 0, .end_ns = 1000, .reason = "all"});
  auto kernel = [&](int corr, long long start, long long end) {  // short name "k"
    rows::Kernel k = TraceDb::kernel_row(1, 0, 7, corr, start, end, 1);
    k.short_name_id = 2;
    t.add(k);
  };
  kernel(1, 100, 200);
  kernel(2, 300, 350);
  kernel(3, 360, 400);
  api(t, 10, 50, 90, 1);
  api(t, 10, 150, 190, 2);
  api(t, 10, 300, 365, 3);
  api(t, 11, 0, 1000, 4);

  const Report r = launch_overhead(t.db());
  EXPECT_EQ(r.name, "launch_overhead");
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(cell<std::string>(r, 0, "Name"), "k");
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Launches"), 3);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "CPU Launch Time avg"), 145.0 / 3);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "GPU Time avg"), 190.0 / 3);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Queue Delay avg"), 115.0 / 3);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Queue Delay median"), 10.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Launch/GPU"), (145.0 / 3) / (190.0 / 3));
  EXPECT_TRUE(has_note(r, "wall 1 µs, GPU idle 810 ns, CPU launching while the GPU was idle 50 ns")) << r.notes[0].text;
  // Not launch-bound: the gap is reported, no saving claimed.
  EXPECT_TRUE(has_note(r,
                       "1 gaps where a kernel's launch call returned after the previous kernel on its stream had "
                       "finished (10 ns in all); no CUDA graph saving is claimed"));
  EXPECT_TRUE(has_note(r, "not launch-bound: the GPU was idle 81 %"));
}

// Wall [0,100). Kernel [90,100) launched by [0,85); a kernel [20,30) on stream 8 with no
// launch call. Busy 20 → idle 80; launching while idle = 85 - 10 = 75 → 93.75 %.
TEST(LaunchOverhead, LaunchBoundVerdictAndUnmatchedKernel) {
  TraceDb t;
  t.strings({{1, "k"}, {10, "cudaLaunchKernel"}});
  t.add(rows::CaptureWindow{.pid = 1, .start_ns = 0, .end_ns = 100, .reason = "all"});
  t.kernel(1, 0, 7, 1, 90, 100, 1);
  t.kernel(1, 0, 8, 99, 20, 30, 1);
  api(t, 10, 0, 85, 1);
  const Report r = launch_overhead(t.db());
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Launches"), 1);
  EXPECT_EQ(cell<std::string>(r, 0, "Name"), "k");  // no short name → demangled name
  EXPECT_TRUE(has_note(r, "1 kernels have no launch call"));
  EXPECT_TRUE(has_note(r, "GPU idle 80 ns, CPU launching while the GPU was idle 75 ns"));
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning,
                       "launch-bound: the GPU was idle 80 % of the wall time and the CPU was inside launch calls "
                       "during 94 % of that idle time"));
  EXPECT_FALSE(has_note(r, "not launch-bound"));
}

// Wall [0,1000). cudaStreamSynchronize [100,200) and [300,400); cudaMemcpy [500,550);
// cudaMemcpyAsync [600,700) (not blocking); cudaDeviceSynchronize [800,1000); a
// stream_synchronize record [110,200) inside the first call. Union 100+100+50+200 = 450.
TEST(SyncWait, HandComputed) {
  TraceDb t;
  t.strings(
      {{10, "cudaStreamSynchronize"}, {11, "cudaMemcpy"}, {12, "cudaMemcpyAsync"}, {13, "cudaDeviceSynchronize"}});
  t.add(rows::CaptureWindow{.pid = 1, .start_ns = 0, .end_ns = 1000, .reason = "all"});
  api(t, 10, 100, 200, 5);
  api(t, 10, 300, 400, 6);
  api(t, 11, 500, 550, 7);
  api(t, 12, 600, 700, 8);
  api(t, 13, 800, 1000, 9);
  t.add(rows::Sync{.pid = 1,
                   .tid = 1,
                   .context_id = 1,
                   .stream_id = 7,
                   .sync_type = "stream_synchronize",
                   .start_ns = 110,
                   .end_ns = 200,
                   .correlation_id = 5});
  const Report r = sync_wait(t.db());
  EXPECT_EQ(r.name, "sync_wait");
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(cell<std::string>(r, 0, "Name"), "cudaDeviceSynchronize");  // tie at 200: by name
  EXPECT_EQ(cell<std::string>(r, 1, "Name"), "cudaStreamSynchronize");
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Calls"), 2);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Total Blocked"), 200);
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "Avg"), 100.0);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Max"), 100);
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "Blocked"), 20.0);
  EXPECT_EQ(cell<std::string>(r, 2, "Name"), "[sync] stream_synchronize");
  EXPECT_EQ(cell<std::int64_t>(r, 2, "Total Blocked"), 90);
  EXPECT_EQ(cell<std::string>(r, 3, "Name"), "cudaMemcpy");
  EXPECT_DOUBLE_EQ(cell<double>(r, 3, "Blocked"), 5.0);
  EXPECT_TRUE(has_note(r, "total blocked: 450 ns"));
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning,
                       "sync-blocked: the CPU was blocked on the GPU 45 % of the wall time, mostly in "
                       "cudaDeviceSynchronize, and the GPU was idle"));
  EXPECT_FALSE(has_note(r, "Python lines"));  // no call sites in this trace
}

// The notes of `r`, one a line (level: text).
std::string notes_text(const Report& r) {
  std::string out;
  for (const Note& n : r.notes) out += std::string(n.level == NoteLevel::kWarning ? "W: " : "I: ") + n.text + "\n";
  return out;
}

// train.py:57 (<module>) calls loss_value (train.py:12), whose .item() waits [100,400); and
// torch.cuda.synchronize() (torch's own Python, skipped) at train.py:57 waits [500,600).
// `stacks`: with the call sites of --python-callsites, or the same calls without them.
Report sync_wait_of_two_lines(bool stacks) {
  TraceDb t;
  t.strings({{10, "cudaStreamSynchronize"},
             {13, "cudaDeviceSynchronize"},
             {20, "/home/u/train.py"},
             {21, "/usr/lib/python3/dist-packages/torch/cuda/__init__.py"},
             {22, "<module>"},
             {23, "loss_value"},
             {24, "synchronize"}});
  t.add(rows::CaptureWindow{.pid = 1, .start_ns = 0, .end_ns = 1000, .reason = "all"});
  if (stacks) {
    t.add({rows::PyFrame{.id = 1, .pid = 1, .file_id = 20, .function_id = 22, .line = 57, .first_line = 1},
           rows::PyFrame{.id = 2, .pid = 1, .file_id = 20, .function_id = 23, .line = 12, .first_line = 11},
           rows::PyFrame{.id = 3, .pid = 1, .file_id = 21, .function_id = 24, .line = 800, .first_line = 790}});
    t.add({rows::PyStack{.id = 1, .pid = 1, .parent_id = std::nullopt, .frame_id = 1, .depth = 0},
           rows::PyStack{.id = 2, .pid = 1, .parent_id = 1, .frame_id = 2, .depth = 1},
           rows::PyStack{.id = 3, .pid = 1, .parent_id = 1, .frame_id = 3, .depth = 1}});
  }
  t.api(1, 1, 10, 100, 400, 1, stacks ? rows::OptInt(2) : std::nullopt);
  t.api(1, 1, 13, 500, 600, 2, stacks ? rows::OptInt(3) : std::nullopt);
  return sync_wait(t.db());
}

constexpr const char* kSyncNotes =
    "I: total blocked: 400 ns (union over threads and rows; an API call and its sync record count once), 40 % of "
    "the wall time\n";
constexpr const char* kSyncVerdict =
    "W: sync-blocked: the CPU was blocked on the GPU 40 % of the wall time, mostly in cudaStreamSynchronize";
constexpr const char* kSyncVerdictEnd =
    ", and the GPU was idle 100 % of the wall time — remove .item(), .cpu(), printing tensors and "
    "torch.cuda.synchronize() from the loop, and copy with non_blocking=True from pinned memory (see sync_wait)\n";

// With Python call sites: the user's lines that waited, by time blocked, each with its caller,
// its call and its share of the wait; the verdict names the first.
TEST(SyncWait, NamesTheUserLineThatWaited) {
  EXPECT_EQ(notes_text(sync_wait_of_two_lines(true)),
            std::string(kSyncNotes) +
                "I: the Python lines that waited longest: train.py:12 loss_value ← train.py:57 <module> "
                "(cudaStreamSynchronize: 1 call, 300 ns, 75 % of the wait); train.py:57 <module> "
                "(cudaDeviceSynchronize: 1 call, 100 ns, 25 % of the wait)\n" +
                kSyncVerdict +
                " (75 % of the wait at train.py:12 loss_value ← train.py:57 <module>, in cudaStreamSynchronize)" +
                kSyncVerdictEnd);
}

// The same calls without call sites: no line named, the text as before.
TEST(SyncWait, WithoutCallSitesTheTextIsUnchanged) {
  EXPECT_EQ(notes_text(sync_wait_of_two_lines(false)), std::string(kSyncNotes) + kSyncVerdict + kSyncVerdictEnd);
}

// launch_overhead with call sites at every launch (--python-callsites=all): the lines whose
// launch calls took longest; without them, no such note and the other notes unchanged.
Report launches_of_two_lines(bool stacks) {
  TraceDb t;
  t.strings({{1, "k"},
             {2, "cudaLaunchKernel"},
             {3, "cudaStreamSynchronize"},
             {20, "/w/model.py"},
             {21, "/w/train.py"},
             {22, "forward"},
             {23, "<module>"}});
  t.add(rows::CaptureWindow{.pid = 1, .start_ns = 0, .end_ns = 10000, .reason = "all"});
  if (stacks) {
    t.add({rows::PyFrame{.id = 1, .pid = 1, .file_id = 21, .function_id = 23, .line = 30, .first_line = 1},
           rows::PyFrame{.id = 2, .pid = 1, .file_id = 20, .function_id = 22, .line = 8, .first_line = 5}});
    t.add({rows::PyStack{.id = 1, .pid = 1, .parent_id = std::nullopt, .frame_id = 1, .depth = 0},
           rows::PyStack{.id = 2, .pid = 1, .parent_id = 1, .frame_id = 2, .depth = 1}});
  }
  // Three launches from forward (300 ns of launch calls), one from <module> (100 ns); a sync
  // call with a stack is no launch and is not counted.
  const auto at = [&](int id) { return stacks ? rows::OptInt(id) : std::nullopt; };
  for (int i = 0; i < 3; ++i) {
    t.api(1, 1, 2, 1000 * i, 1000 * i + 100, i + 1, at(2));
    t.kernel(1, 0, 7, i + 1, 1000 * i + 500, 1000 * i + 600, 1);
  }
  t.api(1, 1, 2, 5000, 5100, 4, at(1));
  t.kernel(1, 0, 7, 4, 5500, 5600, 1);
  t.api(1, 1, 3, 6000, 9000, 5, at(1));
  return launch_overhead(t.db());
}

TEST(LaunchOverhead, NamesTheLinesLaunchingMost) {
  const std::string with = notes_text(launches_of_two_lines(true));
  const std::string without = notes_text(launches_of_two_lines(false));
  const std::string line =
      "I: the Python lines launching most: model.py:8 forward ← train.py:30 <module> (cudaLaunchKernel: 3 calls, "
      "300 ns, 75 % of the launch calls' time); train.py:30 <module> (cudaLaunchKernel: 1 call, 100 ns, 25 % of "
      "the launch calls' time)\n";
  const std::size_t at = with.find(line);
  ASSERT_NE(at, std::string::npos) << with;
  EXPECT_EQ(with.substr(0, at) + with.substr(at + line.size()), without);  // the rest as before
  EXPECT_EQ(without.find("Python"), std::string::npos) << without;
}

TEST(LaunchReports, EmptyDatabaseGivesNoRowsAndANote) {
  TraceDb t;
  for (std::string_view name : {"launch_overhead", "sync_wait"}) {
    const Report r = run_report(t.db(), name).at(0);
    EXPECT_EQ(r.name, name);
    EXPECT_FALSE(r.columns.empty());
    EXPECT_TRUE(r.rows.empty()) << name;
    ASSERT_EQ(r.notes.size(), 1u) << name;
    EXPECT_EQ(r.notes[0].text.rfind("no ", 0), 0u) << r.notes[0].text;
    EXPECT_NE(r.notes[0].text.find("in the capture range"), std::string::npos) << r.notes[0].text;
  }
}

TEST(LaunchReports, RegisteredButNotDefault) {
  const auto all = all_report_names();
  const auto def = report_names();
  for (std::string_view n : {"launch_overhead", "sync_wait"}) {
    EXPECT_NE(std::find(all.begin(), all.end(), n), all.end()) << n;
    EXPECT_EQ(std::find(def.begin(), def.end(), n), def.end()) << n;
  }
}

// tests/data/cnn.sqlite: 306 kernels; those with a launch call are counted by SQL.
TEST(LaunchReports, CommittedTrace) {
  store::Database db = store::open_trace(gpuscope::test::committed_trace("cnn"));
  store::Statement st = db.prepare(
      "SELECT COUNT(*) FROM kernels k WHERE EXISTS (SELECT 1 FROM api_calls a "
      "WHERE a.pid = k.pid AND a.correlation_id = k.correlation_id)");
  ASSERT_TRUE(st.step());
  const std::int64_t launched = st.column_int(0);
  EXPECT_GT(launched, 0);
  EXPECT_LE(launched, 306);

  const Report lo = launch_overhead(db);
  ASSERT_FALSE(lo.rows.empty());
  std::int64_t launches = 0;
  for (std::size_t i = 0; i < lo.rows.size(); ++i) launches += cell<std::int64_t>(lo, i, "Launches");
  EXPECT_EQ(launches, launched);

  const Report sw = sync_wait(db);
  bool found = false;
  for (std::size_t i = 0; i < sw.rows.size(); ++i) {
    if (cell<std::string>(sw, i, "Name") != "cudaStreamSynchronize") continue;
    found = true;
    EXPECT_EQ(cell<std::int64_t>(sw, i, "Calls"), 6);
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace gpuscope::analyze
