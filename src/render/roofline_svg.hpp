// roofline_svg: the roofline chart of a machine profile as SVG, on render/svg_chart.hpp.
//
// Log-log: arithmetic intensity (FLOP/B, x) against FLOP/s (y). The lines are those of
// roofline::chart_lines(): one slope y = intensity × bandwidth per memory level (DRAM copy,
// L2 read, shared memory), drawn from the left edge to where it meets the highest roof, and
// one roof y = rate per compute unit (FP64, FP32, FP16/BF16 tensor, FP8 tensor), drawn from
// where it meets the highest slope to the right edge. Each line is labelled with its
// catalog label and its measured value ("DRAM copy 3.01 TB/s"). Every slope × roof
// intersection (ridge point) is a hollow marker on the roof; those of the DRAM slope (the
// lowest one drawn) are labelled with their intensity ("295 FLOP/B"). Optional points
// (kernels: name, intensity, achieved FLOP/s) are drawn as filled markers with their name.
//
// Axes: whole decades, from 1/50 of the smallest ridge point to 20× the largest (widened
// to hold the points), and from the left end of the lowest slope to 3× the highest roof.
// SVG ids: every line is <path id="ceiling-NAME" class="line ceiling memory|compute">.
//
// Errors: std::invalid_argument when the profile has no measured memory slope or no
// measured compute roof (the message names the ceilings that would be needed).
#pragma once

#include <ostream>
#include <span>
#include <string>

#include "core/machine_profile.hpp"
#include "render/svg_chart.hpp"

namespace gpuscope::render {

struct RooflinePoint {
  std::string name;      // label beside the marker
  double intensity = 0;  // FLOP/B
  double flops = 0;      // achieved FLOP/s
  std::string color = "#000000";
};

/// The roofline as a generic Chart (callers may add points or lines before writing it).
[[nodiscard]] Chart roofline_chart(const MachineProfile& profile, std::span<const RooflinePoint> points = {});

/// roofline_chart() written as SVG.
void write_roofline_svg(const MachineProfile& profile, std::ostream& out, std::span<const RooflinePoint> points = {});

}  // namespace gpuscope::render
