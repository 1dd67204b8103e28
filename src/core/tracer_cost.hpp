// tracer_cost: how much CPU time gpuscope's tracing adds to one CUDA call, from calibration
// runs of the same tiny loop without and with the collector.
//
// The calibration program (`gpuscope __calibrate-child`) times blocks of N calls of one kind
// (kernel launches <<<1,1>>>, or cudaEventRecord as the other API calls) and reports each
// block's time per call (ns); it runs several times each way, alternating, one process a run.
// Each run's fastest block is that run's least disturbed one (other processes, interrupts, clock
// changes move the others). The cost per call is the MEDIAN over traced runs of their fastest
// block minus the same over untraced runs. Not the fastest block of all runs: on an H100
// (2026-12-06, call 14, four runs each way of 40 blocks of 200 launches) the untraced runs' fastest
// blocks agreed within 6 % (3,033-3,210 ns a launch) while the traced runs' spread 4,443-6,138 ns:
// how much CUPTI costs differs from one traced process to the next, and the fastest traced run
// of all priced a launch at half of what a typical traced process pays (1.3 against 2.7 us).
// A negative difference is clamped to 0.
#pragma once

#include <optional>
#include <vector>

namespace gpuscope::core {

/// max(0, median over traced runs of min(run) - median over untraced runs of min(run)), in the
/// samples' unit (the median of an even count: the mean of the two middle values); nullopt when
/// either side has no run, a run is empty, or a value is not finite or negative.
[[nodiscard]] std::optional<double> tracer_cost_per_call(const std::vector<std::vector<double>>& untraced_runs,
                                                         const std::vector<std::vector<double>>& traced_runs);

/// The median over runs of each run's fastest block (see above); nullopt as there.
[[nodiscard]] std::optional<double> median_of_run_minima(const std::vector<std::vector<double>>& runs);

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
