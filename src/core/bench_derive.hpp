// bench_derive: from what a benchmark case did (BenchWork: bytes and FLOP per call) and
// how long it took (BenchTiming: the median per call) to achieved rates, the ceiling that
// bounds it, the percentage of that ceiling, and whether it is memory-, compute- or
// latency-bound (BenchDerived, core/bench_result.hpp). Pure functions, no I/O.
//
// Rates (t = median_s, the robust centre of the samples):
//   bandwidth = (bytes_read + bytes_written) / t           B/s
//   flop_rate = flops / t                                  FLOP/s (OP/s for integer work)
//   intensity = flops / (bytes_read + bytes_written)       FLOP/B; NaN when no bytes
//
// Ceilings: with a machine profile (`gpuscope peak`) its measured values, source
// "measured"; without one, theoretical_profile(): the device's units × clock (formulas
// at theoretical_ceiling below), source "theoretical" — an upper bound real kernels rarely
// reach, so the run gets a warning. The memory ceiling is chosen by
// memory_ceiling_for(); the compute ceiling is BenchWork::compute_ceiling. Placement on
// the roofline (which of the two bounds, % of it) is roofline::place().
//
// Bound classification, in this order:
//   "latency"  the median is <= 2 × the launch cost of the profile (graph mode:
//              graph_kernel_cost; cold and hot: 1 / launch_rate, else launch_latency), or
//              the achieved rate is < 10 % of both ceilings (of each one known; with
//              flops = 0 the compute side is 0 %): the chip is mostly idle — too little
//              parallel work, a serial dependency, or launch overhead.
//   "memory"   left of the ridge point (intensity < compute / bandwidth ceiling).
//   "compute"  right of it.
//   ""         unknown (no timing, or a ceiling missing from the profile).
// Source: S. Williams, A. Waterman, D. Patterson, "Roofline", CACM 52(4), 2009, for the
// placement; the 10 % and 2× thresholds are gpuscope's (docs/bench.md).
#pragma once

#include <string>
#include <string_view>

#include "core/bench_result.hpp"
#include "core/machine_profile.hpp"

namespace gpuscope::core {

/// Fractions of the thresholds above (documented in docs/bench.md).
inline constexpr double kLatencyLaunchFactor = 2.0;        // median <= 2 × launch cost
inline constexpr double kLatencyCeilingFraction = 0.10;    // < 10 % of both ceilings
inline constexpr double kWriteShareForReadCeiling = 0.05;  // see memory_ceiling_for

/// The theoretical value of the catalog ceiling `name` on `device` at SM clock
/// `sm_clock_mhz`, in the catalog unit; NaN where gpuscope knows no formula (l2_read,
/// transfers, latencies, or an architecture not in the table):
///   dram_read/dram_write/dram_copy  2 × max_mem_clock_mhz × 1e6 × memory_bus_width_bits / 8
///                                   (double data rate; H100 SXM: 2 × 2619 MHz × 640 B =
///                                   3.35 TB/s, the datasheet value)
///   shared_memory                   sm_count × 128 B/clock (32 banks × 4 B) × clock
///   everything else                 sm_count × (FLOP or OP per SM per clock) × clock, per
///                                   compute capability — the CUDA C++ Programming Guide's
///                                   arithmetic-instruction throughput table and the
///                                   datasheets (an FMA is 2 FLOP; tensor rates dense):
///       cc     fp64 fp32 fp16 bf16 int32 sfu  tensor fp16/bf16 tf32  fp8  int8
///       7.0      64  128  256    -   128   16       1024         -     -     -
///       8.0      64  128  512  256   128   16       2048      1024     -  4096
///       8.6/8.9   4  256  256  256   128   16          -         -     -     -
///       9.0     128  256  512  512   128   16       4096      2048  8192  8192
///   e.g. H100 SXM: 132 SMs × 4096 × 1830 MHz = 989 TFLOP/s dense BF16 (datasheet).
/// A clock or a unit count that is unknown (<= 0 or NaN) gives NaN.
[[nodiscard]] double theoretical_ceiling(const DeviceFacts& device, std::string_view name, double sm_clock_mhz);

/// A profile holding, as `measured`, every catalog ceiling theoretical_ceiling() knows
/// for `device` at `sm_clock_mhz` (also copied into `theoretical`); device copied in.
[[nodiscard]] MachineProfile theoretical_profile(const DeviceFacts& device, double sm_clock_mhz);

/// The memory ceiling that bounds `work` timed in `mode`:
///   "l2_read"    mode is "hot" or "graph" and the bytes per call fit in half the L2
///                (`l2_bytes`): back-to-back calls find their data in L2;
///   "dram_read"  bytes_written <= 5 % of the bytes (a reduction reads, barely writes);
///   "dram_write" bytes_read <= 5 % of the bytes (a fill);
///   "dram_copy"  otherwise (read + write bytes, as the copy ceiling counts them).
[[nodiscard]] std::string memory_ceiling_for(const BenchWork& work, std::string_view mode, std::int64_t l2_bytes);

/// The launch cost (s) the latency rule compares the median with, from the profile:
/// graph mode graph_kernel_cost, otherwise 1 / launch_rate, else launch_latency; NaN when
/// the profile has none of them.
[[nodiscard]] double launch_cost_s(const MachineProfile& ceilings, std::string_view mode);

/// Derives the rates and the placement of one case against `ceilings` (a measured profile
/// or theoretical_profile()); `ceiling_source` is copied into the result ("measured" or
/// "theoretical"). A memory ceiling chosen by memory_ceiling_for() that `ceilings` lacks
/// falls back to dram_copy. No timing (median NaN or <= 0) → all rates NaN, bound "".
[[nodiscard]] BenchDerived derive(const BenchWork& work, const BenchTiming& timing, const MachineProfile& ceilings,
                                  std::string_view ceiling_source);

/// Fills `derived` of every case of `run`. With a profile: its measured ceilings; a
/// profile of another GPU (uuid differs, both known) adds a warning to run.warnings.
/// Without one (nullptr): theoretical_profile(run.device, each case's SM clock before the
/// run, else max_sm_clock_mhz) and one warning that says so and what to do.
void derive_run(BenchRun& run, const MachineProfile* profile);

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
