// bench_runner: runs operators of the suite (bench/ops/operator.hpp) over a list of
// sizes on one GPU and collects a BenchRun (core/bench_result.hpp) — the engine behind
// `gpuscope bench OP`.
//
// For every variant (all, or the one asked for) × size, in that order: skip the case
// (a warning in BenchRun::warnings says why) when the size is above the variant's
// max_size or its device_bytes exceed 90 % of the free device memory; else setup() the
// inputs, time enqueue() with the timing engine (gpuscope/bench.hpp, time_gpu), then
// verify() the outputs of the last timed call against the reference. The case gets the
// operator's declared work, the timing, verified / max_abs_error and, when the check
// failed, the first failure in `note`. derived is left empty: the caller fills it with
// derive_run() (core/bench_derive.hpp), which needs the machine profile.
//
// Nothing is printed; on_case (when set) is called after each case, or skipped case, for
// progress output.
//
// Errors: std::invalid_argument for an unknown variant or dtype, or a size the operator
// does not take (before anything runs on the GPU); gpuscope::bench::CudaError for CUDA
// failures (the run stops: a failed kernel leaves the context unusable);
// std::runtime_error when cuBLASLt is missing (gemm, linear_small). Two failures only skip
// the case (with a warning, like the skips above): out of device memory, and a shape the
// kernel cannot launch (std::invalid_argument from a launcher).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/ops/operator.hpp"
#include "core/bench_result.hpp"
#include "gpuscope/bench.hpp"

namespace gpuscope::bench {

struct RunOptions {
  std::string variant;  // "" = every variant of the operator
  ops::DType dtype = ops::DType::kF32;
  std::vector<std::vector<std::int64_t>> sizes;  // --sizes tokens (core/bench_sizes.hpp)
  TimingOptions timing;                          // mode, budget, noise target, ...
  bool verify = true;                            // run the reference check
  int device = 0;                                // CUDA device ordinal
};

/// Called after each case; `skipped` is the reason when the case did not run, else "".
using CaseCallback = std::function<void(const BenchCase& c, const std::string& skipped)>;

/// The cases run_operator() will run, as CaseSpecs, validated (variants, dtype, shapes);
/// touches no GPU. Throws std::invalid_argument as described above.
[[nodiscard]] std::vector<ops::CaseSpec> plan_cases(const ops::Operator& op, const RunOptions& options);

/// Runs `op` (see the file comment). BenchRun::device, measured_at and gpuscope_version
/// are filled; cases in plan_cases() order (skipped ones left out).
[[nodiscard]] BenchRun run_operator(const ops::Operator& op, const RunOptions& options,
                                    const CaseCallback& on_case = {});

/// BenchTiming (core/) from the engine's TimingResult.
[[nodiscard]] BenchTiming to_bench_timing(const TimingResult& t);

}  // namespace gpuscope::bench
