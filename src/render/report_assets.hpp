// The files gpuscope report inlines into its HTML page, compiled into the binary at build time
// (src/render/report_page/embed_assets.cmake writes report_assets.cpp into the build folder):
//   "chart_js"      Chart.js's UMD build, from Debian's libjs-chart.js
//                   (/usr/share/javascript/chart.js/chart.min.js)
//   "page_html"     the page's template (src/render/report_page/page.html)
//   "page_css", "page_js"          the page's own style and script (report_page/page.*)
//   "timeline_css", "timeline_js"  the timeline overview's (report_page/timeline.*)
// None holds "</script", "</style" or "<!--" (the build refuses such a file).
// Errors: std::invalid_argument for an unknown name.
#pragma once

#include <string>
#include <string_view>

namespace gpuscope::render::detail {

[[nodiscard]] std::string report_asset(std::string_view name);

}  // namespace gpuscope::render::detail
