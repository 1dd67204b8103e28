// kernel_derive: from the hardware counters of one kernel launch (`gpuscope kernels`) to
// rates, arithmetic intensity, % of the measured ceilings and what bounds the kernel, as
// numbers and enums; what could not be derived is a DerivationNote (a kind and its
// subject). The sentences said about them live beside the reports that print them
// (analyze/kernels/kernel_explain.hpp). Pure functions (core/: no I/O, no text for people).
//
// Inputs: metric name → value (the Nsight Compute names of core/kernel_metric_sets.hpp,
// in their own units: ns, bytes, thread instructions, %), the launch facts (grid, block,
// registers, shared memory), the device limits (devices table), the ceilings (a machine
// profile of `gpuscope peak`, or bench::theoretical_profile() when there is none, as
// core/bench_derive does) and optional tensor calibration factors.
//
// Quantities (t = gpu__time_duration.sum × 1e-9 s):
//   DRAM bytes   dram__bytes_read.sum + dram__bytes_write.sum   (NaN when either is missing)
//   L2 bytes     lts__t_bytes.sum;  L1 bytes  l1tex__t_bytes.sum
//   bandwidth    bytes / t                                          B/s
//   CUDA-core FLOP, the Nsight Compute roofline convention (an FMA is 2 FLOP):
//     fp32 = 2·ffma + fadd + fmul, fp64 = 2·dfma + dadd + dmul, fp16 = 2·(2·hfma + hadd + hmul)
//     (smsp__sass_thread_inst_executed_op_*_pred_on.sum; the half counters count packed
//     HFMA2/HADD2/HMUL2 thread instructions, two lanes each: measured on H100 with
//     examples/cuda/kernel_mix's hfma2_loop, where Nsight Compute's own 2·hfma convention
//     counts half the FLOPs; a scalar __hfma counts as two lanes too); a missing counter counts 0 as long
//     as one of the three is present; none present → NaN (not collected).
//   tensor FLOP  Σ counter × factor over the tensor counters (hgmma per input type, and
//     sm__inst_executed_pipe_tensor.sum); the counters count "math ops" or instructions,
//     not FLOP, so each needs a factor measured on a GEMM of known 2·M·N·K
//     (TensorCalibration). A counter > 0 without a factor → tensor FLOP unknown (NaN) and
//     a note. sm__inst_executed_pipe_tensor.sum is used only when no hgmma counter was collected
//     (wgmma instructions issue on the tensor pipe too: counting both would count twice; and
//     on H100 it is non-zero in kernels without tensor work).
//   FLOP         fp32 + fp64 + fp16 + tensor (those known); FLOP/s = FLOP / t
//   intensity    FLOP / DRAM bytes, FLOP / L2 bytes, FLOP / L1 bytes   FLOP/B (hierarchical
//                roofline, as Nsight Compute draws it); NaN when FLOP or bytes unknown or 0
//
// Utilization of each unit = achieved / ceiling × 100:
//   DRAM    DRAM bytes/s vs bench::memory_ceiling_for(): dram_read (writes ≤ 5 %),
//           dram_write (reads ≤ 5 %), else dram_copy (read + write, as the copy counts)
//   L2      L2 bytes/s vs l2_read;  L1  L1 bytes/s vs shared_memory (L1 and shared memory
//           are one SRAM per SM; its measured bandwidth is the ceiling)
//   FP32/FP64/FP16  FLOP/s vs fp32_fma / fp64_fma / fp16_fma
//   tensor  Σ over precisions of tensor FLOP/s_p / tensor_p ceiling (fp16, bf16, tf32,
//           fp8; the pipe-instruction counter against the faster of tensor_fp16/bf16)
//   With the sol set (no bytes or FLOP counters): the Speed-of-Light percentages as they
//   are — sm__throughput (compute), dram__/lts__/l1tex__throughput (memory levels),
//   gpu__compute_memory_throughput (memory, used when no level is given) — which are % of
//   the theoretical peak, not of the measured ceiling (Utilization::ceiling is empty).
//   A unit whose ceiling is unknown (e.g. l2_read without a profile) is left out and named
//   in a note (NoteKind::kMissingCeiling).
//
// Bound classification, first rule that applies (thresholds below; U = the highest
// utilization, its unit the "busiest unit"):
//   launch-bound     t ≤ launch threshold (2 × the profile's launch cost, bench::launch_cost_s,
//                    else kLaunchBoundDefaultS = 5 µs: a few launch latencies, DESIGN.md
//                    measures 3.2 µs per <<<1,32>>> launch on H100) and U < kLatencyBelowPct
//                    (or unknown): the launch costs as much as the work.
//   dram-, l2-, l1-bound, compute-bound (fp32 | fp64 | fp16 | tensor | sm)
//                    U ≥ kLatencyBelowPct: the busiest unit bounds it (the Speed-of-Light
//                    reading: memory % > compute % ⇒ memory-bound). With one memory level
//                    this is the roofline's ridge-point test (U_mem > U_comp ⇔ I < ridge).
//                    "close to the limit" when U ≥ kCloseToLimitPct.
//   compute or latency  (quick/memory sets: no FLOP counters) every memory level below
//                    kLatencyBelowPct: not memory-bound; compute-bound and latency-bound
//                    cannot be told apart (also when tensor counters ran uncalibrated).
//   occupancy-bound  U < kLatencyBelowPct everywhere and too few warps to hide latency:
//                    achieved occupancy < kLowOccupancyPct, or fewer blocks than SMs.
//   latency-bound    U < kLatencyBelowPct everywhere with enough warps: dependent
//                    instructions, synchronization or divergence stall them.
//   unknown          no duration, or no unit with both a counter and a ceiling.
// Sources: Williams, Waterman, Patterson, "Roofline", CACM 52(4) 2009 (placement);
// Nsight Compute Kernel Profiling Guide, GPU Speed Of Light and its SOLBottleneck rule
// (throughput below 60 % of peak "typically indicates latency issues", 80 % is high);
// gpuscope lowers the latency threshold to 30 % because it compares with *measured*
// ceilings, so a kernel at 40 % is still named after its busiest unit (the explanation
// says "below the limit"); the 25 % occupancy threshold is gpuscope's (docs/metrics.md).
//
// Estimated speedup (as Nsight Compute's "Est. Speedup"): the floor time is the time the
// launch would take if its bounding unit ran at its ceiling, i.e. the largest of
// work_u / ceiling_u over the units with a utilization (DRAM bytes / DRAM B/s, FLOP of a
// precision / its FLOP/s ceiling, L2 and L1 bytes / their ceilings, or the Speed-of-Light
// % of the theoretical peak): floor = t × max_u(pct_u) / 100. The kernel's estimated
// speedup = (1 − floor / t) × 100 % of its time, 0 when the busiest unit is at or above
// its ceiling. With units missing (quick set: no FLOPs) the floor is that of the units
// measured, so the speedup is an upper bound. The program-level gain needs the kernel's
// share of the GPU time (set_time_share): gain = share × speedup / 100, % of the profiled
// launches' summed duration.
//
// Occupancy: achieved = sm__warps_active.avg.pct_of_peak_sustained_active; theoretical =
// sm__maximum_warps_per_active_cycle_pct when collected, else core/occupancy's
// compute() from the launch facts and device limits, with its limiter (warps, blocks,
// registers, shared memory); waves = grid blocks / (active blocks per SM × SMs).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/kernel_workload.hpp"
#include "core/machine_profile.hpp"
#include "core/occupancy.hpp"

namespace gpuscope::core::kernels {

/// Thresholds of the classification (see the file comment for their sources).
inline constexpr double kLatencyBelowPct = 30.0;      // every unit below: latency/occupancy/launch
inline constexpr double kCloseToLimitPct = 80.0;      // "close to the limit"
inline constexpr double kLowOccupancyPct = 25.0;      // achieved occupancy below: occupancy-bound
inline constexpr double kLaunchBoundDefaultS = 5e-6;  // launch threshold without a launch cost
inline constexpr double kLaunchCostFactor = 2.0;      // launch threshold = 2 × launch cost

/// Metric name → value, in the metric's own unit (kernel_metrics rows of one launch).
using MetricValues = std::map<std::string, double, std::less<>>;

/// Tensor counter name → FLOP per counted unit (e.g. a wgmma "op" or a tensor-pipe
/// instruction), measured on a GEMM of known 2·M·N·K FLOP.
using TensorCalibration = std::map<std::string, double, std::less<>>;

/// The factors gpuscope kernels starts from: 1 FLOP per count for the Hopper wgmma
/// counters sm__ops_path_tensor_op_hgmma_src_{fp16,bf16_dst_fp32,tf32_dst_fp32}.sum,
/// calibrated on H100 against cuBLAS GEMMs of known 2·M·N·K (4096³ and 2048×6144×8192,
/// factor 1.000 for each; validation/kernels_check.py measures it again on every GPU run).
/// sm__inst_executed_pipe_tensor.sum and the fp8 counter have no factor (instruction
/// shapes vary): their FLOPs stay unknown unless --tensor-factor gives one.
[[nodiscard]] TensorCalibration default_tensor_calibration();

/// One launch's facts (kernel_profiles row). 0 = unknown.
struct LaunchFacts {
  std::int64_t grid_blocks = 0;              // grid_x × grid_y × grid_z
  std::int64_t block_threads = 0;            // block_x × block_y × block_z
  std::int64_t registers_per_thread = 0;     // < 0 = unknown: no theoretical occupancy
  std::int64_t shared_memory_per_block = 0;  // static + dynamic, bytes; < 0 = unknown
  std::int64_t passes = 0;                   // replay passes the metrics took (kernel_profiles.passes)
  // --cache-control all (meta cache_control): gpuscope's own replay, every pass from the same
  // saved memory and an empty L2, under CUPTI's user replay; else CUPTI's kernel replay.
  bool passes_flushed = false;
};

/// The device the launch ran on (devices table). sm_count 0 = unknown.
struct KernelDevice {
  std::int64_t sm_count = 0;
  occupancy::DeviceLimits limits;  // all 0 = unknown: no theoretical occupancy
};

enum class Bound { kUnknown, kLaunch, kLatency, kOccupancy, kDram, kL2, kL1, kCompute, kComputeOrLatency };

/// "unknown", "launch-bound", "latency-bound", "occupancy-bound", "dram-bound", "l2-bound",
/// "l1-bound", "compute-bound", "compute or latency".
[[nodiscard]] std::string_view bound_name(Bound bound);

/// How busy one unit was.
struct Utilization {
  std::string unit;                 // "dram", "l2", "l1", "fp32", "fp64", "fp16", "tensor"; sol: "sm", "memory"
  std::string label;                // "DRAM", "L2", "L1/shared", "FP32", "FP64", "FP16", "tensor", "SM", "memory"
  bool memory = false;              // a memory level (else a compute unit)
  std::string ceiling;              // catalog name of the ceiling ("dram_copy"); empty for sol percentages
  double achieved = kUnknown;       // B/s or FLOP/s; NaN for sol percentages
  double ceiling_value = kUnknown;  // B/s or FLOP/s; NaN for sol percentages
  double pct = kUnknown;            // achieved / ceiling × 100 (sol: the metric)
};

struct OccupancyFacts {
  double achieved_pct = kUnknown;     // sm__warps_active.avg.pct_of_peak_sustained_active
  double theoretical_pct = kUnknown;  // the counter, else occupancy::compute()
  bool theoretical_from_counter = false;
  std::optional<occupancy::Occupancy> computed;  // occupancy::compute() when the facts allow
  double waves = kUnknown;                       // grid blocks / (active blocks per SM × SMs)
};

/// What derive() could not compute, or computed with a caveat; analyze::note_text() says it.
enum class NoteKind {
  kMissingCeiling,      // a unit's ceiling is not in the ceilings: its utilization is unknown
  kTensorUncalibrated,  // tensor counters > 0 without a calibration factor: tensor FLOPs unknown
  kFlopsNotCollected,   // bytes but no FLOP counters: classified on the memory ceilings only
  kReplayPasses,        // the metrics took several replay passes (cache states differ; flushed: triggers)
  kImpossibleHitRate,   // a hit rate above 100 % (counters of different passes)
  kLaunchFactsUnknown,  // registers or shared memory unknown: no theoretical occupancy
  kNoDuration,          // gpu__time_duration.sum missing: no rates
};

struct DerivationNote {
  NoteKind kind = NoteKind::kNoDuration;
  std::string subject;     // kMissingCeiling: the ceiling's catalog name; kImpossibleHitRate: the metric
  std::string unit_label;  // kMissingCeiling: the unit's Utilization::label ("DRAM", "FP32", "tensor")
  bool memory = false;     // kMissingCeiling: a memory level (a measured profile would have it)
  std::int64_t count = 0;  // kReplayPasses: the number of passes
  bool flushed = false;    // kReplayPasses: LaunchFacts::passes_flushed
  std::vector<std::pair<std::string, double>> counters;  // kTensorUncalibrated: counter → count
};

struct KernelDerived {
  double duration_s = kUnknown;
  double dram_bytes = kUnknown, l2_bytes = kUnknown, l1_bytes = kUnknown;
  double dram_bandwidth = kUnknown, l2_bandwidth = kUnknown, l1_bandwidth = kUnknown;  // B/s
  double fp32_flops = kUnknown, fp64_flops = kUnknown, fp16_flops = kUnknown;          // NaN: not collected
  double tensor_flops = kUnknown;  // NaN: not collected, or a counter without a factor
  double flops = kUnknown;         // sum of the known ones; NaN when none was collected
  double flop_rate = kUnknown;     // FLOP/s
  double intensity_dram = kUnknown, intensity_l2 = kUnknown, intensity_l1 = kUnknown;  // FLOP/B
  bool flops_collected = false;           // any CUDA-core FLOP or tensor counter present
  bool tensor_uncalibrated = false;       // a tensor counter > 0 had no factor
  std::string ceiling_source;             // "measured" or "theoretical" (copied from the caller)
  std::vector<Utilization> utilizations;  // highest pct first
  OccupancyFacts occupancy;
  Bound bound = Bound::kUnknown;
  std::string bound_unit;   // compute-bound: "fp32", "fp64", "fp16", "tensor", "sm"
  std::string bound_label;  // bound_name(), "compute-bound (tensor)" for compute
  // The busiest unit's utilization (the bounding one for memory/compute bounds).
  std::string ceiling;  // its catalog ceiling ("dram_copy"), empty for sol
  double pct_of_ceiling = kUnknown;
  double launch_threshold_s = kUnknown;  // launch_threshold_s(ceilings): the launch-bound rule's, s
  std::vector<DerivationNote> notes;     // what was missing, in the order derive() met it
  // Estimated speedup (file comment). NaN: no duration or no utilization.
  double floor_s = kUnknown;           // time at the bounding unit's ceiling, s
  std::string floor_unit;              // that unit's Utilization::label ("DRAM", "FP32", ...)
  double est_speedup_pct = kUnknown;   // (1 − floor / duration) × 100, ≥ 0
  double time_share_pct = kUnknown;    // of the profiled GPU time (set_time_share)
  double program_gain_pct = kUnknown;  // time_share_pct × est_speedup_pct / 100
  // --set compute / warps / detailed (core/kernel_workload.hpp); empty when not collected.
  ComputeWorkload compute;
  WarpStates warps;
};

/// Sets `derived`'s time share (% of the GPU time of all profiled launches) and the
/// program-level gain from it; a share that is not finite or negative leaves both NaN.
void set_time_share(KernelDerived& derived, double share_pct);

/// fp32/fp64/fp16 CUDA-core FLOP per the formulas above; `precision` is "fp32", "fp64" or
/// "fp16". NaN when none of its three counters is in `values`.
[[nodiscard]] double cuda_core_flops(const MetricValues& values, std::string_view precision);

/// Tensor FLOP of one precision ("fp16", "bf16", "tf32", "fp8" for the hgmma counters;
/// "pipe" for sm__inst_executed_pipe_tensor.sum): counter × factor. NaN when the counter
/// is missing, or > 0 without a factor; 0 when the counter is 0.
[[nodiscard]] double tensor_flops(const MetricValues& values, std::string_view precision,
                                  const TensorCalibration& calibration);

/// Launch threshold of the launch-bound rule for `ceilings` (see the file comment), s.
[[nodiscard]] double launch_threshold_s(const MachineProfile& ceilings);

/// Derives everything above for one launch. `ceilings`: a measured profile or
/// bench::theoretical_profile(); `ceiling_source` is "measured" or "theoretical" and is
/// copied into the result. Never throws; missing inputs give NaN and notes.
[[nodiscard]] KernelDerived derive(const MetricValues& values, const LaunchFacts& launch, const KernelDevice& device,
                                   const MachineProfile& ceilings, std::string_view ceiling_source,
                                   const TensorCalibration& calibration = {});

/// The mean launch of several launches of one kernel: counters (".sum" rollups) are
/// averaged arithmetically, so rates of the mean equal total bytes / total time; every
/// other metric (percentages, per-cycle averages) is averaged weighted by
/// gpu__time_duration.sum (plain mean when a duration is missing). A metric absent from
/// some launches is averaged over those that have it. Empty input → empty map.
[[nodiscard]] MetricValues mean_launch(std::span<const MetricValues> launches);

}  // namespace gpuscope::core::kernels

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
