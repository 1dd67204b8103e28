#include "core/kernel_point.hpp"

#include <cmath>
#include <utility>

namespace gpuscope::core::kernels {

KernelPoint kernel_point(std::string label, const KernelDerived& d) {
  KernelPoint p;
  p.label = std::move(label);
  p.intensity = d.intensity_dram;
  p.intensity_l2 = d.intensity_l2;
  p.intensity_l1 = d.intensity_l1;
  p.flop_rate = d.flop_rate;
  p.ceiling = d.ceiling;
  // The busiest unit is the bounding one (utilizations are sorted, highest first).
  if (!d.utilizations.empty()) p.ceiling_value = d.utilizations.front().ceiling_value;
  p.pct_of_ceiling = d.pct_of_ceiling;
  p.bound = d.bound;
  p.bound_label = d.bound_label;
  p.on_roofline = std::isfinite(p.intensity) && p.intensity > 0 && std::isfinite(p.flop_rate) && p.flop_rate > 0;
  p.flops_collected = d.flops_collected;
  p.duration_s = d.duration_s;
  p.dram_bandwidth = d.dram_bandwidth;
  p.l2_bandwidth = d.l2_bandwidth;
  return p;
}

}  // namespace gpuscope::core::kernels
