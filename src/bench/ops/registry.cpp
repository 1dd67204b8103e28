#include <algorithm>
#include <stdexcept>
#include <string>

#include "bench/ops/operator.hpp"
#include "bench/ops/suite.hpp"

namespace gpuscope::bench::ops {

const Variant* Operator::find_variant(std::string_view variant) const {
  for (const Variant& v : variants)
    if (v.name == variant) return &v;
  return nullptr;
}

bool Operator::supports(DType dtype) const { return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end(); }

const std::vector<Operator>& registry() {
  static const std::vector<Operator> ops = [] {
    std::vector<Operator> v;
    v.push_back(detail::make_vector_add());
    v.push_back(detail::make_square());
    v.push_back(detail::make_relu());
    v.push_back(detail::make_copy());
    v.push_back(detail::make_mean());
    v.push_back(detail::make_softmax());
    v.push_back(detail::make_transpose());
    v.push_back(detail::make_gemm());
    v.push_back(detail::make_linear_small());
    return v;
  }();
  return ops;
}

const Operator* find_operator(std::string_view name) {
  for (const Operator& op : registry())
    if (op.name == name) return &op;
  return nullptr;
}

namespace detail {

void check_token(std::string_view op, std::span<const std::int64_t> token, std::initializer_list<std::size_t> allowed,
                 std::string_view forms) {
  if (std::find(allowed.begin(), allowed.end(), token.size()) == allowed.end())
    throw std::invalid_argument(std::string(op) + " takes sizes of the form " + std::string(forms) + ", not " +
                                std::to_string(token.size()) + " numbers joined by 'x'");
  for (std::int64_t v : token)
    if (v < 1)
      throw std::invalid_argument(std::string(op) + ": every size must be >= 1 (got " + std::to_string(v) + ")");
}

std::size_t variant_index(const Operator& op, std::string_view variant) {
  for (std::size_t i = 0; i < op.variants.size(); ++i)
    if (op.variants[i].name == variant) return i;
  std::string names;
  for (const Variant& v : op.variants) names += (names.empty() ? "" : ", ") + v.name;
  throw std::invalid_argument(op.name + " has no variant '" + std::string(variant) + "' (valid: " + names + ")");
}

}  // namespace detail
}  // namespace gpuscope::bench::ops
