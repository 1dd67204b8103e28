// bench_analysis: arithmetic over bench results (core/bench_result.hpp) — size sweeps and
// the comparison of two runs. Pure functions on values (no I/O, no text formatting);
// analyze/bench/bench_reports.hpp turns them into Reports, render/bench_sweep_svg.hpp into a
// chart.
//
// Sweep (one series = one op, variant, dtype and mode across sizes, sorted by size):
//   metric      "flop_rate" when the largest size is bound by a compute ceiling, else
//               "bandwidth" (no ceiling: "bandwidth" if it moves bytes, else "flop_rate");
//   final       the highest throughput among the last kFinalPoints sizes (a plateau's
//               value, robust to one noisy last point);
//   size_at_90  the smallest size whose throughput is >= 90 % of final — "where the
//               operator reaches 90 % of its final throughput";
//   final_pct   final / the largest size's bounding ceiling × 100 (that case's
//               derived.ceiling_value, measured or theoretical as derived.ceiling_source);
//   still_rising  the last size is the best and beats the one before by more than 5 %:
//               the sweep probably ended before the plateau.
//
// Compare (per case matched on op, variant, dtype, params and mode; the medians):
//   speedup   = base median / new median            (> 1: new is faster)
//   rel_diff  = (new − base) / base
//   threshold = max(floor, k × sqrt(rb² + rn²))     rb, rn: each side's rel_stderr
//   verdict   same if |rel_diff| <= threshold, else faster (new < base) or slower;
//             unknown when a median or a rel_stderr is missing (NaN).
// sqrt(rb² + rn²) is the relative standard error of the difference of two independent
// medians, so k = 3 flags a difference at ~3 standard errors. The floor (default 1 %)
// covers what one run's samples cannot see: run-to-run variation of clocks, temperature
// and memory placement (gpuscope's repeatability target for a >= 10 µs kernel is 1 %).
// This follows NVBench's scripts/nvbench_compare.py, which calls a case SAME when
// |rel_diff| <= min(ref noise, cmp noise) with noise the relative standard deviation of
// the samples (and "????" when noise is unknown); gpuscope records the standard error of
// the median instead, which shrinks with the sample count, hence the k factor and floor.
#pragma once

#include <string>
#include <vector>

#include "core/bench_result.hpp"

namespace gpuscope::analyze {

inline constexpr int kFinalPoints = 3;
inline constexpr double kSaturationFraction = 0.90;
inline constexpr double kStillRisingFactor = 1.05;

struct SweepPoint {
  double size = 0;
  std::string params;
  double throughput = kUnknown;  // in SweepAnalysis::unit
};

struct SweepAnalysis {
  std::string op, variant, dtype, mode;
  std::string metric;              // "bandwidth" or "flop_rate"
  std::string unit;                // "B/s", "FLOP/s" (or "OP/s" for an OP/s ceiling)
  std::vector<SweepPoint> points;  // sorted by size; points without a rate are left out
  double final_throughput = kUnknown;
  double size_at_90 = kUnknown;
  std::string params_at_90;
  std::string ceiling;  // catalog name, "" if none
  double ceiling_value = kUnknown;
  std::string ceiling_source;  // "measured" or "theoretical"
  double final_pct_of_ceiling = kUnknown;
  bool still_rising = false;
};

/// One analysis per series of `run`, in the order each series first appears. A series
/// with one size is analysed too (final = its throughput).
[[nodiscard]] std::vector<SweepAnalysis> analyze_sweeps(const BenchRun& run);

enum class Verdict { kFaster, kSlower, kSame, kUnknown };

/// "faster", "slower", "same", "unknown".
[[nodiscard]] const char* verdict_name(Verdict verdict);

struct CompareOptions {
  double k = 3.0;       // standard errors of the difference
  double floor = 0.01;  // smallest relative difference ever called faster/slower
};

struct CaseComparison {
  std::string op, variant, dtype, params, mode;
  double base_median_s = kUnknown, new_median_s = kUnknown;
  double base_rel_stderr = kUnknown, new_rel_stderr = kUnknown;
  double speedup = kUnknown;
  double rel_diff = kUnknown;
  double threshold = kUnknown;
  Verdict verdict = Verdict::kUnknown;
  bool base_verified = false, new_verified = false;
};

struct CaseKey {
  std::string op, variant, dtype, params, mode;
};

struct CompareResult {
  std::vector<CaseComparison> cases;  // in the new run's order
  std::vector<CaseKey> only_in_base;  // in the base run's order
  std::vector<CaseKey> only_in_new;
  bool same_device = true;  // device uuid (or name, when a uuid is missing) equal
  CompareOptions options;
};

/// Compares every case of `next` with the case of `base` that has the same key.
/// Throws std::invalid_argument for options with k < 0 or floor < 0 (or NaN).
[[nodiscard]] CompareResult compare(const BenchRun& base, const BenchRun& next, const CompareOptions& options = {});

}  // namespace gpuscope::analyze
