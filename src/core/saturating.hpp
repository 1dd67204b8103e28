// core/saturating: 64-bit integer sums and differences of values read from a trace.
//
// Times (ns), byte counts and grid products come from a file gpuscope did not write
// itself: a damaged or foreign trace can hold any 64-bit value, and a sum of two of them
// would be signed overflow (undefined behaviour; UBSan fails CI on it, the fuzzers find
// it). These saturate at INT64_MIN / INT64_MAX instead: a real trace never comes near
// (2^63 ns is 292 years), so results are exact for it and merely absurd, never undefined,
// for a damaged one. Built on __builtin_add_overflow / __builtin_sub_overflow (GCC, clang).
#pragma once

#include <cstdint>
#include <limits>

namespace gpuscope::core {

/// a + b, clamped to [INT64_MIN, INT64_MAX].
[[nodiscard]] constexpr std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

/// a - b, clamped to [INT64_MIN, INT64_MAX] (e.g. end_ns - start_ns of a damaged row).
[[nodiscard]] constexpr std::int64_t sat_sub(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

/// acc += a - b, saturating at each step: a sum of durations.
constexpr void add_span(std::int64_t& acc, std::int64_t end, std::int64_t start) {
  acc = sat_add(acc, sat_sub(end, start));
}

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
