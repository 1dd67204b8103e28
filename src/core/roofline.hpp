// roofline: the arithmetic of the roofline model over measured ceilings.
//
// Source: S. Williams, A. Waterman, D. Patterson, "Roofline: An Insightful Visual
// Performance Model for Multicore Architectures", CACM 52(4), 2009; the hierarchical
// form (one bandwidth slope per memory level) as Nsight Compute draws it.
//
//   arithmetic intensity  I = FLOP / byte moved at a memory level            (FLOP/B)
//   attainable(I)         = min(compute ceiling, I × bandwidth ceiling)      (FLOP/s)
//   ridge point           = compute ceiling / bandwidth ceiling              (FLOP/B)
//   a kernel left of the ridge is bound by memory, right of it by compute.
//
// Units: FLOP/s (or OP/s), B/s, FLOP/B. Inputs <= 0 or NaN give NaN (never a division
// by zero). Pure functions (core/: no I/O).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/machine_profile.hpp"

namespace gpuscope::core::roofline {

/// min(compute, intensity × bandwidth); NaN if any input is <= 0 or NaN
/// (intensity 0 → 0: a kernel that does no arithmetic attains 0 FLOP/s).
[[nodiscard]] double attainable(double intensity, double compute, double bandwidth);

/// compute / bandwidth (FLOP/B); NaN if either is <= 0 or NaN.
[[nodiscard]] double ridge_point(double compute, double bandwidth);

/// One line of a roofline chart: a memory slope or a compute roof.
struct Line {
  std::string ceiling;  // catalog name ("dram_copy", "tensor_bf16", ...)
  std::string label;    // catalog label ("DRAM copy", ...)
  CeilingKind kind;     // kMemory (value in B/s) or kCompute (value in FLOP/s or OP/s)
  double value = kUnknown;
};

/// The lines a roofline chart draws from a profile, those measured only:
/// memory slopes dram_copy, l2_read, shared_memory; compute roofs fp64_fma, fp32_fma,
/// the faster of tensor_fp16/tensor_bf16, tensor_fp8 — in that order.
[[nodiscard]] std::vector<Line> chart_lines(const MachineProfile& profile);

/// Where a measured workload sits against the ceilings of a profile.
enum class Bound { kMemory, kCompute, kUnknown };

struct Placement {
  double intensity = kUnknown;           // flops / bytes (FLOP/B)
  double achieved_flops = kUnknown;      // FLOP/s
  double achieved_bandwidth = kUnknown;  // B/s
  double attainable = kUnknown;          // FLOP/s at this intensity (or B/s for flops == 0)
  Bound bound = Bound::kUnknown;         // which side of the ridge
  std::string ceiling;                   // the catalog name of the ceiling that bounds it
  double ceiling_value = kUnknown;       // that ceiling's measured value
  double pct_of_ceiling = kUnknown;      // achieved / bounding ceiling × 100
};

/// Places a workload of `flops` FLOP moving `bytes` bytes in `seconds` against the
/// compute ceiling `compute` and the memory ceiling `memory` of `profile` (catalog
/// names). With flops == 0 the workload is memory-bound by definition and
/// pct_of_ceiling = achieved bandwidth / memory ceiling. A ceiling missing from the
/// profile (or measured as NaN or <= 0) → bound kUnknown and NaN percentages.
/// bytes == 0 with flops > 0 → intensity inf, compute-bound without a memory ceiling.
/// A workload exactly at the ridge point is compute-bound. flops or bytes negative or NaN,
/// both 0, or seconds <= 0 or NaN → everything NaN and bound kUnknown.
[[nodiscard]] Placement place(const MachineProfile& profile, double flops, double bytes, double seconds,
                              std::string_view compute, std::string_view memory = "dram_copy");

}  // namespace gpuscope::core::roofline

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
