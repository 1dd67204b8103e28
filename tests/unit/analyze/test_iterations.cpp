// analyze/iterations on the committed GPU recordings (tests/data/*.logs): the iterations found
// from the GPU work alone agree with the steps the program marked itself. The examples' CNN puts
// each training step in an NVTX range "step N" and ends it with loss.item(), so the step's GPU
// work runs inside its range; traced with --pytorch (cnn-pytorch) its optimizer steps are also
// torch_steps, classified by step_facts. PyTorch's autograd thread launches the backward pass,
// so each step is 27 launches on the main thread and 27 on that one.
#include "analyze/timeline/iterations.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../committed_traces.hpp"
#include "analyze/pytorch/pytorch_reports.hpp"
#include "store/trace.hpp"

namespace gpuscope::analyze {
namespace {

using core::IterationKind;

struct Range {
  std::int64_t start_ns, end_ns;
};

// The NVTX ranges "step N" of the trace, in order.
std::vector<Range> nvtx_steps(store::Database& db) {
  std::vector<Range> out;
  store::Statement st = db.prepare(
      "SELECT n.start_ns, n.end_ns FROM nvtx_events n JOIN strings s ON s.id = n.text_id "
      "WHERE s.value LIKE 'step %' AND n.end_ns IS NOT NULL ORDER BY n.start_ns");
  while (st.step()) out.push_back({st.column_int(0), st.column_int(1)});
  return out;
}

const char* kind_name(IterationKind k) {
  return k == IterationKind::kSteady ? "steady" : k == IterationKind::kWarmup ? "warm-up" : "outlier";
}

// What was found, for the test log (ctest --output-on-failure, or the test binary run alone).
void print(const char* trace, const ProcessIterations& p) {
  std::printf("%s pid %lld: %s\n", trace, static_cast<long long>(p.pid), p.note.c_str());
  if (!p.detection.found) return;
  const std::int64_t t0 = p.detection.found->iterations.front().start_ns;
  for (const core::Iteration& it : p.detection.found->iterations)
    std::printf("  #%lld %-7s +%.3f ms, %.3f ms long, %zu + %zu launches\n", static_cast<long long>(it.index),
                kind_name(it.kind), static_cast<double>(it.start_ns - t0) * 1e-6,
                static_cast<double>(it.end_ns - it.start_ns) * 1e-6, it.launches, it.other_launches);
}

ProcessIterations only_process(const char* trace) {
  store::Database db = store::open_trace(gpuscope::test::committed_trace(trace));
  std::vector<ProcessIterations> found = trace_iterations(db);
  EXPECT_EQ(found.size(), 1u) << trace;
  for (const ProcessIterations& p : found) print(trace, p);
  return found.empty() ? ProcessIterations{} : found.front();
}

// Each iteration lies inside the NVTX step of the same place.
void expect_inside_nvtx_steps(const core::IterationStructure& s, const std::vector<Range>& steps) {
  ASSERT_EQ(s.iterations.size(), steps.size());
  for (std::size_t k = 0; k < steps.size(); ++k) {
    EXPECT_GE(s.iterations[k].start_ns, steps[k].start_ns) << "iteration " << k;
    EXPECT_LE(s.iterations[k].end_ns, steps[k].end_ns) << "iteration " << k;
    if (s.iterations[k].kind != IterationKind::kSteady) continue;
    EXPECT_EQ(s.iterations[k].launches, 27u);
    EXPECT_EQ(s.iterations[k].other_launches, 27u);
  }
}

// cnn: steps 5-10 captured (cudaProfilerStart/Stop), no step marks but the NVTX ranges.
TEST(CommittedIterations, CnnCaptureIsSixStepsOfTheLoop) {
  const ProcessIterations p = only_process("cnn");
  ASSERT_TRUE(p.detection.found) << p.note;
  const core::IterationStructure& s = *p.detection.found;
  EXPECT_EQ(s.unit_launches, 27u);
  EXPECT_EQ(s.unit_other_launches, 27u);
  EXPECT_EQ(s.lanes, 2u);
  store::Database db = store::open_trace(gpuscope::test::committed_trace("cnn"));
  expect_inside_nvtx_steps(s, nvtx_steps(db));
  // The first captured step starts the autograd thread's work late (2 ms): warm-up.
  EXPECT_EQ(s.iterations[0].kind, IterationKind::kWarmup);
  EXPECT_EQ(s.steady, 5u);
  EXPECT_EQ(p.note.rfind("found 6 iterations of 27 launches each on thread 499 (and 27 from other threads during "
                         "each), 5 steady (median ",
                         0),
            0u)
      << p.note;
}

// cnn-pytorch: the whole process (6 steps, 1 warm-up): the iterations are the steps step_facts
// classifies, of the same kinds, over the same steady window.
TEST(CommittedIterations, CnnPytorchAgreesWithTheOptimizerSteps) {
  const ProcessIterations p = only_process("cnn-pytorch");
  ASSERT_TRUE(p.detection.found) << p.note;
  const core::IterationStructure& s = *p.detection.found;
  store::Database db = store::open_trace(gpuscope::test::committed_trace("cnn-pytorch"));
  expect_inside_nvtx_steps(s, nvtx_steps(db));
  const std::vector<StepFacts> steps = step_facts(db);
  ASSERT_EQ(steps.size(), s.iterations.size());
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const IterationKind want = steps[k].kind == StepFacts::Kind::kSteady   ? IterationKind::kSteady
                               : steps[k].kind == StepFacts::Kind::kWarmup ? IterationKind::kWarmup
                                                                           : IterationKind::kOutlier;
    EXPECT_EQ(s.iterations[k].kind, want) << "step " << k;
  }
  const auto torch = steady_window(steps);
  const auto found = core::steady_iterations_window(s);
  ASSERT_TRUE(torch && found);
  // The GPU work of the steady steps starts after the CPU-side step mark (the previous step's
  // loss.item() and Python run first: 0.34 ms here, a tenth of a step) and ends near the last
  // mark (loss.item() comes after optimizer.step(): 0.06 ms later); they overlap over 95 %.
  const std::int64_t step = s.median_wall_ns;
  std::printf("steady window: torch_steps %lld..%lld ns, found %lld..%lld ns (%+lld, %+lld ns)\n",
              static_cast<long long>(torch->first), static_cast<long long>(torch->second),
              static_cast<long long>(found->first), static_cast<long long>(found->second),
              static_cast<long long>(found->first - torch->first),
              static_cast<long long>(found->second - torch->second));
  EXPECT_GE(found->first, torch->first);
  EXPECT_LE(found->first - torch->first, step / 5);
  EXPECT_LE(std::llabs(found->second - torch->second), step / 10);
  const std::int64_t overlap = std::min(found->second, torch->second) - std::max(found->first, torch->first);
  EXPECT_GT(static_cast<double>(overlap), 0.95 * static_cast<double>(torch->second - torch->first));
}

// metrics: a handful of large kernels, no loop: nothing found, and the note says so.
TEST(CommittedIterations, MetricsTraceHasNoLoop) {
  const ProcessIterations p = only_process("metrics");
  EXPECT_FALSE(p.detection.found);
  EXPECT_EQ(p.note.find("no steady state in "), 0u) << p.note;
  EXPECT_NE(p.note.find("judged from the first GPU work on"), std::string::npos);
}

// kernels-h100 (gpuscope kernels): the profiled launches are not in kernels: nothing to look at.
TEST(CommittedIterations, KernelsTraceHasNoProcessWithGpuWork) {
  store::Database db = store::open_trace(gpuscope::test::committed_trace("kernels-h100"));
  EXPECT_TRUE(trace_iterations(db).empty());
}

TEST(IterationsNote, SaysWhatWasFoundOrWhyNot) {
  core::IterationDetection d;
  d.launches = 2;
  d.why = core::NoIterations::kTooFewLaunches;
  EXPECT_EQ(iterations_note(d),
            "no repeating GPU work: 2 launches (fewer than 3 on each launching thread); judged from the first GPU work "
            "on");
  d.launches = 500;
  d.why = core::NoIterations::kNoRepeat;
  EXPECT_EQ(iterations_note(d),
            "no repeating GPU work in 500 launches: no kernel recurs at a regular distance; judged from the first GPU "
            "work on");
  core::IterationStructure s;
  s.lane = 1234;
  s.unit_launches = 47;
  s.iterations.resize(22);
  for (core::Iteration& it : s.iterations) it.launches = 47;
  s.iterations[0].kind = s.iterations[1].kind = IterationKind::kWarmup;
  s.lane_launches = 1000;
  s.steady = 20;
  s.warmup = 2;
  s.median_wall_ns = 2'130'000;
  d.found = s;
  EXPECT_EQ(
      iterations_note(d),
      "found 22 iterations of 47 launches each on thread 1234, 20 steady (median 2.13 ms each, 94 % of the thread's "
      "launches); 2 warm-up left out");
  s.lane = -1 - 7;  // laned by stream: no launch calls in the trace
  s.outliers = 1;
  s.noisy = 3;
  s.inner_unit_launches = 6;
  s.inner_repeats = 10;
  s.unit_other_launches = 5;
  d.found = s;
  EXPECT_EQ(iterations_note(d),
            "found 22 iterations of 47 launches each on stream 7 (and 5 from other streams during each), 20 steady "
            "(median 2.13 ms each, 94 % of the stream's launches); 2 warm-up and 1 outlier left out; 3 steady ones "
            "hold a few launches more or less "
            "than the others; each holds an inner unit of 6 launches repeated about 10 times");
}

}  // namespace
}  // namespace gpuscope::analyze
