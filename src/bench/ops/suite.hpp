// Internal to bench/ops: the operator factories registry.cpp lists, and the shape helpers
// they share.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/ops/operator.hpp"

namespace gpuscope::bench::ops::detail {

Operator make_vector_add();
Operator make_square();
Operator make_relu();
Operator make_copy();
Operator make_mean();
Operator make_softmax();
Operator make_transpose();
Operator make_gemm();
Operator make_linear_small();

/// Checks that a --sizes token has one of the counts in `allowed` (e.g. {1} or {1, 3})
/// and that every number is >= 1; throws std::invalid_argument naming the operator and
/// `forms` ("N or MxNxK").
void check_token(std::string_view op, std::span<const std::int64_t> token, std::initializer_list<std::size_t> allowed,
                 std::string_view forms);

/// The variant's position in `op.variants`; throws std::invalid_argument listing them.
[[nodiscard]] std::size_t variant_index(const Operator& op, std::string_view variant);

/// dims[i] as double / as size_t.
[[nodiscard]] inline double d(const CaseSpec& c, std::size_t i) { return static_cast<double>(c.dims.at(i)); }

}  // namespace gpuscope::bench::ops::detail
