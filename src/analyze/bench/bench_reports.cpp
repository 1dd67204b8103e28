#include "analyze/bench/bench_reports.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "core/units.hpp"

namespace gpuscope::analyze {
namespace {

Cell real(double v) { return std::isfinite(v) ? Cell{v} : Cell{}; }
Cell scaled(double v, double factor) { return std::isfinite(v) ? Cell{v * factor} : Cell{}; }
Cell text(std::string s) { return s.empty() ? Cell{} : Cell{std::move(s)}; }

// For notes: whole numbers from 100 up ("2950"), else three significant digits ("96.2").
std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, std::fabs(v) >= 100 ? "%.0f" : "%.3g", v);
  return buf;
}

std::string series_name(const SweepAnalysis& s) { return s.op + " " + s.variant + " " + s.dtype + " " + s.mode; }

std::string case_name(const BenchCase& c) { return c.op + " " + c.variant + " " + c.dtype + " " + c.params; }

}  // namespace

Report bench_cases_report(const BenchRun& run) {
  Report r;
  r.name = "bench_cases";
  r.title = "Benchmark Cases";
  r.add_column("Op", "", ColumnType::kText)
      .add_column("Variant", "", ColumnType::kText)
      .add_column("Dtype", "", ColumnType::kText)
      .add_column("Params", "", ColumnType::kText)
      .add_column("Mode", "", ColumnType::kText)
      .add_column("Median", "us", ColumnType::kReal)
      .add_column("Min", "us", ColumnType::kReal)
      .add_column("Noise", "%", ColumnType::kReal)
      .add_column("Samples", "", ColumnType::kInteger)
      .add_column("Stop", "", ColumnType::kText)
      .add_column("Bandwidth", "GB/s", ColumnType::kReal)
      .add_column("Compute", "GFLOP/s", ColumnType::kReal)
      .add_column("Intensity", "FLOP/B", ColumnType::kReal)
      .add_column("Bound", "", ColumnType::kText)
      .add_column("Ceiling", "", ColumnType::kText)
      .add_column("% of Ceiling", "%", ColumnType::kReal)
      .add_column("Source", "", ColumnType::kText)
      .add_column("Verified", "", ColumnType::kText)
      .add_column("Throttled", "samples", ColumnType::kInteger);
  bool theoretical = false;
  for (const BenchCase& c : run.cases) {
    const bool checked = c.verified || std::isfinite(c.max_abs_error) || !c.note.empty();
    const bool not_run = !c.verified && c.note.find("not run") != std::string::npos;
    r.rows.push_back(Row{c.op, c.variant, c.dtype, c.params, c.timing.mode, scaled(c.timing.median_s, 1e6),
                         scaled(c.timing.min_s, 1e6), scaled(c.timing.rel_stderr, 100.0),
                         std::int64_t{c.timing.samples}, text(c.timing.stop), scaled(c.derived.bandwidth, 1e-9),
                         scaled(c.derived.flop_rate, 1e-9), real(c.derived.intensity), text(c.derived.bound),
                         text(c.derived.ceiling), real(c.derived.pct_of_ceiling), text(c.derived.ceiling_source),
                         std::string(not_run || !checked ? "-"
                                     : c.verified        ? "yes"
                                                         : "no"),
                         std::int64_t{c.timing.throttled_samples}});
    if (!c.verified && !not_run && checked)
      r.add_note(NoteLevel::kWarning, "reference check FAILED: " + case_name(c) + ": " + c.note);
    theoretical = theoretical || c.derived.ceiling_source == "theoretical";
  }
  for (const std::string& w : run.warnings) r.add_note(NoteLevel::kWarning, w);
  if (!run.profile_path.empty())
    r.add_note(NoteLevel::kInfo, "% of ceiling: the measured ceilings of " + run.profile_path);
  else if (theoretical)
    r.add_note(NoteLevel::kInfo, "% of ceiling: theoretical ceilings (no machine profile)");
  return r;
}

Report bench_sweep_report(std::span<const SweepAnalysis> sweeps) {
  Report r;
  r.name = "bench_sweep";
  r.title = "Size Sweeps";
  r.add_column("Op", "", ColumnType::kText)
      .add_column("Variant", "", ColumnType::kText)
      .add_column("Dtype", "", ColumnType::kText)
      .add_column("Mode", "", ColumnType::kText)
      .add_column("Sizes", "", ColumnType::kInteger)
      .add_column("Metric", "", ColumnType::kText)
      .add_column("Final", "", ColumnType::kReal)
      .add_column("Unit", "", ColumnType::kText)
      .add_column("90 % At", "", ColumnType::kInteger)
      .add_column("90 % Params", "", ColumnType::kText)
      .add_column("Ceiling", "", ColumnType::kText)
      .add_column("Ceiling Value", "", ColumnType::kReal)
      .add_column("% of Ceiling", "%", ColumnType::kReal)
      .add_column("Source", "", ColumnType::kText)
      .add_column("Still Rising", "", ColumnType::kText);
  for (const SweepAnalysis& s : sweeps) {
    const std::string unit = "G" + s.unit;
    r.rows.push_back(Row{s.op, s.variant, s.dtype, s.mode, static_cast<std::int64_t>(s.points.size()), s.metric,
                         scaled(s.final_throughput, 1e-9), unit,
                         std::isfinite(s.size_at_90) ? Cell{static_cast<std::int64_t>(s.size_at_90)} : Cell{},
                         text(s.params_at_90), text(s.ceiling), scaled(s.ceiling_value, 1e-9),
                         real(s.final_pct_of_ceiling), text(s.ceiling_source),
                         std::string(s.still_rising ? "yes" : "no")});
    if (s.points.empty()) {
      r.add_note(NoteLevel::kWarning, series_name(s) + ": no size has a known throughput");
      continue;
    }
    std::string sentence = series_name(s) + " reaches 90 % of its final " + units::si(s.final_throughput, s.unit) +
                           " at " + s.params_at_90;
    if (std::isfinite(s.final_pct_of_ceiling))
      sentence += "; the final is " + units::percent(s.final_pct_of_ceiling) + " of the " + s.ceiling_source + " " +
                  s.ceiling + " ceiling";
    r.add_note(NoteLevel::kInfo, sentence + ".");
    if (s.still_rising)
      r.add_note(NoteLevel::kWarning, series_name(s) +
                                          ": still rising at the largest size (the last point beats the one before "
                                          "by more than 5 %); try larger sizes to find the plateau");
  }
  return r;
}

Report bench_compare_report(const CompareResult& result) {
  Report r;
  r.name = "bench_compare";
  r.title = "Benchmark Comparison";
  r.add_column("Op", "", ColumnType::kText)
      .add_column("Variant", "", ColumnType::kText)
      .add_column("Dtype", "", ColumnType::kText)
      .add_column("Params", "", ColumnType::kText)
      .add_column("Mode", "", ColumnType::kText)
      .add_column("Base", "us", ColumnType::kReal)
      .add_column("New", "us", ColumnType::kReal)
      .add_column("Base Noise", "%", ColumnType::kReal)
      .add_column("New Noise", "%", ColumnType::kReal)
      .add_column("Speedup", "x", ColumnType::kReal)
      .add_column("Diff", "%", ColumnType::kReal)
      .add_column("Threshold", "%", ColumnType::kReal)
      .add_column("Verdict", "", ColumnType::kText);
  std::map<std::string, int> counts;
  for (const CaseComparison& c : result.cases) {
    r.rows.push_back(Row{c.op, c.variant, c.dtype, c.params, c.mode, scaled(c.base_median_s, 1e6),
                         scaled(c.new_median_s, 1e6), scaled(c.base_rel_stderr, 100.0), scaled(c.new_rel_stderr, 100.0),
                         real(c.speedup), scaled(c.rel_diff, 100.0), scaled(c.threshold, 100.0),
                         std::string(verdict_name(c.verdict))});
    ++counts[verdict_name(c.verdict)];
    if (!c.base_verified || !c.new_verified)
      r.add_note(NoteLevel::kWarning, c.op + " " + c.variant + " " + c.dtype + " " + c.params +
                                          ": the reference check " +
                                          (c.base_verified  ? "of NEW"
                                           : c.new_verified ? "of BASE"
                                                            : "of both") +
                                          " did not pass; its time may not be comparable");
  }
  std::string summary = std::to_string(result.cases.size()) + " cases compared:";
  for (const char* v : {"faster", "slower", "same", "unknown"})
    summary += std::string(" ") + std::to_string(counts[v]) + " " + v + ",";
  summary.back() = '.';
  summary += " A case is faster or slower when |diff| > max(" + units::percent(result.options.floor * 100) + ", " +
             num(result.options.k) + " × the standard error of the difference).";
  r.add_note(NoteLevel::kInfo, summary);
  auto list = [](const std::vector<CaseKey>& keys) {
    std::string s;
    for (const CaseKey& k : keys)
      s += (s.empty() ? "" : "; ") + k.op + " " + k.variant + " " + k.dtype + " " + k.params + " " + k.mode;
    return s;
  };
  if (!result.only_in_base.empty())
    r.add_note(NoteLevel::kWarning,
               std::to_string(result.only_in_base.size()) + " case(s) only in BASE: " + list(result.only_in_base));
  if (!result.only_in_new.empty())
    r.add_note(NoteLevel::kWarning,
               std::to_string(result.only_in_new.size()) + " case(s) only in NEW: " + list(result.only_in_new));
  if (!result.same_device)
    r.add_note(NoteLevel::kWarning,
               "the two runs were measured on different GPUs: the differences include the hardware");
  return r;
}

}  // namespace gpuscope::analyze
