// A forward's batch, tokens and FLOPs from the input shapes PyTorch recorded for its
// operators (--pytorch=...,shapes): parse_sizes, matmul_flops, read_shapes.
#include "analyze/llm/llm_generations_parts.hpp"

#include <algorithm>
#include <limits>
#include <string_view>

#include "core/saturating.hpp"

namespace gpuscope::analyze {
namespace {

// The operators whose recorded input shapes tell how many tokens a forward processes.
constexpr std::string_view kEmbedding = "aten::embedding";
constexpr std::string_view kMatmuls[] = {"aten::mm", "aten::addmm", "aten::linear", "aten::matmul"};
// The operators whose shapes give FLOPs (matmul_flops); kMatmuls among them.
constexpr std::string_view kFlopOps[] = {"aten::bmm", "aten::baddbmm", "aten::scaled_dot_product_attention"};

bool is_token_matmul(std::string_view name) {
  return std::find(std::begin(kMatmuls), std::end(kMatmuls), name) != std::end(kMatmuls);
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

}  // namespace

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

namespace detail {

std::string shaped_op_names_sql() {
  std::string names = "'" + std::string(kEmbedding) + "'";
  for (std::string_view m : kMatmuls) names += ", '" + std::string(m) + "'";
  for (std::string_view m : kFlopOps) names += ", '" + std::string(m) + "'";
  return names;
}

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

}  // namespace detail
}  // namespace gpuscope::analyze
