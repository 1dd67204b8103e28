#include "analyze/llm/llm_token_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyze/llm/llm_reports.hpp"
#include "core/stats.hpp"

namespace gpuscope::analyze {
namespace {

// The median of `ns` (rounded to ns); nullopt when empty.
std::optional<std::int64_t> median_ns(const std::vector<std::int64_t>& ns) {
  if (ns.empty()) return std::nullopt;
  std::vector<double> v(ns.begin(), ns.end());
  return static_cast<std::int64_t>(stats::median(v) + 0.5);
}

core::TokenGeneration one_generation(const LlmTrace& t, const Generation& g, std::int64_t number) {
  core::TokenGeneration out;
  out.number = number;
  out.pid = g.pid;
  for (const LlmTrace::Model& m : t.models)
    if (m.pid == g.pid) out.model = m.path;
  out.start_ns = g.start_ns;
  out.ttft_ns = g.ttft_ns();
  out.tokens = g.output_len();
  out.batch = g.batch;
  if (!g.decode_ns.empty()) {
    out.tpot_mean_ns = std::llround(mean_of(g.decode_ns));
    out.tpot_median_ns = median_ns(g.decode_ns);
  }
  // Steps tile the generation: each from the previous token's GPU end (the first: its call)
  // to its own token's.
  std::int64_t from = g.start_ns;
  for (std::size_t i = g.first; i < g.first + g.count; ++i) {
    const ForwardPass& f = t.forwards[i];
    if (f.token_end_ns <= 0) continue;  // no GPU work: no token end to draw to
    ++out.steps_total;
    const std::int64_t until = std::max(f.token_end_ns, from);
    if (out.steps.size() < core::kMaxTokenSteps) {
      core::TokenStep s;
      s.prefill = f.phase == ForwardPhase::kPrefill;
      s.index = static_cast<std::int64_t>(i - g.first) + (g.has_prefill ? 0 : 1);
      s.start_ns = from - g.start_ns;
      s.wall_ns = until - from;
      s.gpu_busy_ns = std::min(f.gpu_busy_ns, s.wall_ns);
      s.cpu_window_ns = f.cpu.window_ns;
      const auto parts = cpu_cause_parts(f.cpu);
      s.cpu_ns.assign(parts.begin(), parts.end());
      s.stands_out = !s.prefill && out.tpot_median_ns &&
                     static_cast<double>(s.wall_ns) > core::kStandOutFactor * static_cast<double>(*out.tpot_median_ns);
      out.steps.push_back(std::move(s));
    }
    from = until;
  }
  return out;
}

}  // namespace

core::TokenTimeline token_timeline(const LlmTrace& trace, std::span<const Generation* const> generations) {
  core::TokenTimeline out;
  for (std::string_view c : kCpuCauseNames) out.causes.emplace_back(c);
  out.generations_total = static_cast<std::int64_t>(generations.size());
  for (std::size_t i = 0; i < generations.size() && i < core::kMaxTokenGenerations; ++i)
    out.generations.push_back(one_generation(trace, *generations[i], static_cast<std::int64_t>(i) + 1));
  if (out.generations.empty()) return out;

  // Generation 1 cold by llm_sum's rule (its mean TPOT against the others'), over every
  // generation, drawn or not.
  std::vector<double> means;
  std::vector<std::int64_t> other_prefills;  // the others' prefill steps (call → first token), as drawn
  for (std::size_t i = 0; i < generations.size(); ++i) {
    const Generation& g = *generations[i];
    means.push_back(mean_of(g.decode_ns));
    if (const auto prefill = g.prefill_ns(); i > 0 && prefill) other_prefills.push_back(*prefill);
  }
  core::TokenGeneration& first = out.generations.front();
  if (double warm = 0; first_generation_cold(means, &warm)) {
    first.cold_tpot_ns = static_cast<std::int64_t>(means.front() + 0.5);
    first.warm_tpot_ns = static_cast<std::int64_t>(warm + 0.5);
  }
  // Generation 1's prefill against the others'.
  if (const auto typical = median_ns(other_prefills); typical && !first.steps.empty() && first.steps.front().prefill)
    first.steps.front().stands_out =
        static_cast<double>(first.steps.front().wall_ns) > core::kStandOutFactor * static_cast<double>(*typical);
  return out;
}

core::TokenTimeline token_timeline(store::Database& db) {
  const LlmTrace t = find_generations(db);
  if (!t.has_modules) return {};
  const GenerateLoops loops = generate_loops(t);
  return token_timeline(t, loops.generations);
}

}  // namespace gpuscope::analyze
