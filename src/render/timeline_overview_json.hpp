// render/timeline_overview_json: core::TimelineOverview (core/timeline_overview.hpp) as the
// compact JSON gpuscope report's page embeds at data["timeline"], drawn by
// src/render/report_page/timeline.js. About 15 bytes per included event and `bins` × 4/3
// bytes per lane, so a 1M-event trace stays within the page's 10 MB.
//
// Shape (version 1; times are integer ns relative to base_ns unless named *_abs):
//   {"version": 1, "base_ns_abs": N, "end_ns_abs": N, "range_begin_ns": N, "range_end_ns": N,
//    "span_ns": N (range_end_ns - range_begin_ns, at least 1), "bins": N,
//    "total_events": N, "included_events": N, "item_cap": N, "selection": "all" | "longest and spread",
//    "groups": [{"label": S, "detail": S, "gpu": B}, ...],
//    "lanes": {"group": [N...], "kind": ["cuda_api" | "nvtx" | "gpu_stream"...], "label": [S...],
//              "pid": [N...], "tid": [N...], "gpu": [N...], "stream": [N...], "events": [N...],
//              "busy_ns": [N...], "items": [N...] (items per lane: a lane's items are contiguous),
//              "density": [B64...] (bins bytes each: 255 × busy fraction, bin i covering
//              range_begin_ns + span_ns × [i, i + 1) / bins)},
//    "names": [S...], "launch_configs": [[gx, gy, gz, bx, by, bz]...],
//    "items": {"count": N, "start": B64, "duration": B64, "kind": B64, "name": B64,
//              "correlation": B64, "config": B64, "bytes": B64}}
// B64 is standard base64 (RFC 4648, with padding). Item columns hold `count` values each:
// "kind" one byte per item (core::OverviewItemKind); the others unsigned LEB128 varints:
// "start" the difference from the previous item's start on the same lane (the lane's
// first: its start), "duration", "name" (index into names), "config" (launch_configs index
// + 1; 0 = none), "bytes"; "correlation" zigzag-encoded difference from the previous item's
// (the first: from 0). Strings are the trace's text as is (UTF-8 made valid): the page
// shows them with textContent, never as markup.
//
// timeline_overview_from_json is the inverse (tests, tools). Errors: std::invalid_argument
// for JSON that is not this shape.
#pragma once

#include <nlohmann/json.hpp>

#include "core/timeline_overview.hpp"

namespace gpuscope::render {

[[nodiscard]] nlohmann::json timeline_overview_json(const core::TimelineOverview& overview);

[[nodiscard]] core::TimelineOverview timeline_overview_from_json(const nlohmann::json& json);

}  // namespace gpuscope::render
