#include "core/roofline.hpp"

#include <algorithm>
#include <cmath>

namespace gpuscope::core::roofline {
namespace {

bool positive(double v) { return v > 0; }  // false for NaN too

// The measured value of `name` in the profile when it is usable (> 0), else NaN.
double measured(const MachineProfile& profile, std::string_view name) {
  const Ceiling* c = profile.find(name);
  return c && positive(c->measured) ? c->measured : kUnknown;
}

Line make_line(std::string_view name, double value) {
  const CeilingInfo* info = find_ceiling_info(name);
  return Line{std::string(name), info ? std::string(info->label) : std::string(name),
              info ? info->kind : CeilingKind::kCompute, value};
}

}  // namespace

double attainable(double intensity, double compute, double bandwidth) {
  if (!positive(compute) || !positive(bandwidth) || std::isnan(intensity) || intensity < 0) return kUnknown;
  if (intensity == 0) return 0.0;
  return std::min(compute, intensity * bandwidth);  // intensity = inf → compute
}

double ridge_point(double compute, double bandwidth) {
  if (!positive(compute) || !positive(bandwidth)) return kUnknown;
  return compute / bandwidth;
}

std::vector<Line> chart_lines(const MachineProfile& profile) {
  std::vector<Line> lines;
  for (std::string_view name : {"dram_copy", "l2_read", "shared_memory"})
    if (const double v = measured(profile, name); !std::isnan(v)) lines.push_back(make_line(name, v));
  for (std::string_view name : {"fp64_fma", "fp32_fma"})
    if (const double v = measured(profile, name); !std::isnan(v)) lines.push_back(make_line(name, v));
  // One roof for 16-bit tensor math: the faster of FP16 and BF16 (on Hopper they share a rate).
  const double fp16 = measured(profile, "tensor_fp16"), bf16 = measured(profile, "tensor_bf16");
  if (!std::isnan(fp16) || !std::isnan(bf16)) {
    const bool use_bf16 = std::isnan(fp16) || (!std::isnan(bf16) && bf16 >= fp16);
    lines.push_back(use_bf16 ? make_line("tensor_bf16", bf16) : make_line("tensor_fp16", fp16));
  }
  if (const double v = measured(profile, "tensor_fp8"); !std::isnan(v)) lines.push_back(make_line("tensor_fp8", v));
  return lines;
}

Placement place(const MachineProfile& profile, double flops, double bytes, double seconds, std::string_view compute,
                std::string_view memory) {
  Placement p;
  if (std::isnan(flops) || std::isnan(bytes) || flops < 0 || bytes < 0 || !positive(seconds)) return p;
  if (flops == 0 && bytes == 0) return p;  // no work: nothing to place
  p.intensity = bytes > 0 ? flops / bytes : HUGE_VAL;
  p.achieved_flops = flops / seconds;
  p.achieved_bandwidth = bytes / seconds;

  const double bw = measured(profile, memory);
  if (flops == 0) {  // pure data movement: memory-bound by definition
    if (std::isnan(bw)) return p;
    p.bound = Bound::kMemory;
    p.ceiling = std::string(memory);
    p.ceiling_value = bw;
    p.attainable = bw;  // B/s
    p.pct_of_ceiling = p.achieved_bandwidth / bw * 100.0;
    return p;
  }
  const double peak = measured(profile, compute);
  if (std::isnan(peak) || (bytes > 0 && std::isnan(bw))) return p;
  // bytes == 0 (intensity inf) is compute-bound whatever the memory ceiling; a kernel exactly
  // at the ridge point counts as compute-bound.
  const bool memory_bound = bytes > 0 && p.intensity < ridge_point(peak, bw);
  if (memory_bound) {
    p.bound = Bound::kMemory;
    p.ceiling = std::string(memory);
    p.ceiling_value = bw;
    p.attainable = p.intensity * bw;
    p.pct_of_ceiling = p.achieved_bandwidth / bw * 100.0;
  } else {
    p.bound = Bound::kCompute;
    p.ceiling = std::string(compute);
    p.ceiling_value = peak;
    p.attainable = peak;
    p.pct_of_ceiling = p.achieved_flops / peak * 100.0;
  }
  return p;
}

}  // namespace gpuscope::core::roofline
