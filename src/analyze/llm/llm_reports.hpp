// llm_sum: the generate loops of a PyTorch trace as a language-model server counts them —
// time to first token, time per output token, tokens/s — from the model's forward passes
// (analyze/llm/llm_generations.hpp finds them; docs/llm.md says what the numbers mean).
//
// One row per generation, in time order, then a row "all":
//   Generation  "1", "2", ... ("all": the generations together)
//   PID
//   Batch       sequences generated at once (the prefill's embedding indices [B, S]; NULL
//               when not recorded: --pytorch=...,shapes)
//   Prompt (tokens)  tokens per sequence the prefill processed (padding included)
//   Output (tokens)  tokens per sequence generated = forwards of the generation (the prefill
//               gives the first)
//   TTFT (ms)   the request start (the generate() call holding the prefill, else the prefill's
//               model call: llm_generations.hpp) → the first token done on the GPU (its copy to
//               the host ends, or its last work); NULL for a generation whose prefill is outside
//               the capture
//   TPOT Mean, p50, p90, p99 (ms)  over the decode-step intervals (one token done to the
//               next); percentiles by linear interpolation (numpy's default)
//   Output Rate (tok/s)  Batch x Output / Wall: every sequence's tokens (NULL without Batch)
//   Per Seq Rate (tok/s)  Output / Wall
//   Decode GPU Busy (%)  GPU busy inside the decode steps over their time (the rest the GPU
//               waited: for the CPU's launches, Python, synchronisation)
//   Wall (ms)   the request start (as TTFT) → GPU end of its last token
//   Decode Bytes (MB)  what a decode step must read, mean over the decode steps: weights +
//               KV cache (+ the new token's keys and values), from the model's range
//               (llm_generations.hpp, step_read_bytes); NULL when not recorded
//   Decode BW (GB/s)   Decode Bytes / TPOT p50
//   BW of Ceiling (%)  Decode BW / the DRAM ceiling: `gpuscope peak`'s measured dram_read (else
//               dram_copy) cached for the process's GPU, else the devices row's theoretical
//               bandwidth (the verdict says which)
//   SOL TPOT (ms)      speed of light: Decode Bytes / the DRAM ceiling
//   Prefill FLOPs (GFLOP)  Σ 2·M·N·K of the prefill's outermost matrix products (matmul_flops)
//   Prefill Rate (TFLOP/s) Prefill FLOPs / the prefill's time (its model call → the first token)
//   Prefill of Ceiling (%) Prefill Rate / the tensor ceiling for the weights' dtype (float16:
//               tensor_fp16, bfloat16: tensor_bf16, float32: fp32_fma, float8: tensor_fp8,
//               else tensor_fp16 assumed and said), measured, else theoretical; NULL if unknown
// The "all" row: TTFT = mean of the generations' TTFTs; TPOT over every decode interval;
// rates = Σ tokens / Σ Wall; Batch, Prompt, Output given when every generation agrees;
// Decode Bytes the mean over every decode step, against the TPOT p50 of all; Prefill FLOPs the
// mean per prefill, Prefill Rate Σ FLOPs / Σ prefill time; the first generation's GPU's ceilings.
// Notes: the model and how forwards were classified; a verdict on the decode step of the warm
// generations (every one; all but generation 1 when it is cold by first_generation_cold, and
// then the verdict starts "warm generations 2–N: "): their median step, its speed of light and
// the bytes behind it, the GPU busy part, what a CUDA graph would save when the GPU mostly
// waits, or whether the bytes or the kernels set the pace; the prefill's FLOPs against the
// tensor ceiling.
// Without module records, or with no generate loop found: no rows, one note saying why and
// how to record one.
//
// llm_step_sum: where each step's time goes on the CPU, to explain a cold generation against
// warm ones (issue 24, item 2). One row per generation and phase ("prefill", "decode"), in time
// order; every time a mean per step (forward) of the phase, ms:
//   Generation, PID, Phase, Steps (forwards of that phase)
//   Step (ms)         the CPU window: a forward's call to the next one's (llm_generations.hpp)
//   GPU Work (ms)     union of the GPU work launched in the window (the rest the GPU waited)
//   Module Load, Alloc, Sync, Launch, Other API (ms)  time inside CUDA API calls by ApiCause
//   Framework (ms)    inside PyTorch operators, outside API calls (dispatch; cuDNN plan building)
//   Python/Other (ms) the rest of the window
// The causes add up to Step. Notes: a verdict per phase when generation 1 is cold (its mean
// step over 1.5 x the median of the others'): how much longer, and which causes hold the
// extra time, and the PyTorch operator whose own CPU time (less nested operators) grew most;
// where the trace records only the launching API calls (--cuda-api=gpu, the
// default), that module loading is not recorded and lands in Framework or Python/Other.
// No rows (one note) without a generate loop, as llm_sum.
// Files: llm_sum.cpp, llm_step_sum.cpp, generate_loops and the rest in llm_reports.cpp
// (analyze/llm/README.md has the map).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/llm/llm_generations.hpp"
#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

/// The llm_sum report (see the file comment).
[[nodiscard]] Report llm_sum(store::Database& db);

/// The llm_step_sum report (see the file comment).
[[nodiscard]] Report llm_step_sum(store::Database& db);

/// The generations llm_sum and llm_step_sum report: those of every process whose model's
/// forwards form a generate loop (a prefill followed by decode steps; with shapes, decode
/// steps alone: the capture began mid-generation), in LlmTrace order; `why_not` one sentence
/// per process left out (an encoder's prefills, a training process).
struct GenerateLoops {
  std::vector<const Generation*> generations;  // into the LlmTrace passed in
  std::vector<std::string> why_not;
};
[[nodiscard]] GenerateLoops generate_loops(const LlmTrace& trace);

/// llm_step_sum's CPU causes, in its column order: the ApiCause parts, then framework and
/// Python/other.
inline constexpr std::size_t kCpuCauses = kApiCauses + 2;
inline constexpr std::array<std::string_view, kCpuCauses> kCpuCauseNames = {
    "Module Load", "Alloc", "Sync", "Launch", "Other API", "Framework", "Python/Other"};
/// `cpu` as kCpuCauseNames' parts, ns (they add up to cpu.window_ns). Pure.
[[nodiscard]] std::array<std::int64_t, kCpuCauses> cpu_cause_parts(const CpuCauses& cpu);

/// llm_sum's cold rule: generation 1 is cold when its mean TPOT (ms or any unit, first of
/// `tpot_means`, one per generation in order) is over 1.5 x the median of the others' (the
/// finite ones); needs two generations or more. The median of the others in `warm` (when
/// not null and it is known). Pure.
[[nodiscard]] bool first_generation_cold(std::span<const double> tpot_means, double* warm = nullptr);

/// One line for `top` when the trace holds a generate loop ("generate loop: N generations of
/// model M, TTFT …, TPOT … (stats -r llm_sum)"); nullopt otherwise. Cheap on a trace without
/// module records.
[[nodiscard]] std::optional<std::string> llm_top_line(store::Database& db);

}  // namespace gpuscope::analyze
