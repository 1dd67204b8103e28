#include "analyze/llm_reports.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analyze/llm_generations.hpp"
#include "analyze/report_text.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

constexpr double kNsPerMs = 1e6;
constexpr double kWaitVerdictShare = 0.5;  // the GPU waits over half of each decode step: launch-bound
constexpr double kColdFactor = 1.5;        // generation 1's TPOT over 1.5 x the others': a cold start

const char* const kRecordHint =
    "record the generate loop with `gpuscope trace --pytorch=ops,modules,shapes -- python3 generate.py` (docs/llm.md)";

std::string source_text(PhaseSource s) {
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

// Keeps the generations of the processes that hold a generate loop; says why the others do not.
struct Found {
  std::vector<const Generation*> gens;
  std::vector<std::string> why_not;
};

Found generate_loops(const LlmTrace& t) {
  Found f;
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
          source_text(m.source));
      continue;
    }
    for (const Generation& g : t.generations)
      if (g.pid == m.pid) f.gens.push_back(&g);
  }
  for (std::int64_t pid : t.training_pids)
    f.why_not.push_back("PID " + std::to_string(pid) + " trains (optimizer steps or backward calls)");
  return f;
}

std::vector<double> ms(std::span<const std::int64_t> ns) {
  std::vector<double> out;
  out.reserve(ns.size());
  for (std::int64_t v : ns) out.push_back(static_cast<double>(v) / kNsPerMs);
  return out;
}

Cell opt_int(const std::optional<std::int64_t>& v) { return v ? Cell{*v} : Cell{std::monostate{}}; }

Row row_of(const std::string& label, std::int64_t pid, const std::optional<std::int64_t>& batch,
           const std::optional<std::int64_t>& prompt, const std::optional<std::int64_t>& output, double ttft_ms,
           const std::vector<double>& tpot_ms, std::int64_t tokens_per_seq, std::int64_t wall_ns,
           std::int64_t decode_ns, std::int64_t decode_busy_ns, bool pid_known) {
  const double wall_s = static_cast<double>(wall_ns) / 1e9;
  const double per_seq = wall_s > 0 ? static_cast<double>(tokens_per_seq) / wall_s : std::nan("");
  return Row{label,
             pid_known ? Cell{pid} : Cell{std::monostate{}},
             opt_int(batch),
             opt_int(prompt),
             opt_int(output),
             detail::real_or_null(ttft_ms),
             detail::real_or_null(stats::mean(tpot_ms)),
             detail::real_or_null(percentile(tpot_ms, 50)),
             detail::real_or_null(percentile(tpot_ms, 90)),
             detail::real_or_null(percentile(tpot_ms, 99)),
             batch ? detail::real_or_null(per_seq * static_cast<double>(*batch)) : Cell{std::monostate{}},
             detail::real_or_null(per_seq),
             detail::percent_cell(decode_busy_ns, decode_ns),
             detail::real_or_null(static_cast<double>(wall_ns) / kNsPerMs)};
}

template <typename T>
std::optional<T> common(const std::vector<std::optional<T>>& values) {
  if (values.empty() || !values.front()) return std::nullopt;
  for (const auto& v : values)
    if (v != values.front()) return std::nullopt;
  return values.front();
}

}  // namespace

Report llm_sum(store::Database& db) {
  Report r;
  r.name = "llm_sum";
  r.title = "LLM Generation Summary";
  r.add_column("Generation", "", ColumnType::kText, ColumnKind::kIdentifier)
      .add_column("PID", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Batch", "", ColumnType::kInteger)
      .add_column("Prompt", "tokens", ColumnType::kInteger)
      .add_column("Output", "tokens", ColumnType::kInteger)
      .add_column("TTFT", "ms", ColumnType::kReal)
      .add_column("TPOT Mean", "ms", ColumnType::kReal)
      .add_column("TPOT p50", "ms", ColumnType::kReal)
      .add_column("TPOT p90", "ms", ColumnType::kReal)
      .add_column("TPOT p99", "ms", ColumnType::kReal)
      .add_column("Output Rate", "tok/s", ColumnType::kReal)
      .add_column("Per Seq Rate", "tok/s", ColumnType::kReal)
      .add_column("Decode GPU Busy", "%", ColumnType::kReal)
      .add_column("Wall", "ms", ColumnType::kReal);
  const LlmTrace t = find_generations(db);
  if (!t.has_modules) {
    r.add_note(NoteLevel::kInfo, std::string("no PyTorch module forwards in the capture range: ") + kRecordHint);
    return r;
  }
  const Found found = generate_loops(t);
  if (found.gens.empty()) {
    std::string why;
    for (const std::string& w : found.why_not) why += (why.empty() ? "" : "; ") + w;
    r.add_note(NoteLevel::kInfo,
               "no generate loop in the capture range" + (why.empty() ? std::string() : " (" + why + ")") +
                   ": a generate loop is a model's forwards, a prefill then decode steps; " + kRecordHint);
    return r;
  }

  std::vector<double> all_tpot, ttfts;
  std::int64_t all_wall = 0, all_decode = 0, all_busy = 0, all_tokens = 0, all_seq_tokens = 0;
  std::vector<std::optional<std::int64_t>> batches, prompts, outputs;
  std::vector<double> gen_tpot_means;
  for (std::size_t i = 0; i < found.gens.size(); ++i) {
    const Generation& g = *found.gens[i];
    const std::vector<double> tpot = ms(g.decode_ns);
    const std::int64_t decode = std::accumulate(g.decode_ns.begin(), g.decode_ns.end(), std::int64_t{0});
    const std::int64_t busy = std::accumulate(g.decode_busy_ns.begin(), g.decode_busy_ns.end(), std::int64_t{0});
    const std::int64_t wall = g.end_ns > g.start_ns ? g.end_ns - g.start_ns : 0;
    const auto ttft = g.ttft_ns();
    r.rows.push_back(row_of(std::to_string(i + 1), g.pid, g.batch, g.prompt_len, g.output_len(),
                            ttft ? static_cast<double>(*ttft) / kNsPerMs : std::nan(""), tpot, g.output_len(), wall,
                            decode, busy, true));
    all_tpot.insert(all_tpot.end(), tpot.begin(), tpot.end());
    if (ttft) ttfts.push_back(static_cast<double>(*ttft) / kNsPerMs);
    all_wall += wall;
    all_decode += decode;
    all_busy += busy;
    all_seq_tokens += g.output_len();
    all_tokens += g.output_len() * g.batch.value_or(0);
    batches.push_back(g.batch);
    prompts.push_back(g.prompt_len);
    outputs.push_back(g.output_len());
    gen_tpot_means.push_back(stats::mean(tpot));
  }
  const std::optional<std::int64_t> batch = common(batches);
  const std::int64_t pid = found.gens.front()->pid;
  const bool one_pid =
      std::all_of(found.gens.begin(), found.gens.end(), [&](const Generation* g) { return g->pid == pid; });
  Row all = row_of("all", pid, batch, common(prompts), common(outputs), stats::mean(ttfts), all_tpot, all_seq_tokens,
                   all_wall, all_decode, all_busy, one_pid);
  // Σ tokens / Σ wall, every sequence counted even when batches differ.
  if (!batch && all_wall > 0 &&
      std::all_of(batches.begin(), batches.end(), [](const auto& b) { return b.has_value(); }))
    all[10] = static_cast<double>(all_tokens) / (static_cast<double>(all_wall) / 1e9);
  r.rows.push_back(std::move(all));

  for (const LlmTrace::Model& m : t.models) {
    const auto n =
        std::count_if(found.gens.begin(), found.gens.end(), [&](const Generation* g) { return g->pid == m.pid; });
    if (n == 0) continue;
    r.add_note(NoteLevel::kInfo, "model " + m.path +
                                     (m.class_name.empty() || m.class_name == m.path ? "" : " (" + m.class_name + ")") +
                                     " in PID " + std::to_string(m.pid) + ": " + std::to_string(m.forwards) +
                                     " forward passes (its top-level module calls), " + std::to_string(n) +
                                     " generation(s); prefill or decode " + source_text(m.source));
  }
  if (!all_tpot.empty() && all_decode > 0) {
    const double step = percentile(all_tpot, 50) / 1e3;  // s
    const double busy_share = static_cast<double>(all_busy) / static_cast<double>(all_decode);
    std::vector<double> kernels;  // launched inside each decode forward
    for (const Generation* g : found.gens)
      for (std::size_t i = g->first; i < g->first + g->count; ++i)
        if (t.forwards[i].phase == ForwardPhase::kDecode) kernels.push_back(static_cast<double>(t.forwards[i].kernels));
    std::string v = "decode: median step " + units::duration(step) + " (TPOT), " +
                    std::to_string(std::llround(percentile(kernels, 50))) +
                    " kernels launched per forward (median); the GPU was busy " + units::percent_of(busy_share) +
                    " of the step (" + units::duration(step * busy_share) + ")";
    if (1.0 - busy_share > kWaitVerdictShare)
      v += "; the GPU waits " + units::percent_of(1.0 - busy_share) +
           " of each step for the CPU (kernel launches, Python, synchronisation): capturing the decode step in a CUDA "
           "graph (torch.compile mode=\"reduce-overhead\") could save up to about " +
           units::duration(step * (1.0 - busy_share)) + " per token (see launch_overhead)";
    else
      v += ": decode is GPU-bound; its speed is the kernels' (memory bandwidth for weights and KV cache: `gpuscope "
           "kernels` places them against the measured ceilings)";
    r.add_note(busy_share < 1.0 - kWaitVerdictShare ? NoteLevel::kWarning : NoteLevel::kInfo, v);
  }
  if (gen_tpot_means.size() >= 2 && std::isfinite(gen_tpot_means.front())) {
    std::vector<double> rest(gen_tpot_means.begin() + 1, gen_tpot_means.end());
    std::erase_if(rest, [](double x) { return !std::isfinite(x); });
    const double typical = stats::median(rest);
    if (std::isfinite(typical) && gen_tpot_means.front() > kColdFactor * typical)
      r.add_note(NoteLevel::kInfo, "generation 1 is cold: TPOT " + units::duration(gen_tpot_means.front() / 1e3) +
                                       " against " + units::duration(typical / 1e3) +
                                       " for the others (first calls at new lengths: cuDNN plans, compilation, the "
                                       "allocator growing); the \"all\" row includes it");
  }
  r.add_note(NoteLevel::kInfo,
             "TTFT: from the prefill's model call to the first token done on the GPU (its copy to the host, or the "
             "end of its sampling; generate()'s preparation before the call is not included); TPOT: one token done "
             "to the next (docs/llm.md)");
  for (const std::string& w : found.why_not) r.add_note(NoteLevel::kInfo, "not a generate loop: " + w);
  return r;
}

std::optional<std::string> llm_top_line(store::Database& db) {
  const LlmTrace t = find_generations(db);
  if (!t.has_modules) return std::nullopt;
  const Found found = generate_loops(t);
  if (found.gens.empty()) return std::nullopt;
  std::vector<double> tpot, ttft;
  for (const Generation* g : found.gens) {
    for (std::int64_t ns : g->decode_ns) tpot.push_back(static_cast<double>(ns) / 1e9);
    if (const auto x = g->ttft_ns()) ttft.push_back(static_cast<double>(*x) / 1e9);
  }
  std::string model;
  for (const LlmTrace::Model& m : t.models)
    if (m.pid == found.gens.front()->pid) model = m.path;
  std::string line = "generate loop: " + std::to_string(found.gens.size()) + " generation(s) of " + model;
  if (!ttft.empty()) line += ", TTFT " + units::duration(stats::mean(ttft)) + " (mean)";
  if (!tpot.empty()) line += ", TPOT " + units::duration(percentile(tpot, 50)) + " (median)";
  return line + " — gpuscope stats -r llm_sum";
}

}  // namespace gpuscope::analyze
