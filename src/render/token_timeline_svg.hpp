// token_timeline_svg: the "Tokens" section of `gpuscope report` (docs/report.md, "Tokens"):
// per generation of core::TokenTimeline (core/token_timeline.hpp), a line of plain words
// (TTFT, TPOT, tokens, the steps that stand out) beside a horizontal timeline drawn as
// inline SVG, one segment per forward step.
//
// The chart: x is time in ms since the generation's start (the prefill's model call), ticks at
// 1, 2 or 5 x 10^k ms. Each step is a segment as long as the step (the prefill: its TTFT;
// decode step k: its TPOT interval) in a light colour, with its GPU busy part drawn inside it
// from its left edge in a dark colour. The prefill is violet and hatched and labelled
// "prefill" above, decode steps blue (the page's kernel colour), so the two read apart in
// grayscale too; a step that stands out has a red outline and a red mark above it. Hovering a
// step shows its <title>: kind and index, wall time (ms), GPU busy (ms and % of the step), its
// CPU window (call to next call, ms) and its parts by cause (ms, llm_step_sum's columns; zero
// parts left out), and why it stands out.
//
// Element names a test or a script can rely on: the section is <section id="tokens">; each
// generation's chart a <svg class="token-timeline" data-generation="N">; each step a
// <g class="token-step" data-kind="prefill"|"decode" data-step="K"> holding its <title>, a
// <rect class="step-wall"> and a <rect class="step-busy">, with class "stands-out" added to the
// <g> of a step that stands out. Every number shown carries its unit. Text (the model's name) is
// escaped. Writes only to the stream it is given; an empty TokenTimeline writes nothing.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/token_timeline.hpp"

namespace gpuscope::render {

/// The nav link ("\n    <a href=\"#tokens\">Tokens</a>"), nothing when there is no generation.
void write_tokens_nav(const core::TokenTimeline& tokens, std::ostream& out);

/// The whole section, starting with a newline, nothing when there is no generation.
void write_tokens_section(const core::TokenTimeline& tokens, std::ostream& out);

/// One generation's timeline as an inline <svg> element (see the file comment); `causes`
/// names the parts of each step's cpu_ns.
void write_token_timeline_svg(const core::TokenGeneration& generation, const std::vector<std::string>& causes,
                              std::ostream& out);

/// ns as milliseconds with three decimals (the µs, rounded half up) and the unit: 308000 →
/// "0.308 ms", 306500 → "0.307 ms".
[[nodiscard]] std::string ms_text(std::int64_t ns);

}  // namespace gpuscope::render
