// TokenTimeline: the generate loops of a trace, forward step by forward step, as plain data
// for the "Tokens" section of `gpuscope report` (issue 24: "a per-token timeline").
//
// Made by analyze::token_timeline (analyze/llm/llm_token_timeline.hpp) from the generations
// llm_sum reports (analyze/llm/llm_generations.hpp finds them); drawn by
// render::write_tokens_section (render/token_timeline_svg.hpp), which computes nothing but
// layout and words.
//
// Shapes and units (all times integer ns):
//   - one TokenGeneration per generation llm_sum reports, in its order (at most
//     kMaxTokenGenerations; generations_total says how many there were);
//   - its steps tile the generation from its start (the prefill's model call) to its last
//     token's GPU end: the prefill's step is [call, first token done] (the TTFT, less
//     generate()'s own preparation where a generate() call was recorded), decode step k's
//     [token k-1 done, token k done] (its TPOT interval); start_ns is relative to the
//     generation's start, wall_ns the step's length;
//   - gpu_busy_ns: the union of the GPU work the step's forward launched, clipped to the step;
//   - cpu_ns: the forward's CPU window (its call to the next forward's call, as llm_step_sum)
//     split by cause, in the order of TokenTimeline::causes; Σ cpu_ns = cpu_window_ns;
//   - stands_out: a decode step over kStandOutFactor x the generation's median decode step,
//     or generation 1's prefill step over that factor x the median prefill step of the others.
//
// Plain data (core/: no I/O).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::core {

/// The most generations the Tokens section draws (the first ones; the rest are counted).
inline constexpr std::size_t kMaxTokenGenerations = 8;
/// The most steps drawn per generation (the first ones; the rest are counted).
inline constexpr std::size_t kMaxTokenSteps = 1024;
/// A step this many times the median of its kind stands out (llm_sum's cold factor).
inline constexpr double kStandOutFactor = 1.5;

struct TokenStep {
  std::int64_t index = 0;  // 0: the prefill; k: decode step k (1-based, as llm_sum counts them)
  bool prefill = false;
  std::int64_t start_ns = 0;  // from the generation's start
  std::int64_t wall_ns = 0;
  std::int64_t gpu_busy_ns = 0;
  std::int64_t cpu_window_ns = 0;
  std::vector<std::int64_t> cpu_ns;  // by TokenTimeline::causes
  bool stands_out = false;
};

struct TokenGeneration {
  std::int64_t number = 0;  // 1-based, as llm_sum's Generation column
  std::int64_t pid = 0;
  std::string model;                           // the model's module path ("GPT")
  std::int64_t start_ns = 0;                   // absolute, trace clock
  std::optional<std::int64_t> ttft_ns;         // llm_sum's TTFT: from the request (generate() call)
  std::optional<std::int64_t> tpot_mean_ns;    // mean decode interval
  std::optional<std::int64_t> tpot_median_ns;  // median decode interval (the stand-out yardstick)
  std::int64_t tokens = 0;                     // output tokens per sequence (forwards)
  std::optional<std::int64_t> batch;
  std::vector<TokenStep> steps;
  std::int64_t steps_total = 0;  // before the kMaxTokenSteps cap
  /// Generation 1 only, when llm_sum calls it cold: its TPOT mean and the others' median.
  std::optional<std::int64_t> cold_tpot_ns, warm_tpot_ns;
};

struct TokenTimeline {
  std::vector<std::string> causes;  // names of the CPU causes ("module loading", ...)
  std::vector<TokenGeneration> generations;
  std::int64_t generations_total = 0;
};

}  // namespace gpuscope::core
