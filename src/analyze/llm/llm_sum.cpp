#include "analyze/llm/llm_reports.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analyze/common/report_text.hpp"
#include "analyze/llm/llm_ceilings.hpp"
#include "analyze/llm/llm_report_parts.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"

namespace gpuscope::analyze {
namespace {

using detail::Ceilings;
using detail::kNsPerMs;

constexpr double kWaitVerdictShare = 0.5;  // the GPU waits over half of each decode step: launch-bound
constexpr double kBandwidthBound = 0.7;    // decode at 70 % of the DRAM ceiling or more: bandwidth-bound
constexpr double kBytesPerMb = 1e6, kBytesPerGb = 1e9, kFlopPerGflop = 1e9, kFlopPerTflop = 1e12;

// The bandwidth and speed-of-light columns from mean bytes per step, the median step (ms),
// the prefill's FLOPs and time (ms).
void add_limits(Row& row, double bytes, double step_ms, double flops, double prefill_ms, const Ceilings& c) {
  const double bw = bytes / (step_ms / 1e3);
  row.push_back(detail::real_or_null(bytes / kBytesPerMb));
  row.push_back(detail::real_or_null(bw / kBytesPerGb));
  row.push_back(c.dram > 0 ? detail::real_or_null(100.0 * bw / c.dram) : Cell{std::monostate{}});
  row.push_back(c.dram > 0 ? detail::real_or_null(bytes / c.dram * 1e3) : Cell{std::monostate{}});
  const double rate = flops / (prefill_ms / 1e3);
  row.push_back(detail::real_or_null(flops / kFlopPerGflop));
  row.push_back(detail::real_or_null(rate / kFlopPerTflop));
  row.push_back(c.tensor > 0 ? detail::real_or_null(100.0 * rate / c.tensor) : Cell{std::monostate{}});
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

Report llm_sum_columns() {
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
      .add_column("Wall", "ms", ColumnType::kReal)
      .add_column("Decode Bytes", "MB", ColumnType::kReal)
      .add_column("Decode BW", "GB/s", ColumnType::kReal)
      .add_column("BW of Ceiling", "%", ColumnType::kReal)
      .add_column("SOL TPOT", "ms", ColumnType::kReal)
      .add_column("Prefill FLOPs", "GFLOP", ColumnType::kReal)
      .add_column("Prefill Rate", "TFLOP/s", ColumnType::kReal)
      .add_column("Prefill of Ceiling", "%", ColumnType::kReal);
  return r;
}

// Each process's ceilings, read when a generation of it first asks.
class CeilingsByPid {
 public:
  explicit CeilingsByPid(store::Database& db) : m_db(db) {}
  const Ceilings& of(const Generation& g) {
    auto it = m_by_pid.find(g.pid);
    if (it == m_by_pid.end()) it = m_by_pid.emplace(g.pid, detail::ceilings_for(m_db, g.pid, g.weight_dtype)).first;
    return it->second;
  }

 private:
  store::Database& m_db;
  std::map<std::int64_t, Ceilings> m_by_pid;
};

// What the "all" row pools over every generation.
struct Pooled {
  std::vector<double> tpot, ttfts;
  std::int64_t wall = 0, decode = 0, busy = 0, tokens = 0, seq_tokens = 0;
  std::vector<std::optional<std::int64_t>> batches, prompts, outputs;
  std::vector<double> gen_tpot_means;
  std::vector<std::int64_t> bytes;
  double flops = 0, prefill_ms = 0;
  std::int64_t prefills_with_flops = 0, flop_ops = 0;

  [[nodiscard]] double mean_flops() const {
    return prefills_with_flops > 0 ? flops / static_cast<double>(prefills_with_flops) : std::nan("");
  }
  [[nodiscard]] double mean_prefill_ms() const {
    return prefills_with_flops > 0 ? prefill_ms / static_cast<double>(prefills_with_flops) : std::nan("");
  }
};

// One row per generation, its limits against its process's ceilings; each pooled into `p`.
void add_generation_rows(Report& r, const GenerateLoops& found, CeilingsByPid& ceilings, Pooled& p) {
  for (std::size_t i = 0; i < found.generations.size(); ++i) {
    const Generation& g = *found.generations[i];
    const std::vector<double> tpot = ms(g.decode_ns);
    const std::int64_t decode = std::accumulate(g.decode_ns.begin(), g.decode_ns.end(), std::int64_t{0});
    const std::int64_t busy = std::accumulate(g.decode_busy_ns.begin(), g.decode_busy_ns.end(), std::int64_t{0});
    const std::int64_t wall = g.wall_ns();
    const auto ttft = g.ttft_ns();
    const double ttft_ms = ttft ? static_cast<double>(*ttft) / kNsPerMs : std::nan("");
    const auto prefill = g.prefill_ns();
    const double prefill_ms = prefill ? static_cast<double>(*prefill) / kNsPerMs : std::nan("");
    r.rows.push_back(row_of(std::to_string(i + 1), g.pid, g.batch, g.prompt_len, g.output_len(), ttft_ms, tpot,
                            g.output_len(), wall, decode, busy, true));
    add_limits(r.rows.back(), mean_of(g.decode_bytes), percentile(tpot, 50), g.prefill_flops.value_or(std::nan("")),
               prefill_ms, ceilings.of(g));
    p.bytes.insert(p.bytes.end(), g.decode_bytes.begin(), g.decode_bytes.end());
    if (g.prefill_flops && prefill) {
      p.flops += *g.prefill_flops;
      p.prefill_ms += prefill_ms;
      ++p.prefills_with_flops;
      p.flop_ops += g.prefill_flop_ops;
    }
    p.tpot.insert(p.tpot.end(), tpot.begin(), tpot.end());
    if (ttft) p.ttfts.push_back(static_cast<double>(*ttft) / kNsPerMs);
    p.wall += wall;
    p.decode += decode;
    p.busy += busy;
    p.seq_tokens += g.output_len();
    p.tokens += g.output_len() * g.batch.value_or(0);
    p.batches.push_back(g.batch);
    p.prompts.push_back(g.prompt_len);
    p.outputs.push_back(g.output_len());
    p.gen_tpot_means.push_back(stats::mean(tpot));
  }
}

// The "all" row: the generations together, against the first generation's GPU's ceilings.
Row pooled_row(const GenerateLoops& found, const Pooled& p, const Ceilings& ceiling) {
  const std::optional<std::int64_t> batch = common(p.batches);
  const std::int64_t pid = found.generations.front()->pid;
  const bool one_pid = std::all_of(found.generations.begin(), found.generations.end(),
                                   [&](const Generation* g) { return g->pid == pid; });
  Row all = row_of("all", pid, batch, common(p.prompts), common(p.outputs), stats::mean(p.ttfts), p.tpot, p.seq_tokens,
                   p.wall, p.decode, p.busy, one_pid);
  add_limits(all, mean_of(p.bytes), percentile(p.tpot, 50), p.mean_flops(), p.mean_prefill_ms(), ceiling);
  // Σ tokens / Σ wall, every sequence counted even when batches differ.
  if (!batch && p.wall > 0 &&
      std::all_of(p.batches.begin(), p.batches.end(), [](const auto& b) { return b.has_value(); }))
    all[10] = static_cast<double>(p.tokens) / (static_cast<double>(p.wall) / 1e9);
  return all;
}

// What the decode verdict judges: the decode steps of the warm generations (all but
// generation 1 when it is cold; the "all" row still pools every one).
struct Judged {
  std::vector<double> tpot;
  std::int64_t decode = 0, busy = 0;
  std::vector<std::int64_t> bytes, kv;
  std::vector<double> kernels;  // launched inside each decode forward
};

Judged judged_decode(const LlmTrace& t, const GenerateLoops& found, bool first_cold) {
  Judged j;
  for (std::size_t k = first_cold ? 1 : 0; k < found.generations.size(); ++k) {
    const Generation& g = *found.generations[k];
    const std::vector<double> tpot = ms(g.decode_ns);
    j.tpot.insert(j.tpot.end(), tpot.begin(), tpot.end());
    j.decode += std::accumulate(g.decode_ns.begin(), g.decode_ns.end(), std::int64_t{0});
    j.busy += std::accumulate(g.decode_busy_ns.begin(), g.decode_busy_ns.end(), std::int64_t{0});
    j.bytes.insert(j.bytes.end(), g.decode_bytes.begin(), g.decode_bytes.end());
    j.kv.insert(j.kv.end(), g.decode_kv_bytes.begin(), g.decode_kv_bytes.end());
    for (std::size_t i = g.first; i < g.first + g.count; ++i)
      if (t.forwards[i].phase == ForwardPhase::kDecode) j.kernels.push_back(static_cast<double>(t.forwards[i].kernels));
  }
  return j;
}

// The decode verdict (llm_reports.hpp's notes): the judged median step, its speed of light, the
// GPU's busy part, and what sets the pace. Nothing without judged decode time.
void add_decode_verdict(Report& r, const Judged& j, const Ceilings& ceiling, bool first_cold,
                        const std::string& warm_range) {
  if (j.tpot.empty() || j.decode <= 0) return;
  const double step = percentile(j.tpot, 50) / 1e3;  // s
  const double busy_share = static_cast<double>(j.busy) / static_cast<double>(j.decode);
  const double bytes = mean_of(j.bytes);
  double sol_share = std::nan("");
  std::string v = first_cold ? warm_range + ": " : "";
  if (bytes > 0 && ceiling.dram > 0) {
    const double sol = bytes / ceiling.dram, kv = mean_of(j.kv);
    sol_share = sol / step;
    v += "decode step " + units::duration(step) + " (median TPOT), speed of light " + units::duration(sol) + " (" +
         units::percent_of(sol_share) + "): " + units::bytes(bytes) + " per step (weights " + units::bytes(bytes - kv) +
         ", KV cache " + units::bytes(kv) + ") at " + units::byte_rate(ceiling.dram) + ", " + ceiling.dram_what +
         "; achieved " + units::byte_rate(bytes / step);
  } else {
    v += "decode: median step " + units::duration(step) + " (TPOT)";
    if (bytes > 0)
      v += ", " + units::bytes(bytes) + " per step: " + units::byte_rate(bytes / step) + " (no DRAM ceiling known)";
  }
  v += "; " + std::to_string(std::llround(percentile(j.kernels, 50))) +
       " kernels launched per forward (median); the GPU was busy " + units::percent_of(busy_share) + " of the step (" +
       units::duration(step * busy_share) + ")";
  if (1.0 - busy_share > kWaitVerdictShare)
    v += "; the GPU waits " + units::percent_of(1.0 - busy_share) +
         " of each step for the CPU (kernel launches, Python, synchronisation): capturing the decode step in a CUDA "
         "graph (torch.compile mode=\"reduce-overhead\") could save up to about " +
         units::duration(step * (1.0 - busy_share)) + " per token (see launch_overhead)";
  else if (sol_share >= kBandwidthBound)
    v += ": decode is GPU-bound at " + units::percent_of(sol_share) +
         " of the DRAM ceiling: memory bandwidth sets its pace; only fewer bytes per token make it faster "
         "(quantized weights, a smaller KV cache, more sequences per step)";
  else if (std::isfinite(sol_share))
    v += ": decode is GPU-bound but reaches " + units::percent_of(sol_share) +
         " of the DRAM ceiling: its kernels, not the bytes, set the pace (`gpuscope kernels` places them against "
         "the measured ceilings)";
  else
    v += ": decode is GPU-bound; its speed is the kernels' (memory bandwidth for weights and KV cache: `gpuscope "
         "kernels` places them against the measured ceilings)";
  r.add_note(busy_share < 1.0 - kWaitVerdictShare ? NoteLevel::kWarning : NoteLevel::kInfo, v);
}

// Where TTFT and Wall start for the generations reported: their generate() call where one was
// recorded (gpuscope's gpuscope.generate range), else the prefill's model call.
std::string ttft_note(const GenerateLoops& found) {
  const auto n = static_cast<std::size_t>(std::count_if(found.generations.begin(), found.generations.end(),
                                                        [](const Generation* g) { return g->request_ns.has_value(); }));
  std::string from;
  if (n == found.generations.size())
    from = "from the generate() call (the user's request: gpuscope's range around it)";
  else if (n == 0)
    from =
        "from the prefill's model call (no generate() call recorded around it: a hand-written loop, or a trace "
        "without gpuscope's generate hook)";
  else
    from = "from the generate() call for " + std::to_string(n) + " of " + std::to_string(found.generations.size()) +
           " generations, from the prefill's model call for the others (no generate() call recorded around it)";
  return "TTFT: " + from +
         " to the first token done on the GPU (its copy to the host, or the end of its sampling); Wall: from the same "
         "start to the last token done; TPOT: one token done to the next (docs/llm.md)";
}

// The prefill note: FLOPs per prefill against the tensor ceiling.
void add_prefill_note(Report& r, const Pooled& p, const Ceilings& ceiling) {
  if (p.prefills_with_flops == 0) return;
  const double rate = p.flops / (p.prefill_ms / 1e3);
  std::string text = "prefill: " + units::si(p.mean_flops(), "FLOP") + " per prefill (2·M·N·K over its " +
                     std::to_string(p.flop_ops / p.prefills_with_flops) +
                     " matrix products, from their recorded shapes) in " + units::duration(p.mean_prefill_ms() / 1e3) +
                     " (its model call to the first token): " + units::flop_rate(rate);
  if (ceiling.tensor > 0)
    text += ", " + units::percent_of(rate / ceiling.tensor) + " of " + units::flop_rate(ceiling.tensor) + ", " +
            ceiling.tensor_what;
  else
    text += "; " + ceiling.tensor_what;
  r.add_note(NoteLevel::kInfo, text);
}

}  // namespace

Report llm_sum(store::Database& db) {
  Report r = llm_sum_columns();
  const LlmTrace t = find_generations(db);
  if (!t.has_modules) {
    r.add_note(NoteLevel::kInfo,
               std::string("no PyTorch module forwards in the capture range: ") + detail::kRecordHint);
    return r;
  }
  const GenerateLoops found = generate_loops(t);
  if (found.generations.empty()) {
    std::string why;
    for (const std::string& w : found.why_not) why += (why.empty() ? "" : "; ") + w;
    r.add_note(NoteLevel::kInfo,
               "no generate loop in the capture range" + (why.empty() ? std::string() : " (" + why + ")") +
                   ": a generate loop is a model's forwards, a prefill then decode steps; " + detail::kRecordHint);
    return r;
  }
  CeilingsByPid ceilings(db);
  Pooled pooled;
  add_generation_rows(r, found, ceilings, pooled);
  // One GPU's ceilings (the first generation's process) for the pooled row.
  const Ceilings& ceiling = ceilings.of(*found.generations.front());
  r.rows.push_back(pooled_row(found, pooled, ceiling));

  for (const LlmTrace::Model& m : t.models) {
    const auto n = std::count_if(found.generations.begin(), found.generations.end(),
                                 [&](const Generation* g) { return g->pid == m.pid; });
    if (n == 0) continue;
    r.add_note(NoteLevel::kInfo, "model " + m.path +
                                     (m.class_name.empty() || m.class_name == m.path ? "" : " (" + m.class_name + ")") +
                                     " in PID " + std::to_string(m.pid) + ": " + std::to_string(m.forwards) +
                                     " forward passes (its top-level module calls), " + std::to_string(n) +
                                     " generation(s); prefill or decode " + detail::source_text(m.source));
  }
  double warm_tpot = 0;
  const bool first_cold = first_generation_cold(pooled.gen_tpot_means, &warm_tpot);
  const std::size_t n_gens = found.generations.size();
  const std::string warm_range = n_gens == 2 ? "warm generation 2" : "warm generations 2–" + std::to_string(n_gens);
  add_decode_verdict(r, judged_decode(t, found, first_cold), ceiling, first_cold, warm_range);
  add_prefill_note(r, pooled, ceiling);
  if (pooled.bytes.empty())
    r.add_note(NoteLevel::kInfo,
               "no decode bytes: the model's range carries no weight_bytes (a trace recorded by an older gpuscope, "
               "or a model called inside compiled code); trace again with --pytorch=ops,modules,shapes");
  else if (!(ceiling.dram > 0))
    r.add_note(NoteLevel::kInfo, "no DRAM ceiling: the trace names no GPU bandwidth for PID " +
                                     std::to_string(found.generations.front()->pid));
  if (first_cold)
    r.add_note(NoteLevel::kInfo, "generation 1 is cold: TPOT " + units::duration(pooled.gen_tpot_means.front() / 1e3) +
                                     " against " + units::duration(warm_tpot / 1e3) +
                                     " for the others (first calls at new lengths: cuDNN plans, compilation, the "
                                     "allocator growing); the \"all\" row includes it, the decode verdict judges the " +
                                     warm_range + " only; stats -r llm_step_sum splits each step's CPU time by cause");
  r.add_note(NoteLevel::kInfo, ttft_note(found));
  for (const std::string& w : found.why_not) r.add_note(NoteLevel::kInfo, "not a generate loop: " + w);
  return r;
}

}  // namespace gpuscope::analyze
