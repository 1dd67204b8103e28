// py_sum and gpu_idle_py (analyze/python/py_sample_reports.hpp) on hand-built event logs imported
// into traces (py_samples_trace.hpp: two threads sampled every 1 ms, a stack tree with a shared
// caller, samples with no frame, the GPU idle [10, 20) ms of 30 ms), with hand-computed answers;
// the whole reports are also diffed against tests/expected/py_samples/ (GPUSCOPE_REWRITE_EXPECTED=1
// rewrites).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../expect_file.hpp"
#include "py_samples_trace.hpp"
#include "analyze/common/trace_filter.hpp"
#include "analyze/nsys/top_report.hpp"
#include "analyze/python/py_sample_reports.hpp"
#include "analyze/report/report_page.hpp"
#include "analyze/report_registry.hpp"
#include "analyze/timeline/judged_window.hpp"
#include "render/report_render.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"

namespace gpuscope::analyze {
namespace {

using store::test::TempDir;

using test::build;
using test::kA;
using test::kB;
using test::kPid;
using test::Samples;

std::size_t col(const Report& r, const std::string& name, const std::string& unit = "") {
  for (std::size_t c = 0; c < r.columns.size(); ++c)
    if (r.columns[c].name == name && (unit.empty() || r.columns[c].unit == unit)) return c;
  ADD_FAILURE() << "no column " << name << " (" << unit << ") in " << r.name;
  return 0;
}
std::string text(const Report& r, std::size_t row, const std::string& name) {
  return std::get<std::string>(r.rows.at(row).at(col(r, name)));
}
std::int64_t integer(const Report& r, std::size_t row, const std::string& name, const std::string& unit = "") {
  return std::get<std::int64_t>(r.rows.at(row).at(col(r, name, unit)));
}
double real(const Report& r, std::size_t row, const std::string& name, const std::string& unit) {
  return std::get<double>(r.rows.at(row).at(col(r, name, unit)));
}
bool null(const Report& r, std::size_t row, const std::string& name, const std::string& unit) {
  return std::holds_alternative<std::monostate>(r.rows.at(row).at(col(r, name, unit)));
}
std::string notes(const Report& r) {
  std::string s;
  for (const Note& n : r.notes) s += n.text + "\n";
  return s;
}

TEST(PySum, SelfAndTotalPerThreadWithSharedCallersAndSamplesWithoutFrames) {
  TempDir dir;
  store::Database db = store::open_trace(build(dir, Samples::kEverywhere));
  const Report r = py_sum(db);
  ASSERT_EQ(r.rows.size(), 5u) << notes(r);
  // Thread A: <module> in every sample (Total 30), never innermost; step 20; load 10.
  const std::vector<std::string> frames{"train.py:57 <module>", "train.py:60 step", "data.py:123 load",
                                        "worker.py:5 spin", "worker.py:1 run"};
  const std::vector<std::int64_t> self{0, 20, 10, 25, 0}, total{30, 20, 10, 25, 25};
  for (std::size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(integer(r, i, "PID"), kPid);
    EXPECT_EQ(integer(r, i, "TID"), i < 3 ? kA : kB);
    EXPECT_EQ(text(r, i, "Frame"), frames[i]);
    EXPECT_EQ(integer(r, i, "Self Samples", "samples"), self[i]) << frames[i];
    EXPECT_EQ(integer(r, i, "Total Samples", "samples"), total[i]) << frames[i];
    // Percent of the thread's 30 samples (thread B's 5 without a frame included).
    EXPECT_NEAR(real(r, i, "Self", "%"), self[i] * 100.0 / 30, 1e-9) << frames[i];
    EXPECT_NEAR(real(r, i, "Total", "%"), total[i] * 100.0 / 30, 1e-9) << frames[i];
    // Period: the median interval, 1 ms.
    EXPECT_NEAR(real(r, i, "Self Time", "ms"), static_cast<double>(self[i]), 1e-9) << frames[i];
    EXPECT_NEAR(real(r, i, "Total Time", "ms"), static_cast<double>(total[i]), 1e-9) << frames[i];
  }
  EXPECT_TRUE(null(r, 0, "Self On CPU", "%"));  // never innermost
  EXPECT_NEAR(real(r, 1, "Self On CPU", "%"), 100.0, 1e-9);
  EXPECT_NEAR(real(r, 2, "Self On CPU", "%"), 0.0, 1e-9);
  const std::string n = notes(r);
  EXPECT_NE(n.find("5 of 30 samples of thread 1002 (pid 100) had no Python frame: the thread was idle in C code or "
                   "between calls"),
            std::string::npos)
      << n;
  EXPECT_NE(n.find("thread 1001 (pid 100) every 1 ms (30 samples)"), std::string::npos) << n;
  EXPECT_NE(n.find("median interval"), std::string::npos) << n;
  EXPECT_EQ(n.find("thread 1001 (pid 100) had"), std::string::npos) << n;  // A always had a frame
}

TEST(GpuIdlePy, ChargesEachGapToTheSamplesOfEachThreadInIt) {
  TempDir dir;
  store::Database db = store::open_trace(build(dir, Samples::kEverywhere));
  const Report r = gpu_idle_py(db);
  ASSERT_EQ(r.rows.size(), 5u) << notes(r);
  // Thread A: 10 samples in the 10 ms gap, 1 ms each, all in load ← <module>.
  EXPECT_EQ(integer(r, 0, "TID"), kA);
  EXPECT_EQ(text(r, 0, "Frame"), "data.py:123 load");
  EXPECT_EQ(text(r, 0, "Called From"), "train.py:57 <module>");
  EXPECT_NEAR(real(r, 0, "Self Idle Time", "ms"), 10.0, 1e-9);
  EXPECT_NEAR(real(r, 0, "Self Idle", "%"), 100.0, 1e-9);
  EXPECT_EQ(integer(r, 0, "Samples", "samples"), 10);
  EXPECT_NEAR(real(r, 0, "Total Idle Time", "ms"), 10.0, 1e-9);
  // The user's outer line shows through Total though it is never innermost.
  EXPECT_EQ(text(r, 1, "Frame"), "train.py:57 <module>");
  EXPECT_EQ(text(r, 1, "Called From"), "");
  EXPECT_NEAR(real(r, 1, "Self Idle Time", "ms"), 0.0, 1e-9);
  EXPECT_EQ(integer(r, 1, "Samples", "samples"), 0);
  EXPECT_NEAR(real(r, 1, "Total Idle", "%"), 100.0, 1e-9);
  // Thread B: 5 samples without a frame and 5 in spin ← run: 5 ms each.
  EXPECT_EQ(integer(r, 2, "TID"), kB);
  EXPECT_EQ(text(r, 2, "Frame"), "(no Python frame)");
  EXPECT_NEAR(real(r, 2, "Self Idle Time", "ms"), 5.0, 1e-9);
  EXPECT_EQ(integer(r, 2, "Samples", "samples"), 5);
  EXPECT_EQ(text(r, 3, "Frame"), "worker.py:5 spin");
  EXPECT_EQ(text(r, 3, "Called From"), "worker.py:1 run");
  EXPECT_NEAR(real(r, 3, "Self Idle", "%"), 50.0, 1e-9);
  EXPECT_EQ(text(r, 4, "Frame"), "worker.py:1 run");
  EXPECT_NEAR(real(r, 4, "Total Idle Time", "ms"), 5.0, 1e-9);
  EXPECT_NEAR(real(r, 4, "Self Idle Time", "ms"), 0.0, 1e-9);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_EQ(r.notes[0].text,
            "GPU idle 33 % of the wall time (10 ms of 30 ms in 1 gap); 100 % of that idle time was sampled in "
            "data.py:123 load ← train.py:57 <module> (thread 1001)");
}

// gpu_idle_py on a trace where it must not blame any line: no rows, and its headline.
std::string headline_without_rows(Samples samples,
                                  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& kernels) {
  TempDir dir;
  store::Database db = store::open_trace(build(dir, samples, kernels));
  const Report r = gpu_idle_py(db);
  EXPECT_TRUE(r.rows.empty());
  EXPECT_FALSE(py_sum(db).rows.empty());  // the samples are there
  return r.notes.empty() ? "" : r.notes[0].text;
}

// Samples only while the GPU is busy: nothing to blame.
TEST(GpuIdlePy, NoRowsWhenNoSampleFallsInAGap) {
  EXPECT_EQ(headline_without_rows(Samples::kBusyOnly, {{0, 10}, {20, 30}}),
            "GPU idle 33 % of the wall time (10 ms of 30 ms in 1 gap); no Python sample fell in it (sample more "
            "often: --python-sampling=RATE)");
}

// The GPU busy the whole window: no idle gap.
TEST(GpuIdlePy, SaysSoWhenTheGpuIsNeverIdle) {
  EXPECT_EQ(headline_without_rows(Samples::kEverywhere, {{0, 30}}),
            "GPU idle 0.0 % of the wall time (0 s of 30 ms in 0 gaps): the GPU was busy the whole window, no idle time "
            "to charge to Python lines");
}

// top's CPU-starved diagnosis (warning notes joined), GPU busy [0, 4) and [26, 30) ms: idle 22 of
// 30 ms. In the gap thread A is sampled 10 times in data.py:123 load and 12 times in train.py:60
// step; thread B 17 times in worker.py:5 spin and 5 times with no frame: 1 ms each.
std::string starved_warning(Samples samples) {
  TempDir dir;
  store::Database db = store::open_trace(build(dir, samples, {{0, 4}, {26, 30}}));
  const std::vector<Report> reports = top(db);
  std::string out;
  for (const Note& n : reports.at(0).notes)
    if (n.level == NoteLevel::kWarning) out += n.text + "\n";
  return out;
}

constexpr const char* kStarvedEvidence =
    "CPU-starved: the GPU was idle 73 % of the wall time, yet the CPU was inside launch calls during only 0.0 % of "
    "that idle time and blocked on the GPU 0.0 % of the wall time: it spends the gaps elsewhere (Python, framework "
    "dispatch, data loading); 1 times a kernel was enqueued after the GPU had finished the previous one on its "
    "stream";
constexpr const char* kStarvedAdvice =
    " — cut the CPU's work per step: a larger batch, faster data loading (DataLoader num_workers, pin_memory), "
    "torch.compile or a CUDA graph of the whole step to drop the per-operation CPU cost\n";

// With samples the diagnosis names the line with the largest share of the idle time (spin, 17 of
// 22 ms, over step's 12 and load's 10), with gpu_idle_py's numbers.
TEST(CpuStarved, NamesTheLineMostSampledWhileTheGpuIdled) {
  EXPECT_EQ(starved_warning(Samples::kEverywhere),
            std::string(kStarvedEvidence) +
                "; the Python samples put 77 % of the GPU's idle time in worker.py:5 spin ← worker.py:1 run (thread "
                "1002, see gpu_idle_py)" +
                kStarvedAdvice);
  TempDir dir;
  store::Database db = store::open_trace(build(dir, Samples::kEverywhere, {{0, 4}, {26, 30}}));
  const Report idle = gpu_idle_py(db);
  EXPECT_EQ(idle.notes.at(0).text,
            "GPU idle 73 % of the wall time (22 ms of 30 ms in 1 gap); 77 % of that idle time was sampled in "
            "worker.py:5 spin ← worker.py:1 run (thread 1002)");
}

// The same trace without samples: the diagnosis as before, no line.
TEST(CpuStarved, WithoutSamplesTheTextIsUnchanged) {
  EXPECT_EQ(starved_warning(Samples::kNone), std::string(kStarvedEvidence) + kStarvedAdvice);
}

// A trace without samples: a note that says how to get them, not an error; also through the registry.
TEST(PySampleReports, WithoutSamplesANoteSaysHowToGetThem) {
  TempDir dir;
  store::Database db = store::open_trace(build(dir, Samples::kNone));
  for (const char* name : {"py_sum", "gpu_idle_py"}) {
    const std::vector<Report> rs = run_report(db, name);
    ASSERT_EQ(rs.size(), 1u);
    EXPECT_TRUE(rs[0].rows.empty()) << name;
    ASSERT_EQ(rs[0].notes.size(), 1u) << name;
    EXPECT_NE(rs[0].notes[0].text.find("--python-sampling"), std::string::npos) << rs[0].notes[0].text;
    EXPECT_TRUE(is_judged_report(name)) << name;
  }
}

// A recursive function (the same file, line and function at three depths) counts once per sample
// in Total; a frame read on one line under two py_frames ids (one per instruction) is one row.
TEST(PySum, RecursionCountsOncePerSample) {
  TempDir dir;
  const std::string log = dir.file("r.gslog");
  {
    store::test::LogBuilder b(log, kPid);
    b.process(5'000'000);
    b.py_frame(1, "/srv/fact.py", 3, "fact", 1);
    b.py_frame(2, "/srv/fact.py", 3, "fact", 1);  // another instruction of the same line
    b.py_stack(1, 0, 1, 0);
    b.py_stack(2, 1, 2, 1);
    b.py_stack(3, 2, 1, 2);
    for (std::uint64_t k = 0; k < 3; ++k) b.py_sample(5'000'000 + k * 1'000'000, 7, 3, log::kPySampleOnCpu);
    b.end(9'000'000);
    b.flush();
  }
  store::ImportOptions opts;
  opts.overwrite = true;
  (void)store::import_logs({log}, dir.file("r.sqlite"), opts);
  store::Database db = store::open_trace(dir.file("r.sqlite"));
  const Report r = py_sum(db);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(text(r, 0, "Frame"), "fact.py:3 fact");
  EXPECT_EQ(integer(r, 0, "Self Samples", "samples"), 3);
  EXPECT_EQ(integer(r, 0, "Total Samples", "samples"), 3);
  EXPECT_NEAR(real(r, 0, "Total", "%"), 100.0, 1e-9);
  EXPECT_NEAR(real(r, 0, "Total Time", "ms"), 3.0, 1e-9);
}

// The window a filter (or the judged window) keeps: only the samples inside it count.
TEST(PySum, CountsOnlyTheSamplesOfTheWindow) {
  TempDir dir;
  store::Database whole = store::open_trace(build(dir, Samples::kEverywhere));
  TraceFilter f;
  f.from_ns = 12'000'000;  // since the start of the trace (the process start)
  f.to_ns = 18'000'000;
  FilteredTrace part = filter_trace(whole, f);
  const Report r = py_sum(part.db);
  // Thread A: 12.5 .. 17.5 ms, all in load ← <module>; thread B: 12.5 .. 14.5 ms without a frame,
  // 15.5 .. 17.5 in spin ← run.
  ASSERT_EQ(r.rows.size(), 4u) << notes(r);
  EXPECT_EQ(text(r, 0, "Frame"), "data.py:123 load");
  EXPECT_EQ(integer(r, 0, "Self Samples", "samples"), 6);
  EXPECT_EQ(text(r, 1, "Frame"), "train.py:57 <module>");
  EXPECT_EQ(integer(r, 1, "Total Samples", "samples"), 6);
  EXPECT_EQ(integer(r, 2, "Self Samples", "samples"), 3);
  EXPECT_NEAR(real(r, 2, "Self", "%"), 50.0, 1e-9);
  EXPECT_NE(notes(r).find("3 of 6 samples of thread 1002 (pid 100) had no Python frame"), std::string::npos)
      << notes(r);
}

std::string rendered(const Report& r, render::Format format) {
  std::ostringstream out;
  render::render(std::vector<Report>{r}, format, out);
  return out.str();
}

// What a user sees: table, csv and json of both reports on the two-thread trace.
TEST(PySampleReports, RenderedAsExpected) {
  TempDir dir;
  store::Database db = store::open_trace(build(dir, Samples::kEverywhere));
  for (const char* name : {"py_sum", "gpu_idle_py"}) {
    const Report r = run_report(db, name).at(0);
    test::expect_matches_file(rendered(r, render::Format::kTable), "py_samples/" + std::string(name) + ".txt");
    test::expect_matches_file(rendered(r, render::Format::kCsv), "py_samples/" + std::string(name) + ".csv");
    test::expect_matches_file(rendered(r, render::Format::kJson), "py_samples/" + std::string(name) + ".json");
  }
}

// The report page's flame graph: each (thread, stack) sampled in the idle gap [10, 20) ms with
// the idle time charged to it (1 ms a sample: each thread took 10 samples in the 10 ms gap).
TEST(PySampleReports, ReportPageFlameStacksCarryTheChargedIdleTime) {
  TempDir dir;
  store::Database db = store::open_trace(build(dir, Samples::kEverywhere));
  const ReportPage page = report_page(db, {.timeline = false});
  EXPECT_NEAR(page.python_idle_ns, 10e6, 1);
  std::map<std::string, double> ms;
  for (const PageIdleStack& s : page.python_idle) {
    std::string path;
    for (const std::string& f : s.frames) path += (path.empty() ? "" : " / ") + f;
    ms[path] += s.idle_ns / 1e6;
  }
  const std::map<std::string, double> want = {
      {"thread 1001 / train.py:57 <module> / data.py:123 load", 10.0},
      {"thread 1002 / (no Python frame)", 5.0},
      {"thread 1002 / worker.py:1 run / worker.py:5 spin", 5.0},
  };
  ASSERT_EQ(ms.size(), want.size());
  for (const auto& [path, v] : want) EXPECT_NEAR(ms[path], v, 1e-6) << path;
  // Without samples: no stacks, no section.
  TempDir none_dir;
  store::Database none = store::open_trace(build(none_dir, Samples::kNone));
  EXPECT_TRUE(report_page(none, {.timeline = false}).python_idle.empty());
}

}  // namespace
}  // namespace gpuscope::analyze
