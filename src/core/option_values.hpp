// option_values: the values gpuscope's command-line options take — durations, whole-number
// counts, real numbers (rates, factors, fractions) and sizes — parsed and range-checked in
// one place. Pure functions: no I/O, no CLI library, no locale; they never throw.
// cli/option_checks.hpp turns each into a CLI11 validator, so a bad value is refused while
// the command line is parsed, before anything touches a file or the GPU driver.
//
// Every parser returns an OptionValue: the value, or `error`, one sentence that quotes the
// text, says what is wrong and gives an example of a good value. The sentence does not name
// the option: the caller prefixes it ("--duration: 'nan' is not a duration; give e.g. 30s
// or 250ms"; CLI11 does this for validators, option_error() for everyone else).
//
// Refused everywhere: empty text, "nan", "inf" and every non-finite number, trailing
// garbage ("30x"), a number that does not fit the result type (a duration beyond 2^63 - 1
// ns, about 292 years; a count beyond 2^63 - 1), and anything outside the limits the
// option states (negative values where they mean nothing, 0 where it means nothing).
//
// Grammar (ASCII; leading and trailing spaces ignored):
//   duration  NUMBER [" "] [UNIT]   UNIT: ns, us (or µs), ms, s, min, h; no unit: the
//             option's bare unit (seconds for --duration, ms for --flush-period). NUMBER
//             is a decimal with optional fraction and exponent ("2.5", "1e3"). Rounded to
//             the nearest ns.
//   count     [-]digits             a whole number ("10"; no sign, exponent or fraction).
//   real      decimal               "0.005", "6.1e14", "-2" (the limits say what is allowed).
//   size      digits | digits "^" digits | digits SUFFIX, SUFFIX: k or KiB (2^10), M or MiB
//             (2^20), G or GiB (2^30), T or TiB (2^40): "4096", "2^20", "64MiB", "1k".
//             Decimal "KB/MB/GB" are refused with a hint (1 MB is 10^6 bytes in gpuscope's
//             reports, 2^20 here: one spelling avoids the mix-up).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::core {

/// A parsed value, or why the text was refused (see the file comment).
template <class T>
struct [[nodiscard]] OptionValue {
  std::optional<T> value;
  std::string error;  // empty on success
  [[nodiscard]] bool ok() const { return value.has_value(); }
};

inline constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

struct DurationLimits {
  std::int64_t min_ns = 0;                    // inclusive
  std::int64_t max_ns = kMaxInt64;            // inclusive
  std::int64_t bare_unit_ns = 1'000'000'000;  // what a number without a unit counts (here: s)
  std::string_view example = "30s or 250ms";
};

struct CountLimits {
  std::int64_t min = 0;          // inclusive
  std::int64_t max = kMaxInt64;  // inclusive
  std::string_view example = "10";
};

struct RealLimits {
  double min = -std::numeric_limits<double>::max();
  double max = std::numeric_limits<double>::max();
  bool min_inclusive = true;
  bool max_inclusive = true;
  std::string_view example = "1.5";
};

struct SizeLimits {
  std::int64_t min = 1;                      // inclusive
  std::int64_t max = std::int64_t{1} << 62;  // inclusive
  std::string_view example = "4096, 2^20 or 64MiB";
};

/// A duration → integer nanoseconds. "30s" → 30'000'000'000; "250ms" → 250'000'000;
/// "2.5" → 2'500'000'000 with the default bare unit (s). Refuses what the file comment
/// says and values outside [min_ns, max_ns].
[[nodiscard]] OptionValue<std::int64_t> parse_duration_ns(std::string_view text, const DurationLimits& limits = {});

/// A whole number in [min, max]. "10" → 10; "1e3", "1.0", "nan", "" are refused.
[[nodiscard]] OptionValue<std::int64_t> parse_count(std::string_view text, const CountLimits& limits = {});

/// A finite real number within the limits. "0.005" → 0.005; "nan", "inf", "1e999" refused.
[[nodiscard]] OptionValue<double> parse_real(std::string_view text, const RealLimits& limits = {});

/// A size (bytes or elements) in [min, max]. "64MiB" → 67'108'864; "2^20" → 1'048'576.
[[nodiscard]] OptionValue<std::int64_t> parse_size(std::string_view text, const SizeLimits& limits = {});

/// "OPTION: ERROR" — the message of a refused value for callers outside CLI11.
[[nodiscard]] std::string option_error(std::string_view option, std::string_view error);

/// The limits as the error messages and --help state them: "0s to 1000000s", "1 to 4096",
/// "above 0", "0 to 1".
[[nodiscard]] std::string range_text(const DurationLimits& limits);
[[nodiscard]] std::string range_text(const CountLimits& limits);
[[nodiscard]] std::string range_text(const RealLimits& limits);
[[nodiscard]] std::string range_text(const SizeLimits& limits);

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
