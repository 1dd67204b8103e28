// analyze/timeline/judged_window: the one window the headlines judge, found from each source in
// turn — PyTorch steps (the committed cnn-pytorch recording), NVTX ranges named like steps ("step
// N", torch.profiler's "ProfilerStep#N"), iterations found in the GPU work, none (from the first
// GPU work on, "no repeating structure") — and --whole-run. Hand-built traces: a long set-up
// (one kernel at 0.1 ms), then 8 steps of three kernels each from 1 ms on, the first step three
// times as long as the others (warm-up).
#include "analyze/timeline/judged_window.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "../committed_traces.hpp"
#include "../store/log_builder.hpp"
#include "analyze/diff/trace_diff.hpp"
#include "analyze/nsys/trace_summary.hpp"
#include "analyze/report_registry.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"
#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using store::test::LogBuilder;
using store::test::TempDir;

constexpr std::uint32_t kPid = 300;
constexpr std::uint64_t kSetup = 100'000, kFirst = 1'000'000, kStep = 200'000;

// Where step k (0-based) starts and ends.
std::uint64_t step_start(int k) { return kFirst + (k == 0 ? 0 : 3 * kStep + (k - 1) * kStep); }
std::uint64_t step_end(int k) { return step_start(k + 1) - 10'000; }

// `name` ("step %d", "ProfilerStep#%d"; empty: no NVTX ranges) names the ranges around the steps.
// repeat = false: every launch runs a different kernel (nothing repeats).
std::string build(const TempDir& dir, const std::string& file, const std::string& name, bool repeat = true,
                  int steps = 8) {
  const std::string log = dir.file(file + ".gslog");
  {
    LogBuilder b(log, kPid);
    b.process(0);
    b.device(0, "NVIDIA H100 80GB HBM3");
    std::uint32_t corr = 0;
    b.api(kSetup - 5'000, kSetup, kPid, ++corr, "cudaLaunchKernel");
    b.kernel(kSetup, kSetup + 20'000, corr, "setup_kernel");
    for (int k = 0; k < steps; ++k) {
      const std::uint64_t s = step_start(k);
      char label[64];
      std::snprintf(label, sizeof label, name.c_str(), k + 1);
      if (!name.empty()) b.push(s, kPid, label);
      int i = 0;
      for (const char* kernel : {"gemm", "relu", "loss"}) {
        const std::uint64_t t = s + 10'000 + 40'000 * static_cast<std::uint64_t>(i++);
        b.api(t, t + 5'000, kPid, ++corr, "cudaLaunchKernel");
        b.kernel(t + 8'000, t + 28'000, corr, repeat ? std::string(kernel) : std::string(kernel) + std::to_string(k));
      }
      if (!name.empty()) b.pop(step_end(k), kPid);
    }
    b.end(step_start(steps) + 100'000);
    b.flush();
  }
  const std::string db = dir.file(file + ".sqlite");
  store::ImportOptions opts;
  opts.command = "./train";
  opts.launched_pid = kPid;
  opts.exit_status = 0;
  opts.start_time = "2026-12-05T08:00:00+0000";
  opts.gpuscope_version = "0.1.0";
  (void)store::import_logs({log}, db, opts);
  return db;
}

std::string notes(const Report& r) {
  std::string s;
  for (const Note& n : r.notes) s += n.text + "\n";
  return s;
}

std::size_t steady(const JudgedWindow& j) {
  std::size_t n = 0;
  for (const StepFacts& f : j.steps) n += f.kind == StepFacts::Kind::kSteady;
  return n;
}

TEST(StepRangeName, MatchesStepNamesOnly) {
  for (const char* yes : {"step", "Step 3", "STEP_12", "step#4", "iteration", "iteration 7", "iter 5", "train_step",
                          "train step 2", "ProfilerStep#7", "profilerstep#12", " step 1 "})
    EXPECT_TRUE(is_step_range_name(yes)) << yes;
  for (const char* no : {"stepper", "optimizer step", "step forward", "forward", "iterate", "ProfilerStep",
                         "step 1 of 3", "aten::step", ""})
    EXPECT_EQ(is_step_range_name(no), std::string(no) == "ProfilerStep") << no;
}

class JudgedWindowTest : public ::testing::Test {
 protected:
  TempDir m_dir;
};

TEST_F(JudgedWindowTest, NvtxStepRanges) {
  store::Database db = store::open_trace(build(m_dir, "nvtx", "step %d"));
  const JudgedWindow j = judged_window(db);
  EXPECT_EQ(j.source, StepSource::kNvtx);
  ASSERT_EQ(j.steps.size(), 8u);
  EXPECT_EQ(j.steps[0].kind, StepFacts::Kind::kWarmup);  // 3 x the others
  EXPECT_EQ(steady(j), 7u);
  EXPECT_EQ(j.steps[0].label, "step 1");
  EXPECT_EQ(j.steps[2].kernels, 3);
  ASSERT_TRUE(j.window);
  EXPECT_EQ(j.window->first, static_cast<std::int64_t>(step_start(1)));
  EXPECT_EQ(j.window->second, static_cast<std::int64_t>(step_end(7)));
  EXPECT_EQ(j.note.rfind("judged the steady state: 7 of 8 NVTX ranges named like steps, ", 0), 0u) << j.note;
  EXPECT_NE(j.note.find("1 warm-up left out"), std::string::npos) << j.note;
  EXPECT_NE(j.note.find("--whole-run for the whole process"), std::string::npos) << j.note;
}

TEST_F(JudgedWindowTest, ProfilerStepRanges) {
  store::Database db = store::open_trace(build(m_dir, "prof", "ProfilerStep#%d"));
  const JudgedWindow j = judged_window(db);
  EXPECT_EQ(j.source, StepSource::kNvtx);
  EXPECT_EQ(j.steps.size(), 8u);
  ASSERT_TRUE(j.window);
  EXPECT_EQ(j.window->first, static_cast<std::int64_t>(step_start(1)));
}

// Ranges not named like steps are not steps: the iterations of the GPU work are.
TEST_F(JudgedWindowTest, IterationsFoundInTheGpuWork) {
  for (const char* name : {"", "phase %d"}) {
    store::Database db = store::open_trace(build(m_dir, name[0] ? "phase" : "plain", name));
    const JudgedWindow j = judged_window(db);
    EXPECT_EQ(j.source, StepSource::kIterations) << name;
    EXPECT_GE(steady(j), 3u);
    ASSERT_TRUE(j.window);
    // The set-up kernel and the first, long step are left out.
    EXPECT_GE(j.window->first, static_cast<std::int64_t>(step_start(1)));
    EXPECT_LT(j.window->first, static_cast<std::int64_t>(step_start(2)));
    EXPECT_EQ(j.note.rfind("judged the steady state: ", 0), 0u) << j.note;
    EXPECT_NE(j.note.find("iterations found in the GPU work (3 launches each, thread 300)"), std::string::npos)
        << j.note;
  }
}

// Nothing repeats: judged from the first GPU work on, and the note says why.
TEST_F(JudgedWindowTest, NoRepeatingStructure) {
  store::Database db = store::open_trace(build(m_dir, "none", "", false));
  const JudgedWindow j = judged_window(db);
  EXPECT_EQ(j.source, StepSource::kNone);
  EXPECT_TRUE(j.steps.empty());
  ASSERT_TRUE(j.window);
  EXPECT_EQ(j.window->first, static_cast<std::int64_t>(kSetup));  // the set-up kernel is the first GPU work
  EXPECT_EQ(j.note.rfind("no repeating structure (no step marks or NVTX step ranges, and ", 0), 0u) << j.note;
  EXPECT_NE(j.note.find("judged from the first GPU work on"), std::string::npos) << j.note;
}

// Too few step ranges for a steady state: they are still the steps step_sum lists.
TEST_F(JudgedWindowTest, TooFewStepsFallThrough) {
  store::Database db = store::open_trace(build(m_dir, "two", "step %d", false, 2));
  const JudgedWindow j = judged_window(db);
  EXPECT_EQ(j.source, StepSource::kNvtx);
  EXPECT_EQ(j.steps.size(), 2u);
  EXPECT_NE(j.note.find("no repeating structure (too few steady NVTX step ranges"), std::string::npos) << j.note;
  const Report r = run_report(db, "step_sum").front();
  EXPECT_EQ(r.rows.size(), 2u);
  EXPECT_TRUE(test::has_note(r, "steps: NVTX step ranges"));
}

TEST_F(JudgedWindowTest, WholeRunKeepsTheStepsButNoWindow) {
  store::Database db = store::open_trace(build(m_dir, "whole", "step %d"));
  const JudgedWindow j = judged_window(db, true);
  EXPECT_EQ(j.source, StepSource::kNvtx);
  EXPECT_EQ(j.steps.size(), 8u);
  EXPECT_FALSE(j.window);
  EXPECT_TRUE(j.note.empty());
  EXPECT_FALSE(judged_trace(db, j));
}

// summary and stats' top judge the same window: one Wall Time.
TEST_F(JudgedWindowTest, SummaryAndTopAgree) {
  store::Database db = store::open_trace(build(m_dir, "agree", "step %d"));
  const JudgedWindow j = judged_window(db);
  std::optional<FilteredTrace> scoped = judged_trace(db, j);
  ASSERT_TRUE(scoped);
  const Report top = run_report(scoped->db, "top").front();
  const Report overview = trace_summary(db).front();
  EXPECT_DOUBLE_EQ(test::cell<double>(overview, 0, "Wall Time"), test::cell<double>(top, 0, "Wall Time"));
  EXPECT_DOUBLE_EQ(test::cell<double>(overview, 0, "GPU Busy"), test::cell<double>(top, 0, "GPU Busy"));
  EXPECT_LT(test::cell<double>(overview, 0, "Wall Time"), test::cell<double>(overview, 0, "Whole-Run Wall Time"));
  EXPECT_EQ(test::cell<std::int64_t>(overview, 0, "Kernels"), 21);  // 7 steady steps x 3
  EXPECT_TRUE(test::has_note(overview, "judged the steady state: 7 of 8"));
  const Report whole = trace_summary(db, 10, true).front();
  EXPECT_DOUBLE_EQ(test::cell<double>(whole, 0, "Wall Time"), test::cell<double>(whole, 0, "Whole-Run Wall Time"));
}

// diff compares the steady states of two traces with NVTX steps (no PyTorch steps needed).
TEST_F(JudgedWindowTest, DiffComparesNvtxSteadyStates) {
  store::Database a = store::open_trace(build(m_dir, "a", "step %d"));
  store::Database b = store::open_trace(build(m_dir, "b", "ProfilerStep#%d"));
  const Report r = diff_traces(a, b);
  EXPECT_TRUE(test::has_note(r, "compared over the steady state of each trace (A: 7 NVTX step ranges, B: 7 NVTX"))
      << notes(r);
  store::Database c = store::open_trace(build(m_dir, "c", "", false));
  EXPECT_TRUE(test::has_note(diff_traces(a, c), "compared over the whole traces: B has no steady state"));
}

// The committed PyTorch recording: its optimizer steps are the source.
TEST(JudgedWindowCommitted, CnnPytorchJudgesItsOptimizerSteps) {
  store::Database db = store::open_trace(gpuscope::test::committed_trace("cnn-pytorch"));
  const JudgedWindow j = judged_window(db);
  EXPECT_EQ(j.source, StepSource::kPytorch);
  EXPECT_EQ(j.window, steady_window(step_facts(db)));
  EXPECT_EQ(j.note.rfind("judged the steady state: ", 0), 0u) << j.note;
  EXPECT_NE(j.note.find("PyTorch training steps (optimizer.step() marks)"), std::string::npos) << j.note;
}

}  // namespace
}  // namespace gpuscope::analyze
