// sample_stats: the noise estimate and the stopping rule of the timing engine
// (include/gpuscope/bench.hpp, `gpuscope bench`, `gpuscope peak`). Pure functions, no I/O.
//
// Relative standard error of the median — McKean–Schrader estimator:
//   sort the n samples x(1) <= ... <= x(n); z = 2.5758 (the 0.995 normal quantile);
//   c   = round((n + 1) / 2 − z · sqrt(n / 4)), clamped to [1, (n + 1) / 2];
//   se  = (x(n − c + 1) − x(c)) / (2 z);          rel = se / median.
// [x(c), x(n−c+1)] is the distribution-free ~99 % order-statistic confidence interval of
// the median (the number of samples below the median is Binomial(n, 1/2)); dividing its
// width by 2z turns it into a standard error. It assumes only independent samples from a
// continuous distribution, so it holds for the skewed, heavy-tailed timing distributions
// that make the normal-theory 1.2533 · s / sqrt(n) (exact only for normal data: the
// asymptotic variance of the median is 1 / (4 n f(m)^2)) overestimate the noise by orders
// of magnitude when a few samples are outliers. With ties (timer resolution) it can read
// 0 — the median is then known to the resolution of the timer.
// Sources: J. W. McKean, R. M. Schrader, "A comparison of methods for studentizing the
// sample median", Commun. Statist. — Simul. Comput. 13(6), 751–773, 1984; R. R. Wilcox,
// "Introduction to Robust Estimation and Hypothesis Testing", 4th ed., §4.10.2 (msmedse).
//
// Stopping rule (NVBench's "stop when the noise is low enough or the timeout is hit"):
//   kMaxSamples  n >= max_samples
//   kConverged   n >= min_samples and median_rel_stderr(samples) <= max_rel_stderr
//   kBudget      elapsed_s >= budget_s
//   kContinue    otherwise
// checked in the order kConverged, kMaxSamples, kBudget (a run that converged on its last
// sample says so). min_samples applies to kConverged only: a budget spent before
// min_samples samples still stops the run (its stop reason says why it has few samples).
// Cost: the convergence test is O(n) (a copy and three nth_element). To keep a run of
// many samples from spending its budget on this test, it is evaluated only when n is a
// multiple of 2^max(0, floor(log2 n) − 6) — at every sample up to 127 samples, then about
// every 1.6 % of growth, so convergence is detected at most n/64 samples late — and
// whenever the run would stop for max_samples or budget anyway.
#pragma once

#include <span>
#include <string_view>

namespace gpuscope::core::stats {

/// McKean–Schrader standard error of the median divided by the median (see above).
/// Fewer than 3 samples, or a median <= 0 or not finite → NaN. Samples must be finite;
/// the input is not modified.
[[nodiscard]] double median_rel_stderr(std::span<const double> samples);

/// The standard error of the median itself (same unit as the samples); < 3 samples → NaN.
[[nodiscard]] double median_stderr(std::span<const double> samples);

enum class StopRule { kContinue, kConverged, kBudget, kMaxSamples };

/// "continue", "converged", "budget", "max_samples" (the strings BenchTiming::stop uses).
[[nodiscard]] std::string_view stop_rule_name(StopRule rule);

/// Whether a run that has taken `samples` (per-call times, s) in `elapsed_s` seconds of
/// sampling should stop, and why (see the file comment for the order and the cadence).
/// Throws std::invalid_argument naming the option when max_rel_stderr < 0 or NaN,
/// budget_s <= 0 or NaN, min_samples < 1, or max_samples < min_samples.
[[nodiscard]] StopRule stop_rule(std::span<const double> samples, double elapsed_s, double max_rel_stderr,
                                 double budget_s, int min_samples, int max_samples);

}  // namespace gpuscope::core::stats

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
