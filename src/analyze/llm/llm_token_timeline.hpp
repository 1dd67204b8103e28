// llm_token_timeline: the data of the "Tokens" section of `gpuscope report` (issue 24: "a
// per-token timeline"): each generation llm_sum reports, forward step by forward step, with
// the step's GPU busy part and its CPU time by cause (core/token_timeline.hpp gives the shapes
// and units; render/token_timeline_svg.hpp draws them; docs/report.md, docs/llm.md).
//
// Source: find_generations and generate_loops (analyze/llm/llm_generations.hpp, llm_reports.hpp),
// the same generations, TTFT and TPOT as `gpuscope stats -r llm_sum`, and each forward's CPU
// window by cause as `stats -r llm_step_sum` averages them (cpu_cause_parts). A step whose
// token has no GPU end (no GPU work) is left out of the drawing.
//
// Errors: store::DatabaseError as llm_sum. A trace without module records or without a
// generate loop gives an empty TokenTimeline (generations_total 0), cheaply.
#pragma once

#include <span>

#include "analyze/llm/llm_generations.hpp"
#include "core/token_timeline.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

/// The token timeline of the trace in `db` (see the file comment).
[[nodiscard]] core::TokenTimeline token_timeline(store::Database& db);

/// The same from generations already found: `generations` (in llm_sum's order) point into
/// `trace`. Pure.
[[nodiscard]] core::TokenTimeline token_timeline(const LlmTrace& trace, std::span<const Generation* const> generations);

}  // namespace gpuscope::analyze
