// BenchResult: what `gpuscope bench` measured, as plain data — one BenchCase per
// (operator, variant, dtype, size), plus the run's context. Filled by bench/ from the
// timing engine (include/gpuscope/bench.hpp) and the operator's declared work; turned
// into Reports, JSON/CSV, sweep analyses, compare verdicts and SVG charts by CPU-only
// code. Pure data (core/: no CUDA, no I/O). JSON: store/bench_result_json.hpp.
//
// Units: seconds for times, bytes and FLOP per call for the declared work, B/s and
// FLOP/s for the derived rates, FLOP/B for intensity. Unknown = NaN.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/machine_profile.hpp"

namespace gpuscope::core {

/// The timing of one case (a copy of the engine's TimingResult without CUDA types).
struct BenchTiming {
  std::string mode;  // "cold", "hot", "graph"; "serve" for `bench serve` (core/serve_stats.hpp)
  int batch = 1;     // calls per sample
  int samples = 0;
  double min_s = kUnknown, median_s = kUnknown, mean_s = kUnknown, stddev_s = kUnknown;
  double rel_stderr = kUnknown;  // of the median
  std::string stop;              // "converged", "budget", "max_samples"
  double sm_clock_mhz_before = kUnknown, sm_clock_mhz_after = kUnknown;
  int throttled_samples = 0;
  double p90_s = kUnknown, p99_s = kUnknown;  // tail percentiles (`bench serve`; the timing engine leaves NaN)
};

/// The work one call does, as the operator declares it.
struct BenchWork {
  double bytes_read = 0;                     // bytes per call that must come from memory
  double bytes_written = 0;                  // bytes per call that must go to memory
  double flops = 0;                          // FLOP (or OP for integer types) per call; FMA = 2
  std::string compute_ceiling = "fp32_fma";  // the catalog ceiling its arithmetic runs on
};

/// Rates derived from timing + work + machine profile.
struct BenchDerived {
  double bandwidth = kUnknown;  // (bytes_read + bytes_written) / median_s, B/s
  double flop_rate = kUnknown;  // flops / median_s, FLOP/s
  double intensity = kUnknown;  // flops / bytes, FLOP/B
  std::string bound;            // "memory", "compute", "latency" (launch/latency-bound: the
                                // median is within 2x of the measured launch cost or the
                                // achieved rate is < 10 % of both ceilings)
  std::string ceiling;          // catalog name of the bounding ceiling
  double ceiling_value = kUnknown;
  double pct_of_ceiling = kUnknown;  // achieved / ceiling × 100
  std::string ceiling_source;        // "measured" (a gpuscope peak profile) or "theoretical"
};

struct BenchCase {
  std::string op;       // "copy", "vector_add", "gemm", ...
  std::string variant;  // "grid_stride_vec4", "cublaslt", ...
  std::string dtype;    // "f32", "f16", "bf16", "tf32"
  std::string params;   // "n=1048576" or "m=8192,n=8192,k=8192" (stable, sortable key)
  double size = 0;      // the sweep's x value: elements (or M for gemm-like ops)
  BenchWork work;
  BenchTiming timing;
  BenchDerived derived;
  bool verified = false;            // output matched the CPU / cuBLAS / CUB reference
  double max_abs_error = kUnknown;  // against the reference
  std::string note;                 // e.g. "reference check skipped above 2^26 elements"
};

struct BenchRun {
  static constexpr int kFormatVersion = 1;
  int format_version = kFormatVersion;
  std::string gpuscope_version;
  std::string measured_at;  // ISO 8601 UTC
  DeviceFacts device;
  std::string profile_path;  // the machine profile used, "" if theoretical ceilings
  std::vector<BenchCase> cases;
  std::vector<std::string> warnings;
};

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
