// Internal to src/peak: the coarse-to-fine sweep behind the DRAM and tensor ceilings.
// Pure C++ (no CUDA), so the pruning and the choice of the best method are unit tested.
//
// A ceiling is reached by several *methods* (families: the hand-written copy kernel, the
// copy engine's cudaMemcpyAsync, cub::DeviceTransform, cuBLASLt's algorithms ...), each
// with configurations (vector width, unroll, grid, cache hint; GEMM shape, layout,
// algorithm). Every configuration is a Trial. The sweep:
//   1. coarse: each trial is timed briefly (a few samples), in the order given (most
//      promising first), until the coarse budget is spent; the trials left are skipped,
//      except the first of every family not yet timed (every method gets a number);
//   2. fine: the finalists (select_finalists: every family's best, then the fastest
//      others within a few % of the best) are timed with the full budget and verified;
//   3. the ceiling is the fastest verified finalist (choose_best); every family's result
//      goes into the ceiling's method line (describe_families), so the profile keeps them.
// Values are in the ceiling's unit (B/s, FLOP/s); NaN = not timed.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/machine_profile.hpp"

namespace gpuscope::peak::detail {

struct Trial {
  std::string family;        // the method: "copy kernel", "cudaMemcpyAsync", "cuBLASLt"
  std::string label;         // the configuration within it: "16 B x 4, streaming, one-shot grid"
  double coarse = kUnknown;  // from the short timing
  double fine = kUnknown;    // from the full timing (finalists only)
  bool verified = false;     // the finalist's result check passed
};

/// Indices of the trials to time in full: the best coarse trial of every family first
/// (families in order of first appearance), then the fastest remaining trials whose coarse
/// value is at least (1 - within) × the best coarse value, until `max_finalists` are
/// chosen (families' bests count and are always kept, even past max_finalists). Trials
/// with a NaN coarse value are never chosen.
[[nodiscard]] std::vector<std::size_t> select_finalists(std::span<const Trial> trials, std::size_t max_finalists,
                                                        double within);

/// The winner: the highest fine value among verified trials; when none is verified, the
/// highest fine value (so the failed check shows); nullopt when no trial has a fine value.
[[nodiscard]] std::optional<std::size_t> choose_best(std::span<const Trial> trials);

/// What the coarse stage did: trials timed, trials skipped for the budget, seconds spent.
struct CoarseStats {
  std::size_t timed = 0;
  std::size_t skipped = 0;
  double seconds = 0;
};

/// Runs the coarse stage: trials[i].coarse = measure(i), in index order, while now_s() -
/// start < budget_s; after that only the first trial of a family that has no timed trial
/// yet is measured. A measure that throws std::runtime_error leaves that trial NaN (its
/// label gets " (failed: what)"). `now_s` is a monotonic clock in seconds (passed in so
/// tests can drive it).
CoarseStats run_coarse(std::vector<Trial>& trials, const std::function<double(std::size_t)>& measure,
                       const std::function<double()>& now_s, double budget_s);

/// Runs the fine stage and picks the ceiling: for each finalist i, `measure(i)` returns its
/// timed and checked Ceiling (measured, verified); trials[i].fine and .verified are set from
/// it. A measure that throws std::runtime_error leaves the trial without a fine value (its
/// label says why). Returns the winner's Ceiling (choose_best) with "; " and
/// describe_families(trials, stats, scale, unit) appended to its method, or nullopt when no
/// finalist could be timed.
[[nodiscard]] std::optional<Ceiling> run_fine(std::vector<Trial>& trials, std::span<const std::size_t> finalists,
                                              const std::function<Ceiling(std::size_t)>& measure,
                                              const CoarseStats& stats, double scale, std::string_view unit);

/// The tensor ceilings' burst (tensor_bench.cpp): the sweep's winner timed once more as
/// torch.matmul is timed, a short run of single GEMMs on a GPU that idled `rest_s` before it, so
/// at the clock a burst starts at; the sweep's seconds of GEMMs run at the clock the power limit
/// leaves. Returns `sustained` when the burst is not faster (its method then says what the burst
/// reached); else `sustained` with the burst's value, samples, spread and clocks (the GEMM, its
/// check and `verified` stay the sustained one's), its method saying both. Values in the
/// ceiling's unit, printed × `scale` in `unit`.
[[nodiscard]] Ceiling with_burst(Ceiling sustained, const Ceiling& burst, double rest_s, double scale,
                                 std::string_view unit);

/// One line for the ceiling's method: every family's best fine value (else its best coarse
/// value, marked "coarse"), fastest first, scaled for people: "methods (GB/s):
/// cudaMemcpyAsync 4291 [verified], copy kernel 4120 (16 B x 4, ...), ...; 96 of 120
/// configurations timed, 24 skipped (time budget)".
[[nodiscard]] std::string describe_families(std::span<const Trial> trials, const CoarseStats& stats, double scale,
                                            std::string_view unit);

/// Why the rate `slower` (tensor_fp16) is below `faster` (tensor_bf16), measured: "" when
/// it is not more than 2 % below or a value or an SM clock is unknown. Compares FLOP per
/// SM per cycle at the SM clocks read around each measurement (the mean of begin and end):
/// within 2 % of each other, the gap is the clock (the GPU lowers it under its power limit,
/// and operands with more mantissa bits toggle more of the multipliers: FP16 has 10, BF16 7);
/// otherwise the kernels differ per cycle too.
[[nodiscard]] std::string explain_rate_gap(const Ceiling& slower, const Ceiling& faster, int sm_count);

}  // namespace gpuscope::peak::detail
