#include "analyze/llm/llm_generations.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/pytorch_ranges.hpp"
#include "core/saturating.hpp"
#include "core/stats.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using store::Database;
using store::Statement;

constexpr std::int64_t kTailSlackNs = 50'000;  // past 2 x the longest tail, for the last forward

// The operators whose recorded input shapes tell how many tokens a forward processes.
constexpr std::string_view kEmbedding = "aten::embedding";
constexpr std::string_view kMatmuls[] = {"aten::mm", "aten::addmm", "aten::linear", "aten::matmul"};
// The operators whose shapes give FLOPs (matmul_flops); kMatmuls among them.
constexpr std::string_view kFlopOps[] = {"aten::bmm", "aten::baddbmm", "aten::scaled_dot_product_attention"};

struct OpShape {
  std::int64_t start, end;
  std::string name, sizes;
};

bool is_token_matmul(std::string_view name) {
  return std::find(std::begin(kMatmuls), std::end(kMatmuls), name) != std::end(kMatmuls);
}

// The number after `key` ("key = 123") in `text`; nullopt when absent or not a number.
std::optional<std::int64_t> field_int(std::string_view text, std::string_view key) {
  const std::size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + key.size();
  if (i >= text.size() || text[i] < '0' || text[i] > '9') return std::nullopt;
  std::int64_t v = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9')
    v = core::sat_add(
        v > std::numeric_limits<std::int64_t>::max() / 10 ? std::numeric_limits<std::int64_t>::max() : v * 10,
        static_cast<std::int64_t>(text[i++] - '0'));
  return v;
}

// One GPU activity and the API call that launched it.
struct Launch {
  std::int64_t api_ns, gpu_start, gpu_end, name;  // name: kernels.short_name_id; -1 for copies and sets
  bool to_host;                                   // a device-to-host copy
};

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

std::int64_t sat_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<std::int64_t>::max() : r;
}

std::int64_t product(const std::vector<std::int64_t>& dims, std::size_t count) {
  std::int64_t p = 1;
  for (std::size_t i = 0; i < count && i < dims.size(); ++i) p = sat_mul(p, std::max<std::int64_t>(dims[i], 0));
  return p;
}

// Batch, sequence and tokens of a forward from the shaped operators inside its call; its
// FLOPs from the outermost matrix products.
void read_shapes(ForwardPass& f, std::span<const OpShape> ops) {
  auto it = std::lower_bound(ops.begin(), ops.end(), f.start_ns,
                             [](const OpShape& o, std::int64_t t) { return o.start < t; });
  std::optional<std::int64_t> matmul_rows;
  bool found_embedding = false;
  std::int64_t counted_until = std::numeric_limits<std::int64_t>::min();  // end of the last op counted
  for (; it != ops.end() && it->start <= f.end_ns; ++it) {
    const auto sizes = parse_sizes(it->sizes);
    if (!sizes) continue;
    if (it->name != kEmbedding && it->start >= counted_until) {
      if (const std::optional<double> fl = matmul_flops(it->name, *sizes)) {
        f.flops = f.flops.value_or(0.0) + *fl;
        ++f.flop_ops;
        counted_until = std::max(it->end, it->start + 1);  // ops nested inside it are its own
      }
    }
    if (found_embedding) continue;
    if (it->name == kEmbedding) {
      if (sizes->size() < 2 || sizes->at(1).empty()) continue;
      const std::vector<std::int64_t>& idx = sizes->at(1);  // aten::embedding(weight, indices, ...)
      f.batch = idx.size() >= 2 ? product(idx, idx.size() - 1) : 1;
      f.seq = idx.back();
      f.tokens = sat_mul(*f.batch, *f.seq);
      found_embedding = true;
      continue;
    }
    if (!matmul_rows && is_token_matmul(it->name)) {
      const std::size_t input = it->name == "aten::addmm" ? 1 : 0;  // addmm(bias, mat1, mat2)
      if (sizes->size() > input && sizes->at(input).size() >= 2)
        matmul_rows = product(sizes->at(input), sizes->at(input).size() - 1);
    }
  }
  if (!found_embedding) f.tokens = matmul_rows;
}

bool has(std::string_view name, std::string_view part) { return name.find(part) != std::string_view::npos; }
bool starts(std::string_view name, std::string_view prefix) { return name.rfind(prefix, 0) == 0; }

}  // namespace

ApiCause api_cause(std::string_view n) {
  for (std::string_view p : {"cuModuleLoad", "cuLibraryLoad", "cudaLibraryLoad", "cuModuleGetFunction",
                             "cuLibraryGetKernel", "cudaGetFuncBySymbol", "cuLink", "nvrtc", "nvJitLink"})
    if (starts(n, p)) return ApiCause::kModuleLoad;
  if (has(n, "Malloc") || has(n, "Free") || starts(n, "cuMemAlloc") || n == "cuMemCreate" || n == "cuMemMap" ||
      n == "cuMemAddressReserve" || n == "cuMemRelease" || has(n, "HostAlloc") || has(n, "HostRegister"))
    return ApiCause::kAlloc;
  if (has(n, "Synchronize") || ((has(n, "Memcpy") || has(n, "Memset")) && !has(n, "Async"))) return ApiCause::kSync;
  if (has(n, "Launch")) return ApiCause::kLaunch;
  return ApiCause::kOther;
}

CpuCauses cpu_split(std::int64_t from, std::int64_t to, std::span<const ApiSpan> api,
                    std::span<const std::pair<std::int64_t, std::int64_t>> ops) {
  CpuCauses c;
  if (to <= from) return c;
  c.window_ns = to - from;
  const auto clip = [&](std::int64_t a, std::int64_t b, std::vector<stats::Interval>& out) {
    a = std::max(a, from), b = std::min(b, to);
    if (b > a) out.push_back({a, b});
  };
  std::vector<stats::Interval> covered;  // the causes attributed so far
  std::int64_t before = 0;
  for (std::size_t k = 0; k < kApiCauses; ++k) {
    for (const ApiSpan& a : api)
      if (static_cast<std::size_t>(a.cause) == k) clip(a.start_ns, a.end_ns, covered);
    const std::int64_t now = stats::union_length(covered);
    c.api_ns[k] = now - before;
    before = now;
  }
  for (const auto& [a, b] : ops) clip(a, b, covered);
  const std::int64_t busy = stats::union_length(std::move(covered));
  c.framework_ns = busy - before;
  c.other_ns = c.window_ns - busy;
  return c;
}

ModelBytes parse_model_bytes(std::string_view text) {
  ModelBytes b;
  const std::size_t at = text.find(core::kModuleBytesField);
  if (at == std::string_view::npos) return b;
  const std::string_view fields = text.substr(at);
  b.weight_bytes = field_int(fields, core::kModuleBytesField);
  constexpr std::string_view kDtype = ", weight_dtype = ";
  if (const std::size_t d = fields.find(kDtype); d != std::string_view::npos) {
    std::string_view rest = fields.substr(d + kDtype.size());
    b.weight_dtype = std::string(rest.substr(0, rest.find(',')));
  }
  b.kv_bytes = field_int(fields, ", kv_bytes = ");
  b.kv_tokens = field_int(fields, ", kv_tokens = ");
  b.kv_static = field_int(fields, ", kv_static = ").value_or(0) != 0;
  return b;
}

std::optional<std::int64_t> step_read_bytes(const ForwardPass& f) {
  if (!f.bytes.weight_bytes) return std::nullopt;
  std::int64_t total = *f.bytes.weight_bytes;
  if (f.bytes.kv_bytes) {
    total = core::sat_add(total, *f.bytes.kv_bytes);
    const std::int64_t held = f.bytes.kv_tokens.value_or(0);
    if (!f.bytes.kv_static && held > 0) {  // the new tokens' keys and values, written then read
      const double added = static_cast<double>(*f.bytes.kv_bytes) / static_cast<double>(held) *
                           static_cast<double>(std::max<std::int64_t>(f.seq.value_or(1), 1));
      total = core::sat_add(total, static_cast<std::int64_t>(std::llround(added)));
    }
  }
  return total;
}

std::optional<double> matmul_flops(std::string_view name, const std::vector<std::vector<std::int64_t>>& sizes) {
  const auto dims_ok = [](const std::vector<std::int64_t>& d, std::size_t n) {
    return d.size() >= n && std::all_of(d.begin(), d.end(), [](std::int64_t x) { return x >= 0; });
  };
  const auto prod = [](const std::vector<std::int64_t>& d, std::size_t from, std::size_t to) {
    double p = 1;
    for (std::size_t i = from; i < to && i < d.size(); ++i) p *= static_cast<double>(d[i]);
    return p;
  };
  const auto at = [&](std::size_t i) -> const std::vector<std::int64_t>* {
    return i < sizes.size() ? &sizes[i] : nullptr;
  };
  if (name == "aten::mm" || name == "aten::addmm") {
    const std::size_t first = name == "aten::addmm" ? 1 : 0;
    const auto *a = at(first), *b = at(first + 1);
    if (!a || !b || a->size() != 2 || b->size() != 2 || !dims_ok(*a, 2) || !dims_ok(*b, 2)) return std::nullopt;
    return 2.0 * static_cast<double>((*a)[0]) * static_cast<double>((*a)[1]) * static_cast<double>((*b)[1]);
  }
  if (name == "aten::bmm" || name == "aten::baddbmm") {
    const std::size_t first = name == "aten::baddbmm" ? 1 : 0;
    const auto *a = at(first), *b = at(first + 1);
    if (!a || !b || a->size() != 3 || b->size() != 3 || !dims_ok(*a, 3) || !dims_ok(*b, 3)) return std::nullopt;
    return 2.0 * prod(*a, 0, 3) * static_cast<double>((*b)[2]);
  }
  if (name == "aten::linear") {
    const auto *x = at(0), *w = at(1);
    if (!x || !w || x->empty() || w->size() != 2 || !dims_ok(*x, 1) || !dims_ok(*w, 2)) return std::nullopt;
    return 2.0 * prod(*x, 0, x->size()) * static_cast<double>((*w)[0]);
  }
  if (name == "aten::matmul") {
    const auto *pa = at(0), *pb = at(1);
    if (!pa || !pb || pa->empty() || pb->empty() || !dims_ok(*pa, 1) || !dims_ok(*pb, 1)) return std::nullopt;
    std::vector<std::int64_t> a = *pa, b = *pb;
    if (a.size() == 1) a.insert(a.begin(), 1);  // a row
    if (b.size() == 1) b.push_back(1);          // a column
    const double m = static_cast<double>(a[a.size() - 2]), k = static_cast<double>(a.back()),
                 n = static_cast<double>(b.back());
    double batch = 1;  // broadcast of the leading dimensions
    const std::size_t la = a.size() - 2, lb = b.size() - 2, l = std::max(la, lb);
    for (std::size_t i = 0; i < l; ++i) {
      const std::int64_t da = i < l - la ? 1 : a[i - (l - la)], db = i < l - lb ? 1 : b[i - (l - lb)];
      batch *= static_cast<double>(std::max(da, db));
    }
    return 2.0 * batch * m * k * n;
  }
  if (name == "aten::scaled_dot_product_attention") {
    const auto *q = at(0), *k = at(1), *v = at(2);
    if (!q || !k || !v || q->size() < 2 || k->size() < 2 || v->size() < 2 || !dims_ok(*q, 2) || !dims_ok(*k, 2) ||
        !dims_ok(*v, 2))
      return std::nullopt;
    const double l = static_cast<double>((*q)[q->size() - 2]), e = static_cast<double>(q->back());
    const double src = static_cast<double>((*k)[k->size() - 2]), ev = static_cast<double>(v->back());
    return 2.0 * prod(*q, 0, q->size() - 2) * l * src * (e + ev);
  }
  return std::nullopt;
}

std::optional<std::vector<std::vector<std::int64_t>>> parse_sizes(std::string_view text) {
  std::vector<std::vector<std::int64_t>> out;
  std::size_t i = 0;
  const auto skip = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  skip();
  if (i >= text.size() || text[i] != '[') return std::nullopt;
  ++i;
  skip();
  if (i < text.size() && text[i] == ']') return out;
  while (i < text.size()) {
    skip();
    if (i >= text.size() || text[i] != '[') return std::nullopt;
    ++i;
    std::vector<std::int64_t> dims;
    skip();
    while (i < text.size() && text[i] != ']') {
      skip();
      bool neg = false;
      if (i < text.size() && text[i] == '-') neg = true, ++i;
      if (i >= text.size() || text[i] < '0' || text[i] > '9') return std::nullopt;
      std::int64_t v = 0;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9')
        v = core::sat_add(sat_mul(v, std::int64_t{10}), static_cast<std::int64_t>(text[i++] - '0'));
      dims.push_back(neg ? -v : v);
      skip();
      if (i < text.size() && text[i] == ',') ++i;
    }
    if (i >= text.size()) return std::nullopt;
    ++i;  // ']'
    out.push_back(std::move(dims));
    skip();
    if (i < text.size() && text[i] == ',') {
      ++i;
      continue;
    }
    if (i < text.size() && text[i] == ']') return out;
    return std::nullopt;
  }
  return std::nullopt;
}

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

LlmTrace find_generations(Database& db) {
  LlmTrace t;
  if (!db.has_table("torch_modules") || !db.has_table("torch_ops") || !db.has_table("torch_steps")) return t;
  if (db.query_int("SELECT COUNT(*) FROM torch_modules").value_or(0) == 0) return t;
  t.has_modules = true;
  std::set<std::int64_t> training;
  {
    Statement st =
        db.prepare("SELECT pid FROM torch_steps UNION SELECT pid FROM torch_ops WHERE is_backward = 1 ORDER BY pid");
    while (st.step()) training.insert(st.column_int(0));
  }
  t.training_pids.assign(training.begin(), training.end());

  // The top-level module calls of each process; the model is the path called most often.
  struct Call {
    std::int64_t tid, start, end;
    std::string path, class_name, text;
  };
  std::map<std::int64_t, std::vector<Call>> calls;
  {
    Statement st = db.prepare(
        "SELECT m.pid, m.tid, m.start_ns, m.end_ns, COALESCE(m.path, ''), COALESCE(m.class_name, ''), "
        "COALESCE(s.value, '') FROM v_torch_modules m JOIN nvtx_events e ON e.id = m.nvtx_id LEFT JOIN strings s ON "
        "s.id = e.text_id WHERE m.parent_module IS NULL AND m.end_ns IS NOT NULL ORDER BY m.pid, m.start_ns, "
        "m.nvtx_id");
    while (st.step()) {
      if (training.count(st.column_int(0)) != 0) continue;
      calls[st.column_int(0)].push_back({st.column_int(1), st.column_int(2), st.column_int(3), st.column_text(4),
                                         st.column_text(5), st.column_text(6)});
    }
  }
  for (auto& [pid, list] : calls) {
    std::map<std::string, std::size_t> count;
    for (const Call& c : list) ++count[c.path];
    std::string model;
    std::size_t best = 0;
    for (const Call& c : list)  // first seen wins a tie
      if (count[c.path] > best) model = c.path, best = count[c.path];
    std::erase_if(list, [&](const Call& c) { return c.path != model; });
  }
  if (calls.empty()) return t;

  // Shaped operators (embedding, matrix products) and GPU work, per (pid, tid) in time order.
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<OpShape>> shapes;
  {
    std::string names = "'" + std::string(kEmbedding) + "'";
    for (std::string_view m : kMatmuls) names += ", '" + std::string(m) + "'";
    for (std::string_view m : kFlopOps) names += ", '" + std::string(m) + "'";
    Statement st = db.prepare(
        "SELECT e.pid, e.tid, e.start_ns, COALESCE(e.end_ns, e.start_ns), n.value, o.sizes FROM torch_ops o JOIN "
        "nvtx_events e ON e.id = o.nvtx_id JOIN strings n ON n.id = o.name_id WHERE o.sizes IS NOT NULL AND n.value "
        "IN (" +
        names + ") ORDER BY e.pid, e.tid, e.start_ns, o.nvtx_id");
    while (st.step())
      if (calls.count(st.column_int(0)) != 0)
        shapes[{st.column_int(0), st.column_int(1)}].push_back(
            {st.column_int(2), st.column_int(3), st.column_text(4), st.column_text(5)});
  }
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Launch>> launches;
  for (const std::string table : {"kernels", "memcpys", "memsets"}) {
    const std::string name = table == "kernels" ? "COALESCE(k.short_name_id, -1)" : "-1";
    const std::string to_host = table == "memcpys" ? "k.copy_kind = 'DtoH'" : "0";
    Statement st =
        db.prepare("SELECT a.pid, a.tid, a.start_ns, k.start_ns, k.end_ns, " + name + ", " + to_host + " FROM " +
                   table + " k JOIN api_calls a ON a.pid = k.pid AND a.correlation_id = k.correlation_id");
    while (st.step())
      if (calls.count(st.column_int(0)) != 0)
        launches[{st.column_int(0), st.column_int(1)}].push_back(
            {st.column_int(2), st.column_int(3), st.column_int(4), st.column_int(5), st.column_int(6) != 0});
  }
  // Every API call and operator range of the model's threads, for the CPU time by cause.
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<ApiSpan>> api;
  {
    Statement st = db.prepare(
        "SELECT a.pid, a.tid, a.start_ns, a.end_ns, COALESCE(n.value, ''), EXISTS (SELECT 1 FROM memcpys m WHERE "
        "m.pid = a.pid AND m.correlation_id = a.correlation_id AND m.copy_kind = 'DtoH') FROM api_calls a LEFT JOIN "
        "strings n ON n.id = a.name_id ORDER BY a.pid, a.tid, a.start_ns");
    while (st.step())
      if (calls.count(st.column_int(0)) != 0)
        api[{st.column_int(0), st.column_int(1)}].push_back(
            {st.column_int(2), st.column_int(3),
             st.column_int(5) != 0 ? ApiCause::kSync : api_cause(st.column_text(4))});
  }
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<std::int64_t, std::int64_t>>> op_ranges;
  {
    Statement st = db.prepare(
        "SELECT e.pid, e.tid, e.start_ns, e.end_ns FROM torch_ops o JOIN nvtx_events e ON e.id = o.nvtx_id WHERE "
        "e.end_ns IS NOT NULL ORDER BY e.pid, e.tid, e.start_ns");
    while (st.step())
      if (calls.count(st.column_int(0)) != 0)
        op_ranges[{st.column_int(0), st.column_int(1)}].emplace_back(st.column_int(2), st.column_int(3));
  }
  // The API calls and operator ranges of (pid, tid), in start order.
  const auto api_of = [&](std::int64_t pid, std::int64_t tid) {
    const auto it = api.find({pid, tid});
    return it == api.end() ? std::span<const ApiSpan>{} : std::span<const ApiSpan>(it->second);
  };
  const auto ops_of = [&](std::int64_t pid, std::int64_t tid) {
    const auto it = op_ranges.find({pid, tid});
    return it == op_ranges.end() ? std::span<const std::pair<std::int64_t, std::int64_t>>{}
                                 : std::span<const std::pair<std::int64_t, std::int64_t>>(it->second);
  };

  for (auto& [key, list] : launches)
    std::sort(list.begin(), list.end(), [](const Launch& a, const Launch& b) { return a.api_ns < b.api_ns; });
  const auto launches_in = [&](std::int64_t pid, std::int64_t tid, std::int64_t from, std::int64_t to) {
    const auto it = launches.find({pid, tid});
    if (it == launches.end()) return std::span<const Launch>{};
    const std::vector<Launch>& l = it->second;
    const auto lo =
        std::lower_bound(l.begin(), l.end(), from, [](const Launch& x, std::int64_t v) { return x.api_ns < v; });
    const auto hi = std::lower_bound(lo, l.end(), to, [](const Launch& x, std::int64_t v) { return x.api_ns < v; });
    return std::span<const Launch>(lo, hi);
  };

  for (const auto& [pid, list] : calls) {
    if (list.empty()) continue;
    const std::size_t offset = t.forwards.size();
    for (const Call& c : list) {
      ForwardPass f;
      f.pid = pid;
      f.tid = c.tid;
      f.start_ns = c.start;
      f.end_ns = c.end;
      f.bytes = parse_model_bytes(c.text);
      if (const auto s = shapes.find({pid, c.tid}); s != shapes.end()) read_shapes(f, s->second);
      std::vector<std::int64_t> names;
      for (const Launch& l : launches_in(pid, c.tid, c.start, c.end + 1)) {
        if (l.name >= 0) ++f.kernels;
        names.push_back(l.name);
      }
      std::sort(names.begin(), names.end());
      f.kernel_set = fnv1a(names);
      t.forwards.push_back(std::move(f));
    }
    const std::span<ForwardPass> fw(t.forwards.data() + offset, t.forwards.size() - offset);
    const PhaseSource source = phase_source(fw);
    classify_forwards(fw, source);
    t.models.push_back({pid, list.front().path, list.front().class_name, source, fw.size()});

    // Each forward's window: from its call to the next forward's call; tails first.
    const auto window_end = [&](std::size_t i) {
      return i + 1 < fw.size() ? fw[i + 1].start_ns : std::numeric_limits<std::int64_t>::max();
    };
    for (std::size_t i = 0; i < fw.size(); ++i) {
      const auto w = launches_in(pid, fw[i].tid, fw[i].start_ns, window_end(i));
      fw[i].tail_ns = w.empty() ? 0 : std::max<std::int64_t>(0, w.back().api_ns - fw[i].end_ns);
    }
    for (std::size_t b = 0; b < fw.size();) {  // generation [b, e)
      std::size_t e = b + 1;
      while (e < fw.size() && fw[e].phase != ForwardPhase::kPrefill) ++e;
      for (std::size_t i = b; i < e; ++i) {
        std::int64_t to = window_end(i);
        if (i + 1 == e && e - b > 1) {  // the last: no further than the generation's other tails suggest
          std::int64_t longest = 0;
          for (std::size_t j = b; j + 1 < e; ++j) longest = std::max(longest, fw[j].tail_ns);
          to = std::min(to, core::sat_add(fw[i].end_ns, core::sat_add(2 * longest, kTailSlackNs)) + 1);
        }
        const auto w = launches_in(pid, fw[i].tid, fw[i].start_ns, to);
        // The token reaches the host with the first device-to-host copy after the forward
        // (a streamer's .cpu(), .item(), a stopping check); without one, with the last work.
        std::int64_t last = 0, to_host = 0;
        for (const Launch& l : w) {
          last = std::max(last, l.gpu_end);
          if (l.to_host && to_host == 0 && l.api_ns > fw[i].end_ns) to_host = l.gpu_end;
        }
        fw[i].token_end_ns = to_host != 0 ? to_host : last;
        // The CPU window: to the next forward's call; the last one's to its token's GPU end or its
        // latest call's return, whichever is later.
        std::int64_t cpu_end = fw[i].end_ns;
        const std::span<const ApiSpan> calls_of = api_of(pid, fw[i].tid);
        if (i + 1 < e) {
          cpu_end = fw[i + 1].start_ns;
        } else {
          cpu_end = std::max(cpu_end, fw[i].token_end_ns);  // the loop waits for its token
          for (auto a = std::lower_bound(calls_of.begin(), calls_of.end(), fw[i].start_ns,
                                         [](const ApiSpan&x, std::int64_t v) { return x.start_ns < v; });
               a != calls_of.end() && a->start_ns < to; ++a)
            cpu_end = std::max(cpu_end, a->end_ns);
        }
        // Both lists are in start order: what starts inside the window (one started before the
        // forward's call belongs to the window before).
        const auto a_lo = std::lower_bound(calls_of.begin(), calls_of.end(), fw[i].start_ns,
                                           [](const ApiSpan& a, std::int64_t v) { return a.start_ns < v; });
        const auto a_hi = std::lower_bound(a_lo, calls_of.end(), cpu_end,
                                           [](const ApiSpan& a, std::int64_t v) { return a.start_ns < v; });
        const auto ops = ops_of(pid, fw[i].tid);
        using Range = std::pair<std::int64_t, std::int64_t>;
        const auto o_lo = std::lower_bound(ops.begin(), ops.end(), fw[i].start_ns,
                                           [](const Range& o, std::int64_t v) { return o.first < v; });
        const auto o_hi =
            std::lower_bound(o_lo, ops.end(), cpu_end, [](const Range& o, std::int64_t v) { return o.first < v; });
        fw[i].cpu = cpu_split(fw[i].start_ns, cpu_end, std::span<const ApiSpan>(a_lo, a_hi),
                              std::span<const Range>(o_lo, o_hi));
        std::vector<stats::Interval> work;
        for (const Launch& l : launches_in(pid, fw[i].tid, fw[i].start_ns, cpu_end))
          if (l.gpu_end > l.gpu_start) work.push_back({l.gpu_start, l.gpu_end});
        fw[i].gpu_work_ns = stats::union_length(std::move(work));
        // Busy inside the token's interval: the previous token's end to this one's; the
        // generation's first forward from its call (the prefill: its TTFT).
        if (fw[i].token_end_ns > 0 && (i == b || fw[i - 1].token_end_ns > 0)) {
          const std::int64_t from = i == b ? fw[i].start_ns : fw[i - 1].token_end_ns, until = fw[i].token_end_ns;
          std::vector<stats::Interval> busy;
          for (const Launch& l : w)
            if (l.gpu_end > from && l.gpu_start < until)
              busy.push_back({std::max(l.gpu_start, from), std::min(l.gpu_end, until)});
          fw[i].gpu_busy_ns = stats::union_length(std::move(busy));
        }
      }
      b = e;
    }
    for (Generation& g : group_generations(fw, offset)) t.generations.push_back(std::move(g));
  }
  return t;
}

}  // namespace gpuscope::analyze
