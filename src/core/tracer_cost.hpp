// tracer_cost: how much CPU time gpuscope's tracing adds to one CUDA call, from calibration
// runs of the same tiny loop without and with the collector.
//
// The calibration program (`gpuscope __calibrate-child`) times blocks of N calls of one kind
// (kernel launches <<<1,1>>>, or cudaEventRecord as the other API calls) and reports each
// block's time per call (ns); it runs several times each way, alternating, one process a run.
// Each run's fastest block is that run's least disturbed one (other processes, interrupts, clock
// changes move the others). The runs come in pairs, an untraced and a traced process one after
// the other (the order alternating from pair to pair); the cost per call is the MEDIAN over pairs
// of the traced run's fastest block minus its untraced partner's. Pairing cancels what moves the
// machine between pairs, which a difference of the two sides' medians does not: on an H100
// (2026-12-07, one calibration of three processes each way) the untraced runs' fastest blocks were
// 3,393, 4,202 and 4,227 ns a launch and the traced runs' 4,478, 4,207 and 5,657 ns; the medians'
// difference priced a launch at 276 ns, the pairs' median at 1,085 ns, where 3 x 3 processes
// timing the same launches untraced and traced (validation/launch_variety.py) measured 1,191-1,327
// ns minutes before. Not the fastest block of all runs either: on an H100 (2026-12-06, call 14)
// the fastest traced run of all priced a launch at half of what a typical traced process pays
// (1.3 against 2.7 us). A negative median is clamped to 0.
#pragma once

#include <optional>
#include <vector>

namespace gpuscope::core {

/// max(0, median over i of (min(traced_runs[i]) - min(untraced_runs[i]))): run i of each side is
/// one pair, in the samples' unit (the median of an even count: the mean of the two middle
/// values); nullopt when either side has no run, the sides' run counts differ, a run is empty, or
/// a value is not finite or negative.
[[nodiscard]] std::optional<double> tracer_cost_per_call(const std::vector<std::vector<double>>& untraced_runs,
                                                         const std::vector<std::vector<double>>& traced_runs);

/// min(traced_runs[i]) - min(untraced_runs[i]) for each pair i (ns or the samples' unit); empty
/// when tracer_cost_per_call would give nullopt.
[[nodiscard]] std::vector<double> paired_run_minima_differences(const std::vector<std::vector<double>>& untraced_runs,
                                                                const std::vector<std::vector<double>>& traced_runs);

/// Each run's fastest block, in run order; nullopt when there is no run, a run is empty, or a
/// value is not finite or negative.
[[nodiscard]] std::optional<std::vector<double>> run_minima(const std::vector<std::vector<double>>& runs);

/// The median over runs of each run's fastest block (see above); nullopt as run_minima.
[[nodiscard]] std::optional<double> median_of_run_minima(const std::vector<std::vector<double>>& runs);

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
