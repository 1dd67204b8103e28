// kernel_point: one kernel's place on the roofline, the one set of numbers that
// `gpuscope kernels --svg` draws and `gpuscope report` draws and embeds in its page (and
// that `gpuscope kernels --report` prints as AI DRAM, Perf, Ceiling, % of Ceiling and Bound):
// nothing is computed again after core/kernel_derive's derive(), so the chart, the page and
// the report cannot disagree.
//
//   x       intensity  = FLOP / DRAM byte (FLOP/B; KernelDerived::intensity_dram), with the
//                        hierarchical points FLOP / L2 byte and FLOP / L1 byte beside it
//   y       flop_rate  = (CUDA-core FLOP + tensor-core FLOP) / duration (FLOP/s;
//                        KernelDerived::flop_rate: tensor FLOP need the calibration factors
//                        of kernels::default_tensor_calibration() or --tensor-factor)
//   ceiling the catalog name of the busiest unit's ceiling ("dram_copy", "tensor_bf16"), its
//           value (B/s or FLOP/s) and the kernel's % of it
//   bound   derive()'s classification and its label ("compute-bound (tensor)")
// on_roofline is true when both x and y are finite and > 0: a log-log roofline has no place
// for a kernel without FLOPs or without DRAM bytes (copies, launch-bound no-ops).
// duration and bandwidths come along for the bandwidth chart drawn when no kernel has FLOPs.
//
// Pure function (core/: no I/O).
#pragma once

#include <string>

#include "core/kernel_derive.hpp"

namespace gpuscope::core::kernels {

struct KernelPoint {
  std::string label;                                          // kernel name (or "name #launch")
  double intensity = kUnknown;                                // FLOP / DRAM byte (FLOP/B)
  double intensity_l2 = kUnknown, intensity_l1 = kUnknown;    // FLOP / L2, L1 byte (FLOP/B)
  double flop_rate = kUnknown;                                // FLOP/s, tensor FLOPs included
  std::string ceiling;                                        // catalog name; empty: unknown
  double ceiling_value = kUnknown;                            // B/s or FLOP/s
  double pct_of_ceiling = kUnknown;                           // %
  Bound bound = Bound::kUnknown;                              //
  std::string bound_label;                                    // "compute-bound (tensor)"
  bool on_roofline = false;                                   // x and y finite and > 0
  bool flops_collected = false;                               // FLOP counters were collected
  double duration_s = kUnknown;                               // s
  double dram_bandwidth = kUnknown, l2_bandwidth = kUnknown;  // B/s
};

/// The point of a kernel whose counters derive() turned into `derived`, labelled `label`.
[[nodiscard]] KernelPoint kernel_point(std::string label, const KernelDerived& derived);

}  // namespace gpuscope::core::kernels

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
