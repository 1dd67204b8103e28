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

#include "analyze/llm/llm_generations.hpp"
#include "analyze/common/report_text.hpp"
#include "core/bench_derive.hpp"
#include "core/machine_profile.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "store/database.hpp"
#include "store/machine_profile_json.hpp"

namespace gpuscope::analyze {
namespace {

constexpr double kNsPerMs = 1e6;
constexpr double kWaitVerdictShare = 0.5;  // the GPU waits over half of each decode step: launch-bound
constexpr double kColdFactor = 1.5;        // generation 1's TPOT over 1.5 x the others': a cold start
constexpr double kBandwidthBound = 0.7;    // decode at 70 % of the DRAM ceiling or more: bandwidth-bound
constexpr double kBytesPerMb = 1e6, kBytesPerGb = 1e9, kFlopPerGflop = 1e9, kFlopPerTflop = 1e12;

// The ceilings the decode bytes and prefill FLOPs are held against, for one process's GPU.
struct Ceilings {
  double dram = std::nan("");    // B/s
  std::string dram_what;         // "the measured DRAM read bandwidth (gpuscope peak: dram_read)", ...
  double tensor = std::nan("");  // FLOP/s
  std::string tensor_what;       // which ceiling, measured or theoretical, and why this one
};

// The catalog ceiling for matrix products in `dtype` (the model's weights'), and why.
std::pair<std::string, std::string> tensor_ceiling_for(const std::string& dtype) {
  if (dtype == "float16") return {"tensor_fp16", "float16 weights"};
  if (dtype == "bfloat16") return {"tensor_bf16", "bfloat16 weights"};
  if (dtype == "float32")
    return {"fp32_fma",
            "float32 weights: PyTorch runs float32 matrix products on the CUDA cores unless TF32 is allowed "
            "(torch.backends.cuda.matmul.allow_tf32, off by default; with it the tensor_tf32 ceiling applies)"};
  if (dtype.rfind("float8", 0) == 0) return {"tensor_fp8", dtype + " weights"};
  if (dtype.empty())
    return {"tensor_fp16", "assumed: the weights' dtype is not in the trace (recorded by gpuscope's modules hook)"};
  return {"tensor_fp16", "assumed for " + dtype +
                             " weights (gpuscope has no ceiling for that dtype; weight-only "
                             "quantized models multiply in 16-bit)"};
}

// The GPU the process launched most of its kernels on (its devices row), its cached `gpuscope
// peak` profile, else its theoretical ceilings.
Ceilings ceilings_for(store::Database& db, std::int64_t pid, const std::string& dtype) {
  Ceilings c;
  if (!db.has_table("devices")) return c;
  store::Statement st = db.prepare(
      "SELECT d.uuid, d.name, d.memory_bandwidth_bytes_per_s, d.cc_major, d.cc_minor, d.sm_count, d.l2_cache_bytes, "
      "d.core_clock_khz, d.memory_clock_khz, d.memory_bus_width_bits FROM devices d WHERE d.pid = ?1 ORDER BY "
      "(SELECT COUNT(*) FROM kernels k WHERE k.pid = d.pid AND k.device_id = d.device_id) DESC, d.device_id LIMIT 1");
  st.bind(1, pid);
  if (!st.step()) return c;
  core::DeviceFacts f;
  f.uuid = st.column_text(0);
  f.name = st.column_text(1);
  const double cupti_bw = static_cast<double>(st.column_int(2));
  f.cc_major = static_cast<int>(st.column_int(3));
  f.cc_minor = static_cast<int>(st.column_int(4));
  f.sm_count = static_cast<int>(st.column_int(5));
  f.l2_bytes = st.column_int(6);
  f.max_sm_clock_mhz = static_cast<double>(st.column_int(7)) / 1000.0;
  f.max_mem_clock_mhz = static_cast<double>(st.column_int(8)) / 1000.0;
  f.memory_bus_width_bits = static_cast<int>(st.column_int(9));
  const auto [tensor_name, tensor_why] = tensor_ceiling_for(dtype);
  std::optional<core::MachineProfile> profile;
  if (!f.uuid.empty()) {
    try {
      profile = store::load_cached_profile(f.uuid);
    } catch (const std::exception&) {  // a broken cached file, no cache folder: theoretical instead
    }
  }
  if (profile) {
    for (const char* name : {"dram_read", "dram_copy"}) {
      const core::Ceiling* d = profile->find(name);
      if (d != nullptr && d->measured > 0) {
        c.dram = d->measured;
        c.dram_what = std::string("the measured DRAM ") + (std::string_view(name) == "dram_read" ? "read" : "copy") +
                      " bandwidth of " + f.name + " (gpuscope peak's " + name + ")";
        break;
      }
    }
    if (const core::Ceiling* t = profile->find(tensor_name); t != nullptr && t->measured > 0) {
      c.tensor = t->measured;
      c.tensor_what = "the measured " + tensor_name + " ceiling of " + f.name + " (gpuscope peak; " + tensor_why + ")";
    }
  }
  const std::string no_profile = "; no `gpuscope peak` profile of this GPU is cached: gpuscope peak measures it";
  if (!(c.dram > 0) && cupti_bw > 0) {
    c.dram = cupti_bw;
    c.dram_what = "the theoretical DRAM bandwidth of " + f.name + " (CUPTI's" + (profile ? "" : no_profile) + ")";
  }
  if (!(c.tensor > 0)) {
    const double t = core::theoretical_ceiling(f, tensor_name, f.max_sm_clock_mhz);
    if (t > 0) {
      c.tensor = t;
      c.tensor_what = "the theoretical " + tensor_name + " ceiling of " + f.name + " (" + tensor_why +
                      (profile ? "" : no_profile) + ")";
    } else {
      c.tensor_what = "no " + tensor_name + " ceiling is known for " + f.name + " (" + tensor_why + no_profile + ")";
    }
  }
  return c;
}

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
          source_text(m.source));
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
  return tpot_means.front() > kColdFactor * typical;
}

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
      .add_column("Wall", "ms", ColumnType::kReal)
      .add_column("Decode Bytes", "MB", ColumnType::kReal)
      .add_column("Decode BW", "GB/s", ColumnType::kReal)
      .add_column("BW of Ceiling", "%", ColumnType::kReal)
      .add_column("SOL TPOT", "ms", ColumnType::kReal)
      .add_column("Prefill FLOPs", "GFLOP", ColumnType::kReal)
      .add_column("Prefill Rate", "TFLOP/s", ColumnType::kReal)
      .add_column("Prefill of Ceiling", "%", ColumnType::kReal);
  const LlmTrace t = find_generations(db);
  if (!t.has_modules) {
    r.add_note(NoteLevel::kInfo, std::string("no PyTorch module forwards in the capture range: ") + kRecordHint);
    return r;
  }
  const GenerateLoops found = generate_loops(t);
  if (found.generations.empty()) {
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
  std::vector<std::int64_t> all_bytes;
  double all_flops = 0, all_prefill_ms = 0;
  std::int64_t prefills_with_flops = 0, flop_ops = 0;
  std::map<std::int64_t, Ceilings> ceilings;  // per PID
  const auto ceilings_of = [&](const Generation& g) -> const Ceilings& {
    auto it = ceilings.find(g.pid);
    if (it == ceilings.end()) it = ceilings.emplace(g.pid, ceilings_for(db, g.pid, g.weight_dtype)).first;
    return it->second;
  };
  for (std::size_t i = 0; i < found.generations.size(); ++i) {
    const Generation& g = *found.generations[i];
    const std::vector<double> tpot = ms(g.decode_ns);
    const std::int64_t decode = std::accumulate(g.decode_ns.begin(), g.decode_ns.end(), std::int64_t{0});
    const std::int64_t busy = std::accumulate(g.decode_busy_ns.begin(), g.decode_busy_ns.end(), std::int64_t{0});
    const std::int64_t wall = g.end_ns > g.start_ns ? g.end_ns - g.start_ns : 0;
    const auto ttft = g.ttft_ns();
    const double ttft_ms = ttft ? static_cast<double>(*ttft) / kNsPerMs : std::nan("");
    r.rows.push_back(row_of(std::to_string(i + 1), g.pid, g.batch, g.prompt_len, g.output_len(), ttft_ms, tpot,
                            g.output_len(), wall, decode, busy, true));
    add_limits(r.rows.back(), mean_of(g.decode_bytes), percentile(tpot, 50), g.prefill_flops.value_or(std::nan("")),
               ttft_ms, ceilings_of(g));
    all_bytes.insert(all_bytes.end(), g.decode_bytes.begin(), g.decode_bytes.end());
    if (g.prefill_flops && ttft) {
      all_flops += *g.prefill_flops;
      all_prefill_ms += ttft_ms;
      ++prefills_with_flops;
      flop_ops += g.prefill_flop_ops;
    }
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
  const std::int64_t pid = found.generations.front()->pid;
  const bool one_pid = std::all_of(found.generations.begin(), found.generations.end(),
                                   [&](const Generation* g) { return g->pid == pid; });
  Row all = row_of("all", pid, batch, common(prompts), common(outputs), stats::mean(ttfts), all_tpot, all_seq_tokens,
                   all_wall, all_decode, all_busy, one_pid);
  // One GPU's ceilings (the first generation's process) for the pooled row.
  const Ceilings& ceiling = ceilings_of(*found.generations.front());
  const double mean_flops =
      prefills_with_flops > 0 ? all_flops / static_cast<double>(prefills_with_flops) : std::nan("");
  const double mean_prefill_ms =
      prefills_with_flops > 0 ? all_prefill_ms / static_cast<double>(prefills_with_flops) : std::nan("");
  add_limits(all, mean_of(all_bytes), percentile(all_tpot, 50), mean_flops, mean_prefill_ms, ceiling);
  // Σ tokens / Σ wall, every sequence counted even when batches differ.
  if (!batch && all_wall > 0 &&
      std::all_of(batches.begin(), batches.end(), [](const auto& b) { return b.has_value(); }))
    all[10] = static_cast<double>(all_tokens) / (static_cast<double>(all_wall) / 1e9);
  r.rows.push_back(std::move(all));

  for (const LlmTrace::Model& m : t.models) {
    const auto n = std::count_if(found.generations.begin(), found.generations.end(),
                                 [&](const Generation* g) { return g->pid == m.pid; });
    if (n == 0) continue;
    r.add_note(NoteLevel::kInfo, "model " + m.path +
                                     (m.class_name.empty() || m.class_name == m.path ? "" : " (" + m.class_name + ")") +
                                     " in PID " + std::to_string(m.pid) + ": " + std::to_string(m.forwards) +
                                     " forward passes (its top-level module calls), " + std::to_string(n) +
                                     " generation(s); prefill or decode " + source_text(m.source));
  }
  // The decode verdict judges the warm generations: all but generation 1 when it is cold (the
  // "all" row still pools every one).
  double warm_tpot = 0;
  const bool first_cold = first_generation_cold(gen_tpot_means, &warm_tpot);
  std::vector<double> judged_tpot;
  std::int64_t judged_decode = 0, judged_busy = 0;
  std::vector<std::int64_t> judged_bytes, judged_kv;
  std::vector<double> kernels;  // launched inside each decode forward
  for (std::size_t k = first_cold ? 1 : 0; k < found.generations.size(); ++k) {
    const Generation& g = *found.generations[k];
    const std::vector<double> tpot = ms(g.decode_ns);
    judged_tpot.insert(judged_tpot.end(), tpot.begin(), tpot.end());
    judged_decode += std::accumulate(g.decode_ns.begin(), g.decode_ns.end(), std::int64_t{0});
    judged_busy += std::accumulate(g.decode_busy_ns.begin(), g.decode_busy_ns.end(), std::int64_t{0});
    judged_bytes.insert(judged_bytes.end(), g.decode_bytes.begin(), g.decode_bytes.end());
    judged_kv.insert(judged_kv.end(), g.decode_kv_bytes.begin(), g.decode_kv_bytes.end());
    for (std::size_t i = g.first; i < g.first + g.count; ++i)
      if (t.forwards[i].phase == ForwardPhase::kDecode) kernels.push_back(static_cast<double>(t.forwards[i].kernels));
  }
  const std::size_t n_gens = found.generations.size();
  const std::string warm_range = n_gens == 2 ? "warm generation 2" : "warm generations 2–" + std::to_string(n_gens);
  if (!judged_tpot.empty() && judged_decode > 0) {
    const double step = percentile(judged_tpot, 50) / 1e3;  // s
    const double busy_share = static_cast<double>(judged_busy) / static_cast<double>(judged_decode);
    const double bytes = mean_of(judged_bytes);
    double sol_share = std::nan("");
    std::string v = first_cold ? warm_range + ": " : "";
    if (bytes > 0 && ceiling.dram > 0) {
      const double sol = bytes / ceiling.dram, kv = mean_of(judged_kv);
      sol_share = sol / step;
      v += "decode step " + units::duration(step) + " (median TPOT), speed of light " + units::duration(sol) + " (" +
           units::percent_of(sol_share) + "): " + units::bytes(bytes) + " per step (weights " +
           units::bytes(bytes - kv) + ", KV cache " + units::bytes(kv) + ") at " + units::byte_rate(ceiling.dram) +
           ", " + ceiling.dram_what + "; achieved " + units::byte_rate(bytes / step);
    } else {
      v += "decode: median step " + units::duration(step) + " (TPOT)";
      if (bytes > 0)
        v += ", " + units::bytes(bytes) + " per step: " + units::byte_rate(bytes / step) + " (no DRAM ceiling known)";
    }
    v += "; " + std::to_string(std::llround(percentile(kernels, 50))) +
         " kernels launched per forward (median); the GPU was busy " + units::percent_of(busy_share) +
         " of the step (" + units::duration(step * busy_share) + ")";
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
  if (prefills_with_flops > 0) {
    const double rate = all_flops / (all_prefill_ms / 1e3);
    std::string p = "prefill: " + units::si(mean_flops, "FLOP") + " per prefill (2·M·N·K over its " +
                    std::to_string(flop_ops / prefills_with_flops) +
                    " matrix products, from their recorded shapes) in " + units::duration(mean_prefill_ms / 1e3) +
                    " (TTFT): " + units::flop_rate(rate);
    if (ceiling.tensor > 0)
      p += ", " + units::percent_of(rate / ceiling.tensor) + " of " + units::flop_rate(ceiling.tensor) + ", " +
           ceiling.tensor_what;
    else
      p += "; " + ceiling.tensor_what;
    r.add_note(NoteLevel::kInfo, p);
  }
  if (all_bytes.empty())
    r.add_note(NoteLevel::kInfo,
               "no decode bytes: the model's range carries no weight_bytes (a trace recorded by an older gpuscope, "
               "or a model called inside compiled code); trace again with --pytorch=ops,modules,shapes");
  else if (!(ceiling.dram > 0))
    r.add_note(NoteLevel::kInfo, "no DRAM ceiling: the trace names no GPU bandwidth for PID " + std::to_string(pid));
  if (first_cold)
    r.add_note(NoteLevel::kInfo, "generation 1 is cold: TPOT " + units::duration(gen_tpot_means.front() / 1e3) +
                                     " against " + units::duration(warm_tpot / 1e3) +
                                     " for the others (first calls at new lengths: cuDNN plans, compilation, the "
                                     "allocator growing); the \"all\" row includes it, the decode verdict judges the " +
                                     warm_range + " only; stats -r llm_step_sum splits each step's CPU time by cause");
  r.add_note(NoteLevel::kInfo,
             "TTFT: from the prefill's model call to the first token done on the GPU (its copy to the host, or the "
             "end of its sampling; generate()'s preparation before the call is not included); TPOT: one token done "
             "to the next (docs/llm.md)");
  for (const std::string& w : found.why_not) r.add_note(NoteLevel::kInfo, "not a generate loop: " + w);
  return r;
}

namespace {

// The cause columns of llm_step_sum, in order: the API causes (ApiCause order), framework, other.
constexpr const char* kCauseWords[] = {
    "module loading (cuModuleLoad*, cuLibraryLoad*, nvrtc: loading or compiling GPU code)",
    "memory allocation (cudaMalloc*, cudaFree*, cuMem*)",
    "synchronisation (stream/device/event synchronize, copies to the host)",
    "kernel launches",
    "other CUDA API calls",
    "PyTorch operators outside CUDA calls (dispatch; cuDNN plan building is host code here)",
    "Python and other host code outside operators"};

// Mean per step of one phase of one generation, ns.
struct PhaseMeans {
  std::size_t steps = 0;
  double step = 0, gpu = 0;
  double cause[kCpuCauses] = {};
};

PhaseMeans phase_means(const LlmTrace& t, const Generation& g, ForwardPhase phase) {
  PhaseMeans m;
  for (std::size_t i = g.first; i < g.first + g.count; ++i) {
    const ForwardPass& f = t.forwards[i];
    if (f.phase != phase || f.cpu.window_ns <= 0) continue;
    ++m.steps;
    m.step += static_cast<double>(f.cpu.window_ns);
    m.gpu += static_cast<double>(f.gpu_work_ns);
    const auto parts = cpu_cause_parts(f.cpu);
    for (std::size_t k = 0; k < kCpuCauses; ++k) m.cause[k] += static_cast<double>(parts[k]);
  }
  if (m.steps == 0) return m;
  const double n = static_cast<double>(m.steps);
  m.step /= n, m.gpu /= n;
  for (double& c : m.cause) c /= n;
  return m;
}

// Own CPU time of each PyTorch operator name (its range less the operators nested in it; CUDA
// calls inside it included) in the forwards of `g` in `phase`, mean per forward, ns. An operator
// belongs to the forward whose CPU window holds its start.
std::map<std::string, double> op_self_means(store::Database& db, const LlmTrace& t, const Generation& g,
                                            ForwardPhase phase) {
  std::map<std::string, double> out;
  std::size_t n = 0;
  for (std::size_t i = g.first; i < g.first + g.count; ++i) {
    const ForwardPass& f = t.forwards[i];
    if (f.phase != phase || f.cpu.window_ns <= 0) continue;
    ++n;
    store::Statement st = db.prepare(
        "SELECT e.start_ns, e.end_ns, n.value FROM torch_ops o JOIN nvtx_events e ON e.id = o.nvtx_id JOIN strings n "
        "ON n.id = o.name_id WHERE e.pid = ?1 AND e.tid = ?2 AND e.start_ns >= ?3 AND e.start_ns < ?4 AND e.end_ns IS "
        "NOT NULL ORDER BY e.start_ns, o.nvtx_id");
    st.bind(1, f.pid);
    st.bind(2, f.tid);
    st.bind(3, f.start_ns);
    st.bind(4, f.start_ns + f.cpu.window_ns);
    struct Open {
      std::int64_t end;
      std::string name;
    };
    std::vector<Open> stack;  // enclosing operators
    while (st.step()) {
      const std::int64_t a = st.column_int(0), b = std::max(st.column_int(1), a);
      while (!stack.empty() && stack.back().end <= a) stack.pop_back();
      if (!stack.empty()) out[stack.back().name] -= static_cast<double>(std::min(b, stack.back().end) - a);
      std::string name = st.column_text(2);
      out[name] += static_cast<double>(b - a);
      stack.push_back({b, std::move(name)});
    }
  }
  if (n > 0)
    for (auto& [name, v] : out) v /= static_cast<double>(n);
  return out;
}

}  // namespace

Report llm_step_sum(store::Database& db) {
  Report r;
  r.name = "llm_step_sum";
  r.title = "LLM Step CPU Time by Cause";
  r.add_column("Generation", "", ColumnType::kText, ColumnKind::kIdentifier)
      .add_column("PID", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Phase", "", ColumnType::kText, ColumnKind::kIdentifier)
      .add_column("Steps", "", ColumnType::kInteger)
      .add_column("Step", "ms", ColumnType::kReal)
      .add_column("GPU Work", "ms", ColumnType::kReal);
  for (std::string_view c : kCpuCauseNames) r.add_column(std::string(c), "ms", ColumnType::kReal);
  const LlmTrace t = find_generations(db);
  if (!t.has_modules) {
    r.add_note(NoteLevel::kInfo, std::string("no PyTorch module forwards in the capture range: ") + kRecordHint);
    return r;
  }
  const GenerateLoops found = generate_loops(t);
  if (found.generations.empty()) {
    r.add_note(NoteLevel::kInfo,
               std::string("no generate loop in the capture range (stats -r llm_sum says why): ") + kRecordHint);
    return r;
  }
  std::vector<std::pair<PhaseMeans, PhaseMeans>> means;  // (prefill, decode) per generation
  for (std::size_t i = 0; i < found.generations.size(); ++i) {
    const Generation& g = *found.generations[i];
    means.emplace_back(phase_means(t, g, ForwardPhase::kPrefill), phase_means(t, g, ForwardPhase::kDecode));
    for (const auto& [phase, m] :
         {std::pair{"prefill", means.back().first}, std::pair{"decode", means.back().second}}) {
      if (m.steps == 0) continue;
      Row row{std::to_string(i + 1), g.pid, std::string(phase), static_cast<std::int64_t>(m.steps)};
      row.push_back(detail::real_or_null(m.step / kNsPerMs));
      row.push_back(detail::real_or_null(m.gpu / kNsPerMs));
      for (double c : m.cause) row.push_back(detail::real_or_null(c / kNsPerMs));
      r.rows.push_back(std::move(row));
    }
  }
  // Generation 1 against the median of the others, phase by phase.
  for (const bool decode : {false, true}) {
    const auto pick = [&](std::size_t i) -> const PhaseMeans& { return decode ? means[i].second : means[i].first; };
    if (means.size() < 2 || pick(0).steps == 0) continue;
    std::vector<std::size_t> warm;
    for (std::size_t i = 1; i < means.size(); ++i)
      if (pick(i).steps > 0) warm.push_back(i);
    if (warm.empty()) continue;
    const auto median_of = [&](auto get) {
      std::vector<double> v;
      for (std::size_t i : warm) v.push_back(get(pick(i)));
      return stats::median(v);
    };
    const double warm_step = median_of([](const PhaseMeans& m) { return m.step; });
    const PhaseMeans& cold = pick(0);
    if (!(cold.step > kColdFactor * warm_step)) continue;
    const double extra = cold.step - warm_step;
    std::vector<std::pair<double, std::size_t>> deltas;
    for (std::size_t k = 0; k < kCpuCauses; ++k) {
      const double d = cold.cause[k] - median_of([k](const PhaseMeans& m) { return m.cause[k]; });
      if (d > 0) deltas.emplace_back(d, k);
    }
    std::sort(deltas.rbegin(), deltas.rend());
    const std::string what = decode ? "decode steps" : "prefill";
    std::string v = "generation 1 is cold: its " + what + " took " + units::duration(cold.step / 1e9) +
                    " (CPU, call to call" + (decode ? ", mean per step" : "") + "), " + units::duration(extra / 1e9) +
                    " more than warm ones (" + units::duration(warm_step / 1e9) + ", median of generations 2-" +
                    std::to_string(means.size()) + ")";
    for (std::size_t j = 0; j < deltas.size() && j < 3; ++j)
      v += std::string(j == 0 ? ": " : ", ") + units::duration(deltas[j].first / 1e9) + " of it in " +
           kCauseWords[deltas[j].second];
    // The operator whose own CPU time grew most (cuDNN's planning shows here without --cuda-api=all).
    const Generation& g1 = *found.generations.front();
    const ForwardPhase ph = decode ? ForwardPhase::kDecode : ForwardPhase::kPrefill;
    std::map<std::string, std::vector<double>> warm_ops;
    for (std::size_t i : warm)
      for (const auto& [name, v] : op_self_means(db, t, *found.generations[i], ph)) warm_ops[name].push_back(v);
    std::string top_op;
    double top_delta = 0;
    for (const auto& [name, v] : op_self_means(db, t, g1, ph)) {
      std::vector<double> w = warm_ops[name];
      w.resize(warm.size(), 0.0);  // absent in a warm generation: 0
      const double d = v - stats::median(w);
      if (d > top_delta) top_delta = d, top_op = name;
    }
    if (!top_op.empty())
      v += "; the PyTorch operator whose own CPU time grew most: " + top_op + ", " + units::duration(top_delta / 1e9) +
           " more per step (operators nested in it left out, CUDA calls in it kept)";
    v += "; GPU work " + units::duration(cold.gpu / 1e9) + " against " +
         units::duration(median_of([](const PhaseMeans& m) { return m.gpu; }) / 1e9) +
         " warm (first calls at new lengths: cuDNN plans, kernel loading, compilation, the allocator growing)";
    r.add_note(NoteLevel::kWarning, v);
  }
  const std::string api_mode = db.query_text("SELECT value FROM meta WHERE key = 'cuda_api_calls'").value_or("");
  if (api_mode == "gpu")
    r.add_note(NoteLevel::kInfo,
               "this trace records only the CUDA API calls that put work on the GPU, copy, allocate or wait "
               "(--cuda-api=gpu, the default): module loading and other driver calls are not recorded and count as "
               "Framework or Python/Other; trace with --cuda-api=all to see them");
  r.add_note(NoteLevel::kInfo,
             "Step: a forward's call to the next forward's call on the CPU (the last of a generation: to its last "
             "CUDA call's return); the causes add up to Step; GPU Work: the GPU time of the work launched in it "
             "(docs/llm.md, \"CPU time by cause\")");
  return r;
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
