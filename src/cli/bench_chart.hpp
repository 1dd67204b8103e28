// bench_chart: the sweep chart input of render/bench_sweep_svg.hpp from the sweep
// analyses of a bench run (analyze/bench/bench_analysis.hpp) — the glue between analyze/ and
// render/, which do not include each other.
//
// One chart holds one metric: the series whose metric is that of the first series
// ("bandwidth" → B/s, "flop_rate" → FLOP/s); the others are left out and counted in
// `left_out`. Titles: "OP: achieved bandwidth against size" (the ops of the run joined
// by ", "), subtitle "DEVICE · measured_at · ceilings: measured|theoretical".
#pragma once

#include <span>

#include "analyze/bench/bench_analysis.hpp"
#include "core/bench_result.hpp"
#include "render/bench_sweep_svg.hpp"

namespace gpuscope::cli {

struct SweepChartBuild {
  render::SweepChartInput input;
  int left_out = 0;  // series of another metric than the chart's
};

[[nodiscard]] SweepChartBuild sweep_chart_input(const BenchRun& run, std::span<const analyze::SweepAnalysis> sweeps);

}  // namespace gpuscope::cli
