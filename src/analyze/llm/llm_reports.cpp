#include "analyze/llm/llm_reports.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "analyze/llm/llm_report_parts.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"

namespace gpuscope::analyze {

std::string detail::source_text(PhaseSource s) {
  switch (s) {
    case PhaseSource::kShapes:
      return "from the recorded input shapes (the indices [batch, tokens] of each forward's first aten::embedding: "
             "prefill when tokens > 1)";
    case PhaseSource::kTokens:
      return "from the rows of each forward's first matrix product (tokens processed: a prefill processes more than "
             "the step after it)";
    case PhaseSource::kKernels:
      return "from the kernels each forward launches (decode steps launch the most common set); batch and prompt "
             "length need the input shapes: --pytorch=ops,modules,shapes";
  }
  return {};
}

GenerateLoops generate_loops(const LlmTrace& t) {
  GenerateLoops f;
  for (const LlmTrace::Model& m : t.models) {
    // A prefill followed by decode steps; or, with shapes, only decode steps (the capture began
    // mid-generation). Prefills alone are an encoder's forwards, not a generate loop.
    bool prefill = false, decoded = false;
    for (const Generation& g : t.generations) {
      if (g.pid != m.pid) continue;
      prefill |= g.has_prefill;
      decoded |= g.has_prefill && g.count >= 2;
    }
    const bool loop = decoded || (!prefill && m.source == PhaseSource::kShapes && m.forwards >= 2);
    if (!loop) {
      f.why_not.push_back(
          "PID " + std::to_string(m.pid) + ": the " + std::to_string(m.forwards) + " calls of " + m.path +
          (prefill ? " are prefills with no decode step after them (an encoder?) " : " show no prefill ") +
          detail::source_text(m.source));
      continue;
    }
    for (const Generation& g : t.generations)
      if (g.pid == m.pid) f.generations.push_back(&g);
  }
  for (std::int64_t pid : t.training_pids)
    f.why_not.push_back("PID " + std::to_string(pid) + " trains (optimizer steps or backward calls)");
  return f;
}

std::array<std::int64_t, kCpuCauses> cpu_cause_parts(const CpuCauses& cpu) {
  std::array<std::int64_t, kCpuCauses> out{};
  for (std::size_t k = 0; k < kApiCauses; ++k) out[k] = cpu.api_ns[k];
  out[kApiCauses] = cpu.framework_ns;
  out[kApiCauses + 1] = cpu.other_ns;
  return out;
}

bool first_generation_cold(std::span<const double> tpot_means, double* warm) {
  if (tpot_means.size() < 2 || !std::isfinite(tpot_means.front())) return false;
  std::vector<double> rest(tpot_means.begin() + 1, tpot_means.end());
  std::erase_if(rest, [](double x) { return !std::isfinite(x); });
  const double typical = stats::median(rest);
  if (!std::isfinite(typical)) return false;
  if (warm != nullptr) *warm = typical;
  return tpot_means.front() > detail::kColdFactor * typical;
}

std::optional<std::string> llm_top_line(store::Database& db) {
  const LlmTrace t = find_generations(db);
  if (!t.has_modules) return std::nullopt;
  const GenerateLoops found = generate_loops(t);
  if (found.generations.empty()) return std::nullopt;
  std::vector<double> tpot, ttft;
  for (const Generation* g : found.generations) {
    for (std::int64_t ns : g->decode_ns) tpot.push_back(static_cast<double>(ns) / 1e9);
    if (const auto x = g->ttft_ns()) ttft.push_back(static_cast<double>(*x) / 1e9);
  }
  std::string model;
  for (const LlmTrace::Model& m : t.models)
    if (m.pid == found.generations.front()->pid) model = m.path;
  std::string line = "generate loop: " + std::to_string(found.generations.size()) + " generation(s) of " + model;
  if (!ttft.empty()) line += ", TTFT " + units::duration(stats::mean(ttft)) + " (mean)";
  if (!tpot.empty()) line += ", TPOT " + units::duration(percentile(tpot, 50)) + " (median)";
  return line + " — gpuscope stats -r llm_sum";
}

}  // namespace gpuscope::analyze
