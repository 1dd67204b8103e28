#include "analyze/llm/llm_generations.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "analyze/llm/llm_generations_parts.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using detail::Launch;
using detail::ModelCall;

std::uint64_t fnv1a(std::span<const std::int64_t> ids) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::int64_t id : ids) {
    for (int b = 0; b < 8; ++b) {
      h ^= static_cast<std::uint64_t>(id >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  }
  return h;
}

// One call of the model as a forward: its call, bytes, shapes and the kernels it launched itself.
ForwardPass forward_of(std::int64_t pid, const ModelCall& c, const detail::ThreadEvents& events) {
  ForwardPass f;
  f.pid = pid;
  f.tid = c.tid;
  f.start_ns = c.start;
  f.end_ns = c.end;
  f.bytes = parse_model_bytes(c.text);
  detail::read_shapes(f, events.shapes_of(pid, c.tid));
  std::vector<std::int64_t> names;
  for (const Launch& l : events.launches_in(pid, c.tid, c.start, c.end + 1)) {
    if (l.name >= 0) ++f.kernels;
    names.push_back(l.name);
  }
  std::sort(names.begin(), names.end());
  f.kernel_set = fnv1a(names);
  return f;
}

}  // namespace

double percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(samples.begin(), samples.end());
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(samples.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, samples.size() - 1);
  return samples[lo] + (samples[hi] - samples[lo]) * (rank - static_cast<double>(lo));
}

PhaseSource phase_source(std::span<const ForwardPass> forwards) {
  if (forwards.empty()) return PhaseSource::kKernels;
  const bool shapes =
      std::all_of(forwards.begin(), forwards.end(), [](const ForwardPass& f) { return f.seq.has_value(); });
  if (shapes) return PhaseSource::kShapes;
  const bool tokens =
      std::all_of(forwards.begin(), forwards.end(), [](const ForwardPass& f) { return f.tokens.has_value(); });
  return tokens ? PhaseSource::kTokens : PhaseSource::kKernels;
}

void classify_forwards(std::span<ForwardPass> fw, PhaseSource source) {
  const std::size_t n = fw.size();
  for (ForwardPass& f : fw) f.phase = ForwardPhase::kDecode;
  if (source == PhaseSource::kShapes) {
    for (ForwardPass& f : fw)
      if (f.seq.value_or(1) > 1) f.phase = ForwardPhase::kPrefill;
    return;
  }
  if (source == PhaseSource::kTokens) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t t = fw[i].tokens.value_or(0);
      const bool more_than_next = i + 1 < n && t > fw[i + 1].tokens.value_or(0);
      const bool last_more_than_previous = i + 1 == n && i > 0 && t > fw[i - 1].tokens.value_or(0);
      if (more_than_next || last_more_than_previous) fw[i].phase = ForwardPhase::kPrefill;
    }
    return;
  }
  // kKernels: the most common kernel set is the decode step's.
  std::map<std::uint64_t, std::size_t> counts;
  for (const ForwardPass& f : fw) ++counts[f.kernel_set];
  std::uint64_t decode = 0;
  std::size_t best = 0;
  for (const auto& [set, c] : counts)
    if (c > best) decode = set, best = c;
  for (std::size_t i = 0; i + 1 < n; ++i)
    if (fw[i].kernel_set != decode && fw[i + 1].kernel_set == decode) fw[i].phase = ForwardPhase::kPrefill;
}

std::vector<Generation> group_generations(std::span<const ForwardPass> fw, std::size_t offset) {
  std::vector<Generation> out;
  for (std::size_t i = 0; i < fw.size(); ++i) {
    const ForwardPass& f = fw[i];
    if (out.empty() || f.phase == ForwardPhase::kPrefill) {
      Generation g;
      g.pid = f.pid;
      g.first = offset + i;
      g.has_prefill = f.phase == ForwardPhase::kPrefill;
      g.start_ns = f.start_ns;
      g.weight_dtype = f.bytes.weight_dtype;
      if (g.has_prefill) {
        g.first_token_ns = f.token_end_ns;
        g.prompt_len = f.seq;
        g.batch = f.batch;
        g.prefill_flops = f.flops;
        g.prefill_flop_ops = f.flop_ops;
      } else {
        g.batch = f.batch.has_value() ? f.batch : f.tokens;
      }
      out.push_back(std::move(g));
    } else {
      Generation& g = out.back();
      const ForwardPass& prev = fw[i - 1];
      if (prev.token_end_ns > 0 && f.token_end_ns > 0) {
        g.decode_ns.push_back(f.token_end_ns - prev.token_end_ns);
        g.decode_busy_ns.push_back(f.gpu_busy_ns);
      }
      if (const std::optional<std::int64_t> read = step_read_bytes(f)) {
        g.decode_bytes.push_back(*read);
        g.decode_kv_bytes.push_back(*read - *f.bytes.weight_bytes);
      }
      if (!g.batch) g.batch = f.batch.has_value() ? f.batch : f.tokens;  // kTokens: the first decode step's rows
      if (g.has_prefill && !g.prompt_len && g.batch && *g.batch > 0 && fw[g.first - offset].tokens)
        g.prompt_len = *fw[g.first - offset].tokens / *g.batch;
    }
    Generation& g = out.back();
    ++g.count;
    if (f.token_end_ns > 0) g.end_ns = f.token_end_ns;
  }
  return out;
}

double mean_of(std::span<const std::int64_t> values) {
  if (values.empty()) return std::nan("");
  double sum = 0;
  for (std::int64_t x : values) sum += static_cast<double>(x);
  return sum / static_cast<double>(values.size());
}

LlmTrace find_generations(store::Database& db) {
  LlmTrace t;
  if (!db.has_table("torch_modules") || !db.has_table("torch_ops") || !db.has_table("torch_steps")) return t;
  if (db.query_int("SELECT COUNT(*) FROM torch_modules").value_or(0) == 0) return t;
  t.has_modules = true;
  t.training_pids = detail::training_pids(db);
  const std::map<std::int64_t, std::vector<ModelCall>> calls = detail::model_calls(db, t.training_pids);
  if (calls.empty()) return t;
  const detail::ThreadEvents events(db, calls);
  for (const auto& [pid, list] : calls) {
    if (list.empty()) continue;
    const std::size_t offset = t.forwards.size();
    for (const ModelCall& c : list) t.forwards.push_back(forward_of(pid, c, events));
    const std::span<ForwardPass> fw(t.forwards.data() + offset, t.forwards.size() - offset);
    const PhaseSource source = phase_source(fw);
    classify_forwards(fw, source);
    t.models.push_back({pid, list.front().path, list.front().class_name, source, fw.size()});
    detail::time_forwards(fw, events);
    std::vector<Generation> gens = group_generations(fw, offset);
    detail::set_request_starts(gens, t.forwards, events);
    for (Generation& g : gens) t.generations.push_back(std::move(g));
  }
  return t;
}

}  // namespace gpuscope::analyze
