// bench_sizes: the --sizes language of `gpuscope bench`. Pure functions, no I/O.
//
//   SIZES  := ITEM ("," ITEM)*
//   ITEM   := RANGE | TOKEN
//   RANGE  := NUM ":" NUM [":" FACTOR]   geometric: a, a·f, a·f², ... while <= b (b itself
//                                        always included when a <= b); FACTOR an integer
//                                        >= 2, default 2
//   TOKEN  := NUM ("x" NUM)*             one shape: "4096", "64x4096x4096"
//   NUM    := a size of core/option_values.hpp: digits | digits "^" digits | digits
//             k|M|G|T (×2^10, 2^20, 2^30, 2^40; also KiB, MiB, GiB, TiB)
// e.g. "2^10:2^30" → 2^10, 2^11, ..., 2^30; "2^12:2^28:4" → 2^12, 2^14, ...; "1000,3000";
// "8192x8192x8192". What the numbers of a token mean is the operator's business
// (bench/ops/operator.hpp, Operator::shape).
//
// Errors: std::invalid_argument whose message quotes the offending item and says what the
// syntax is (empty text, a number that is not positive, > 2^62, a range with a > b or a
// factor < 2, more than kMaxSizes sizes).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace gpuscope::core {

inline constexpr std::size_t kMaxSizes = 4096;

/// One shape per size, in the order written; each shape is 1 or more positive numbers.
[[nodiscard]] std::vector<std::vector<std::int64_t>> parse_sizes(std::string_view text);

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
