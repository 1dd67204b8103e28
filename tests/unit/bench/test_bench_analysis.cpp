// Sweep analysis, compare verdicts and their Reports (analyze/bench/bench_analysis.hpp,
// analyze/bench/bench_reports.hpp) on synthetic runs and the committed sweep.
#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

#include "analyze/bench/bench_analysis.hpp"
#include "analyze/bench/bench_reports.hpp"
#include "store/bench_result_json.hpp"

namespace gpuscope::analyze {
namespace {

const std::string kSource = GPUSCOPE_SOURCE_DIR;

BenchCase timed(std::string params, double median_s, double rel_stderr) {
  BenchCase c;
  c.op = "copy";
  c.variant = "memcpy";
  c.dtype = "f32";
  c.params = std::move(params);
  c.timing.mode = "cold";
  c.timing.median_s = median_s;
  c.timing.rel_stderr = rel_stderr;
  c.verified = true;
  return c;
}

BenchRun run_of(std::vector<BenchCase> cases) {
  BenchRun r;
  r.device.name = "GPU";
  r.device.uuid = "GPU-1";
  r.cases = std::move(cases);
  return r;
}

Verdict verdict_of(double base_s, double base_rse, double new_s, double new_rse, CompareOptions o = {}) {
  const CompareResult r = compare(run_of({timed("n=1", base_s, base_rse)}), run_of({timed("n=1", new_s, new_rse)}), o);
  EXPECT_EQ(r.cases.size(), 1u);
  return r.cases.at(0).verdict;
}

TEST(BenchCompare, Verdicts) {
  // Noise 0.1 % each side: threshold = max(1 %, 3 × 0.141 %) = 1 %.
  EXPECT_EQ(verdict_of(100e-6, 0.001, 90e-6, 0.001), Verdict::kFaster);
  EXPECT_EQ(verdict_of(100e-6, 0.001, 110e-6, 0.001), Verdict::kSlower);
  EXPECT_EQ(verdict_of(100e-6, 0.001, 100.9e-6, 0.001), Verdict::kSame);
  // Noisy sides: 3 × sqrt(0.03² + 0.04²) = 15 %: a 10 % change is within noise.
  EXPECT_EQ(verdict_of(100e-6, 0.03, 110e-6, 0.04), Verdict::kSame);
  EXPECT_EQ(verdict_of(100e-6, 0.03, 120e-6, 0.04), Verdict::kSlower);
  // Unknown noise or time: unknown, never same.
  EXPECT_EQ(verdict_of(100e-6, kUnknown, 50e-6, 0.001), Verdict::kUnknown);
  EXPECT_EQ(verdict_of(kUnknown, 0.001, 50e-6, 0.001), Verdict::kUnknown);
  // The floor and k are options.
  CompareOptions tight;
  tight.floor = 0.001;
  EXPECT_EQ(verdict_of(100e-6, 0.0001, 100.9e-6, 0.0001, tight), Verdict::kSlower);
  CompareOptions bad;
  bad.k = -1;
  EXPECT_THROW((void)compare(run_of({}), run_of({}), bad), std::invalid_argument);
}

TEST(BenchCompare, SpeedupAndUnmatchedCases) {
  const CompareResult r = compare(run_of({timed("n=1", 2e-6, 0.001), timed("n=2", 1e-6, 0.001)}),
                                  run_of({timed("n=1", 1e-6, 0.001), timed("n=3", 1e-6, 0.001)}));
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_DOUBLE_EQ(r.cases[0].speedup, 2.0);
  EXPECT_DOUBLE_EQ(r.cases[0].rel_diff, -0.5);
  ASSERT_EQ(r.only_in_base.size(), 1u);
  EXPECT_EQ(r.only_in_base[0].params, "n=2");
  ASSERT_EQ(r.only_in_new.size(), 1u);
  EXPECT_EQ(r.only_in_new[0].params, "n=3");
  EXPECT_TRUE(r.same_device);
}

TEST(BenchCompare, CommittedRunsAndReport) {
  const BenchRun base = store::read_bench_run(kSource + "/tests/data/bench-copy-sweep.json");
  const BenchRun next = store::read_bench_run(kSource + "/tests/data/bench-copy-new.json");
  const CompareResult r = compare(base, next);
  int faster = 0, slower = 0, same = 0;
  for (const CaseComparison& c : r.cases) {
    faster += c.verdict == Verdict::kFaster;
    slower += c.verdict == Verdict::kSlower;
    same += c.verdict == Verdict::kSame;
  }
  EXPECT_EQ(faster, 1);
  EXPECT_EQ(slower, 1);
  EXPECT_EQ(same, 11);
  const Report report = bench_compare_report(r);
  EXPECT_EQ(report.name, "bench_compare");
  EXPECT_EQ(report.rows.size(), 13u);
  ASSERT_FALSE(report.notes.empty());
  EXPECT_NE(report.notes[0].text.find("1 faster, 1 slower, 11 same"), std::string::npos) << report.notes[0].text;
}

TEST(BenchSweep, CommittedSweep) {
  const BenchRun run = store::read_bench_run(kSource + "/tests/data/bench-copy-sweep.json");
  const std::vector<SweepAnalysis> sweeps = analyze_sweeps(run);
  ASSERT_EQ(sweeps.size(), 2u);
  const SweepAnalysis& s = sweeps[0];
  EXPECT_EQ(s.variant, "grid_stride_vec4");
  EXPECT_EQ(s.metric, "bandwidth");
  EXPECT_EQ(s.points.size(), 7u);
  // final = the best of the last 3 sizes = the largest; 90 % of it first at 2^24.
  EXPECT_DOUBLE_EQ(s.final_throughput, run.cases[6].derived.bandwidth);
  EXPECT_EQ(s.size_at_90, 16777216.0);
  EXPECT_EQ(s.params_at_90, "n=16777216");
  EXPECT_NEAR(s.final_pct_of_ceiling, s.final_throughput / 3.01e12 * 100, 1e-9);
  EXPECT_FALSE(s.still_rising);

  const Report cases = bench_cases_report(run);
  EXPECT_EQ(cases.rows.size(), 14u);
  const Report sweep = bench_sweep_report(sweeps);
  EXPECT_EQ(sweep.rows.size(), 2u);
  ASSERT_GE(sweep.notes.size(), 1u);
  EXPECT_NE(sweep.notes[0].text.find("reaches 90 % of its final"), std::string::npos);
  EXPECT_NE(sweep.notes[0].text.find("measured dram_copy ceiling"), std::string::npos) << sweep.notes[0].text;
}

TEST(BenchSweep, StillRisingAndFailedCheck) {
  BenchRun run = run_of({});
  for (int i = 0; i < 4; ++i) {
    BenchCase c = timed("n=" + std::to_string(i), 1e-6, 0.001);
    c.size = 1 << i;
    c.work.bytes_read = c.work.bytes_written = 1e6;
    c.derived.bandwidth = 1e9 * (1 << i);  // doubles every size
    c.derived.ceiling = "dram_copy";
    c.derived.ceiling_value = 1e12;
    c.derived.ceiling_source = "theoretical";
    run.cases.push_back(c);
  }
  run.cases[1].verified = false;
  run.cases[1].note = "y[0] = nan, reference 1, tolerance 0";
  const std::vector<SweepAnalysis> sweeps = analyze_sweeps(run);
  ASSERT_EQ(sweeps.size(), 1u);
  EXPECT_TRUE(sweeps[0].still_rising);
  const Report sweep = bench_sweep_report(sweeps);
  bool warned = false;
  for (const Note& n : sweep.notes) warned = warned || n.text.find("still rising") != std::string::npos;
  EXPECT_TRUE(warned);
  const Report cases = bench_cases_report(run);
  bool failed = false;
  for (const Note& n : cases.notes) failed = failed || n.text.find("reference check FAILED") != std::string::npos;
  EXPECT_TRUE(failed);
  bool theoretical = false;
  for (const Note& n : cases.notes) theoretical = theoretical || n.text.find("theoretical") != std::string::npos;
  EXPECT_TRUE(theoretical);
}

}  // namespace
}  // namespace gpuscope::analyze
