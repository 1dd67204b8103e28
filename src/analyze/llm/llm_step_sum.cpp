#include "analyze/llm/llm_reports.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyze/common/report_text.hpp"
#include "analyze/llm/llm_report_parts.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
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

// The verdict on generation 1 in one phase (`decode` or the prefill) when it is cold against
// the median of the others (kColdFactor): how much longer, the causes holding the extra time,
// the operator whose own CPU time grew most; nullopt when it is not cold or nothing compares.
std::optional<std::string> cold_verdict(store::Database& db, const LlmTrace& t, const GenerateLoops& found,
                                        const std::vector<std::pair<PhaseMeans, PhaseMeans>>& means, bool decode) {
  const auto pick = [&](std::size_t i) -> const PhaseMeans& { return decode ? means[i].second : means[i].first; };
  if (means.size() < 2 || pick(0).steps == 0) return std::nullopt;
  std::vector<std::size_t> warm;
  for (std::size_t i = 1; i < means.size(); ++i)
    if (pick(i).steps > 0) warm.push_back(i);
  if (warm.empty()) return std::nullopt;
  const auto median_of = [&](auto get) {
    std::vector<double> v;
    for (std::size_t i : warm) v.push_back(get(pick(i)));
    return stats::median(v);
  };
  const double warm_step = median_of([](const PhaseMeans& m) { return m.step; });
  const PhaseMeans& cold = pick(0);
  if (!(cold.step > detail::kColdFactor * warm_step)) return std::nullopt;
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
  return v;
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
    r.add_note(NoteLevel::kInfo,
               std::string("no PyTorch module forwards in the capture range: ") + detail::kRecordHint);
    return r;
  }
  const GenerateLoops found = generate_loops(t);
  if (found.generations.empty()) {
    r.add_note(NoteLevel::kInfo, std::string("no generate loop in the capture range (stats -r llm_sum says why): ") +
                                     detail::kRecordHint);
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
      row.push_back(detail::real_or_null(m.step / detail::kNsPerMs));
      row.push_back(detail::real_or_null(m.gpu / detail::kNsPerMs));
      for (double c : m.cause) row.push_back(detail::real_or_null(c / detail::kNsPerMs));
      r.rows.push_back(std::move(row));
    }
  }
  // Generation 1 against the median of the others, phase by phase.
  for (const bool decode : {false, true})
    if (const std::optional<std::string> v = cold_verdict(db, t, found, means, decode))
      r.add_note(NoteLevel::kWarning, *v);
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

}  // namespace gpuscope::analyze
