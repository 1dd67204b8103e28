// html_report: core::ReportPage (core/report_page.hpp) → one self-contained HTML file, the
// page `gpuscope report` writes (docs/report.md explains every picture).
//
// The file opens from disk with no network: Chart.js (Debian's libjs-chart.js), the page's
// script and style and the timeline overview's are inlined (render/report_assets.hpp); it
// fetches nothing. The page's data are ONE JSON object in
//   <script type="application/json" id="gpuscope-data">...</script>
// (report_page_json below) which src/render/report_page/page.js reads and turns into the
// DOM with createElement and textContent only, so a name from the traced program is text,
// never markup. Errors in the page's scripts are written into the element #gpuscope-errors.
// Two sections are SVG written into the page here instead, with their text escaped: the
// kernels on the roofline (render/kernel_roofline_svg.hpp, drawn from the very points the
// data's "roofline" holds, core/kernel_point.hpp) and, when the trace holds a generate
// loop, the Tokens section (render/token_timeline_svg.hpp; without one the page is unchanged).
//
// A long name is shown clipped (the first 1,000 characters in a table cell) with a button that
// shows the whole text from the page data; the kernels' labels on the roofline are clipped here
// to 512 bytes (docs/report.md, "Long names").
//
// Numbers in the DOM carry their raw value for tests: each element showing a cell of a
// Report has data-report (the report's name), data-row (the row's index in the Report),
// data-col (the column's name) and data-value (the value as JSON writes it; "null" for
// NULL); its text is the formatted number with its unit (or the unit in the column header).
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/report_page.hpp"

namespace gpuscope::render {

/// The page's data (version 2):
///   {"version": 2, "kind": "trace" | "diff", "trace": S, "generator": S, "base_ns": N, "wall_ns": N,
///    "headline": [REPORT, ...], "gpus": [{"gpu", "name", "wall_ns", "kernel_ns", "copy_ns",
///    "memset_ns", "idle_ns"}], "gpus_scope": S, "steps_source": S, "steps_total": N,
///    "steps": [{"pid", "label" (NAME), "start_ns", "wall_ns", "gpu_busy_ns", "idle_ns", "state",
///    "steps"}], "tables": [REPORT, ...], "memory": [SERIES], "metrics": [SERIES],
///    "timeline": TIMELINE or null, "roofline": {"ceiling_source": S, "points": [{"kernel" (NAME),
///    "intensity" (FLOP/DRAM B), "intensity_l2", "intensity_l1" (FLOP/B), "flop_rate" (FLOP/s,
///    tensor-core FLOPs included), "ceiling" (catalog name), "ceiling_value" (B/s or FLOP/s),
///    "pct_of_ceiling" (%), "bound" (label), "on_roofline"}]}, "notes": [S], "strings": [S]}
/// NAME is an index into "strings", which holds each distinct name once (kernel names, NVTX
/// texts, operator and module names can be 100 kB long and are listed by several tables and
/// the timeline; stored once, they are read once). REPORT is render::report_json's object
/// (`gpuscope stats --format json`'s per-report object) with each cell of a text column a
/// NAME (null stays null); SERIES {"name", "unit", "chart", "t_ns": [N], "values": [X],
/// "points_total"}; TIMELINE render::timeline_overview_json's with each of its "names" a NAME.
/// page.js puts the names back in place before building the page. Unknown numbers are null.
/// Text is made valid UTF-8.
[[nodiscard]] nlohmann::json report_page_json(const core::ReportPage& page);

/// `json` as text that can sit inside a <script> element: compact, invalid UTF-8 replaced
/// by U+FFFD, and every '<', '>' and '&' and U+2028 / U+2029 written as a \uXXXX escape, so
/// no "</script>" or "<!--" can appear in it; so are DEL, the C1 controls and U+FFFE / U+FFFF
/// (JSON escapes the C0 controls), which HTML does not allow raw. JSON.parse reads it back
/// unchanged.
[[nodiscard]] std::string script_safe_json(const nlohmann::json& json);

/// `text` with & < > " ' as character references (for element text and attribute values),
/// made valid UTF-8 with no control character: render::xml_escape (svg_chart.hpp).
[[nodiscard]] std::string html_escape(std::string_view text);

/// Writes the whole page to `out`.
void write_html_report(const core::ReportPage& page, std::ostream& out);

}  // namespace gpuscope::render
