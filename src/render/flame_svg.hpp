// A flame graph (icicle: callers above callees) of the Python stacks sampled while the GPU
// idled, as the `gpuscope report` page shows it (core::ReportPage::python_idle; the weights are
// gpu_idle_py's: analyze/python/gpu_idle_charge.hpp).
//
// Layout: one icicle per thread (a stack's first frame names its thread), stacked top to bottom,
// most idle time first. Within one, the stacks are merged into a tree by frame text; each node's
// width is its idle time over `total_ns` of the plot's width (each thread's samples split every
// idle gap among themselves, so each thread alone can reach the full width), children left to
// right by idle time (larger first), a row per depth. Nodes narrower than kMinFlamePx are left
// out (their time stays in their parent's width) and counted in the caption. Each box carries a
// <title>: the frame, its idle time (ms) and its share of the GPU idle time (%). Colours by file,
// so one file's frames share a hue; thread boxes grey.
#pragma once

#include <ostream>
#include <vector>

#include "core/report_page.hpp"

namespace gpuscope::render {

/// Narrowest box drawn (px of the 1,100 px wide view box).
inline constexpr double kMinFlamePx = 0.5;

/// Writes the SVG (no XML declaration) of `stacks` scaled to `total_ns` (the GPU idle time the
/// shares are of; the most sampled thread's time when <= 0). Writes nothing for no stacks.
void write_flame_svg(const std::vector<core::PageIdleStack>& stacks, double total_ns, std::ostream& out);

/// The report page's link and section for the flame graph (page.html's @@PYTHON_NAV@@ and
/// @@PYTHON@@); nothing when the page has no Python stacks sampled while the GPU idled.
void write_python_nav(const core::ReportPage& page, std::ostream& out);
void write_python_section(const core::ReportPage& page, std::ostream& out);

}  // namespace gpuscope::render
