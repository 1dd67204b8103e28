// tracer_cost: how much CPU time gpuscope's tracing adds to one CUDA call, from a
// calibration run of the same tiny loop without and with the collector.
//
// The calibration program (`gpuscope calibrate-tracer`) times blocks of N calls of one
// kind (kernel launches <<<1,1>>>, or cudaEventRecord as the other API calls) and reports
// each block's time per call (ns). The cost per call is the difference of the MINIMA of
// the two runs' blocks: the fastest block is the one least disturbed by the rest of the
// machine (other processes, interrupts, clock changes), which the median of a few
// process-level runs is not (measured on H100: untraced launch loops of one program
// moved between 3.3 and 6.5 us per launch from run to run). A negative difference (the
// traced run's best block beat the untraced one's) is clamped to 0.
#pragma once

#include <optional>
#include <span>

namespace gpuscope::core {

/// max(0, min(traced) - min(untraced)) in the samples' unit; nullopt when either
/// span is empty or holds a value that is not finite or negative.
[[nodiscard]] std::optional<double> tracer_cost_per_call(std::span<const double> untraced_per_call,
                                                         std::span<const double> traced_per_call);

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
