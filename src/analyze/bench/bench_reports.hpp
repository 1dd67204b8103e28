// bench_reports: bench results (core/bench_result.hpp) and their analyses
// (analyze/bench/bench_analysis.hpp) as Reports (core/report.hpp), so `gpuscope bench` prints
// them as table, csv, json or markdown like every other report. No I/O, no formatting
// beyond the notes' text.
//
// bench_cases_report ("bench_cases"), one row per case in run order:
//   Op, Variant, Dtype, Params, Mode, Median (us), Min (us), Noise (%: rel. std. error of the
//   median ×100), Samples, Stop, Bandwidth (GB/s), Compute (GFLOP/s), Intensity (FLOP/B),
//   Bound, Ceiling, % of Ceiling (%), Source ("measured"/"theoretical"), Verified
//   ("yes"/"no"/"-" when not run: note "not run"), Throttled (samples).
//   Notes: every run warning (a warning), each failed check ("copy memcpy n=4096: y[3] =
//   nan, ..."; a warning), and where the ceilings came from.
// bench_sweep_report ("bench_sweep"), one row per series (op, variant, dtype, mode):
//   Op, Variant, Dtype, Mode, Sizes, Metric ("bandwidth"/"flop_rate"), Final (G-unit),
//   Unit ("GB/s", "GFLOP/s"), 90 % At (the size), 90 % Params, Ceiling, Ceiling Value
//   (G-unit), % of Ceiling, Source, Still Rising ("yes"/"no").
//   A note per series in words: "copy grid_stride_vec4 f32 cold reaches 90 % of its final
//   2,950 GB/s at n=16777216; the final is 96.2 % of the measured dram_copy ceiling."
//   and one per still-rising series (try larger sizes).
// bench_compare_report ("bench_compare"), one row per matched case (new run's order):
//   Op, Variant, Dtype, Params, Mode, Base (us), New (us), Base Noise (%), New Noise (%),
//   Speedup (x), Diff (%), Threshold (%), Verdict. Notes: counts per verdict, cases only
//   in one run, a different device, failed checks on either side.
// Units: times in microseconds, rates in 1e9 per second (GB/s, GFLOP/s), % as 0..100.
#pragma once

#include <span>

#include "analyze/bench/bench_analysis.hpp"
#include "core/bench_result.hpp"
#include "core/report.hpp"

namespace gpuscope::analyze {

[[nodiscard]] Report bench_cases_report(const BenchRun& run);
[[nodiscard]] Report bench_sweep_report(std::span<const SweepAnalysis> sweeps);
[[nodiscard]] Report bench_compare_report(const CompareResult& result);

}  // namespace gpuscope::analyze
