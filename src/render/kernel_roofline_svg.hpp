// kernel_roofline_svg: `gpuscope kernels --svg`: the profiled kernels on the roofline of
// the ceilings they were compared with (render/roofline_svg.hpp draws the ceilings; this
// file only chooses the points and says what is missing).
//
// The kernels come as core/kernel_point's points (analyze::roofline_points makes them), the
// same ones `gpuscope report` embeds in its page: this file places them, computing nothing.
//
// Roofline (when at least one kernel has FLOPs — the roofline set — and the ceilings have
// a memory slope and a compute roof): each kernel is a filled, labelled marker at
// (FLOP / DRAM byte, achieved FLOP/s with tensor-core FLOPs), coloured by its bound,
// carrying its numbers as attributes: data-kernel (label), data-intensity (FLOP/B),
// data-flop-rate (FLOP/s; both as "%.17g", exact), data-ceiling, data-bound (the bound
// label); its L2 and L1 points
// (FLOP / L2 byte, FLOP / L1 byte, same FLOP/s: the hierarchical roofline, as Nsight
// Compute draws it) are hollow markers of the same colour, class "kernel-l2" /
// "kernel-l1", drawn where they fall inside the axes. Kernels without FLOPs or without
// DRAM bytes are left out and the subtitle says how many and why.
//
// Bandwidth chart (no kernel has FLOPs — the quick and memory sets — or the ceilings have
// no compute roof): x = kernel duration (s), y = achieved bandwidth (B/s); DRAM bandwidth
// as filled labelled markers, L2 as hollow markers; the memory ceilings (dram_copy,
// l2_read) as horizontal dashed lines with their values. The subtitle says FLOPs were
// not collected and to run `gpuscope kernels --set roofline` for the roofline.
//
// SVG ids and classes (beside svg_chart's): ceilings "ceiling-NAME"; kernel markers
// <circle class="point kernel">; the chart kind is in the title ("Kernels on the
// roofline of ..." or "Kernel bandwidth on ...").
//
// Errors: std::invalid_argument when nothing can be drawn: no kernel with a duration and
// bytes or FLOPs, or no memory ceiling at all (the message says which).
#pragma once

#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "core/kernel_derive.hpp"
#include "core/kernel_point.hpp"
#include "core/machine_profile.hpp"
#include "render/svg_chart.hpp"

namespace gpuscope::render {

/// The colour of a bound's markers ("dram-bound" blue, "compute-bound" red, ...).
[[nodiscard]] std::string bound_color(kernels::Bound bound);

/// The chart described above. `ceiling_source` ("measured" or "theoretical") goes into
/// the subtitle.
[[nodiscard]] Chart kernel_roofline_chart(const MachineProfile& ceilings, std::span<const kernels::KernelPoint> kernels,
                                          std::string_view ceiling_source);

/// kernel_roofline_chart() written as SVG.
void write_kernel_roofline_svg(const MachineProfile& ceilings, std::span<const kernels::KernelPoint> kernels,
                               std::string_view ceiling_source, std::ostream& out);

}  // namespace gpuscope::render
