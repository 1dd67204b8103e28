#include "core/option_values.hpp"

#include <charconv>
#include <cmath>
#include <system_error>

namespace gpuscope::core {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

template <class T>
OptionValue<T> refuse(std::string error) {
  return OptionValue<T>{std::nullopt, std::move(error)};
}

std::string number_text(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

// ns in the largest of s, ms, us, ns that divides it exactly: 1'000'000'000'000'000 → "1000000s".
std::string ns_text(std::int64_t ns) {
  if (ns == kMaxInt64) return "2^63-1ns (about 292 years)";
  if (ns != 0 && ns % 1'000'000'000 == 0) return std::to_string(ns / 1'000'000'000) + "s";
  if (ns != 0 && ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + "ms";
  if (ns != 0 && ns % 1'000 == 0) return std::to_string(ns / 1'000) + "us";
  return ns == 0 ? std::string("0s") : std::to_string(ns) + "ns";
}

// A decimal number at the start of `s` (optional '+' or '-'; from_chars takes no '+').
// Returns the characters used, 0 when there is no number; `out_of_range` when it overflows
// a double (1e999).
std::size_t leading_double(std::string_view s, double& value, bool& out_of_range) {
  out_of_range = false;
  std::size_t skip = 0;
  if (!s.empty() && s.front() == '+') {
    if (s.size() < 2 || s[1] == '-' || s[1] == '+') return 0;
    skip = 1;
  }
  const char* begin = s.data() + skip;
  const auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), value, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) {
    out_of_range = true;
    return static_cast<std::size_t>(ptr - s.data());
  }
  if (ec != std::errc() || ptr == begin) return 0;
  return static_cast<std::size_t>(ptr - s.data());
}

std::string with_example(std::string_view example) { return "give e.g. " + std::string(example); }

}  // namespace

std::string option_error(std::string_view option, std::string_view error) {
  return std::string(option) + ": " + std::string(error);
}

std::string range_text(const DurationLimits& l) {
  if (l.max_ns == kMaxInt64) return "at least " + ns_text(l.min_ns);
  return ns_text(l.min_ns) + " to " + ns_text(l.max_ns);
}

std::string range_text(const CountLimits& l) {
  if (l.max == kMaxInt64) return "at least " + std::to_string(l.min);
  return std::to_string(l.min) + " to " + std::to_string(l.max);
}

std::string range_text(const SizeLimits& l) {
  return std::to_string(l.min) + " to " +
         (l.max == (std::int64_t{1} << 62) ? std::string("2^62") : std::to_string(l.max));
}

std::string range_text(const RealLimits& l) {
  constexpr double kBig = std::numeric_limits<double>::max();
  const bool has_min = l.min > -kBig, has_max = l.max < kBig;
  const std::string lo = (l.min_inclusive ? "at least " : "above ") + number_text(l.min);
  const std::string hi = (l.max_inclusive ? "at most " : "below ") + number_text(l.max);
  if (has_min && has_max) {
    if (l.min_inclusive && l.max_inclusive) return number_text(l.min) + " to " + number_text(l.max);
    return lo + " and " + hi;
  }
  if (has_min) return lo;
  if (has_max) return hi;
  return "any finite number";
}

OptionValue<std::int64_t> parse_duration_ns(std::string_view text, const DurationLimits& l) {
  const std::string_view s = trimmed(text);
  const std::string give = "; " + with_example(l.example);
  double v = 0;
  bool overflow = false;
  const std::size_t used = leading_double(s, v, overflow);
  if (used == 0) return refuse<std::int64_t>(quoted(text) + " is not a duration" + give);
  const std::string_view unit = trimmed(s.substr(used));
  double scale = static_cast<double>(l.bare_unit_ns);
  if (unit == "ns") {
    scale = 1.0;
  } else if (unit == "us") {
    scale = 1e3;
  } else if (unit == "ms") {
    scale = 1e6;
  } else if (unit == "s") {
    scale = 1e9;
  } else if (!unit.empty()) {
    return refuse<std::int64_t>(quoted(text) + " is not a duration (unknown unit " + quoted(unit) +
                                "; units: ns, us, ms, s)" + give);
  }
  if (!overflow && !std::isfinite(v)) return refuse<std::int64_t>(quoted(text) + " is not a duration" + give);
  const std::string range = ": give " + range_text(l) + ", e.g. " + std::string(l.example);
  if (std::signbit(v) && v != 0 && l.min_ns >= 0) return refuse<std::int64_t>(quoted(text) + " is negative" + range);
  // Whole numbers exactly (a double has 53 bits: 9223372036854775807ns would round up).
  const std::string_view number = s.substr(0, used);
  if (number.find_first_not_of("+0123456789") == std::string_view::npos) {
    std::int64_t whole = 0;
    const auto [p, ec] =
        std::from_chars(number.data() + (number.front() == '+' ? 1 : 0), number.data() + number.size(), whole);
    const auto factor = static_cast<std::int64_t>(scale);
    if (ec == std::errc() && factor > 0 && whole <= kMaxInt64 / factor) {
      const std::int64_t n = whole * factor;
      if (n < l.min_ns || n > l.max_ns) return refuse<std::int64_t>(quoted(text) + " is out of range" + range);
      return OptionValue<std::int64_t>{n, {}};
    }
  }
  const double ns = overflow ? HUGE_VAL : std::round(v * scale);
  // 2^63 as a double; anything at or above it does not fit an int64 of ns.
  if (!std::isfinite(ns) || std::fabs(ns) >= 9223372036854775808.0)
    return refuse<std::int64_t>(quoted(text) + " does not fit in 64-bit nanoseconds (about 292 years)" + range);
  const auto n = static_cast<std::int64_t>(ns);
  if (n < l.min_ns || n > l.max_ns) return refuse<std::int64_t>(quoted(text) + " is out of range" + range);
  return OptionValue<std::int64_t>{n, {}};
}

OptionValue<std::int64_t> parse_count(std::string_view text, const CountLimits& l) {
  const std::string_view s = trimmed(text);
  const std::string range = ": give " + range_text(l) + ", e.g. " + std::string(l.example);
  std::string_view body = s;
  if (!body.empty() && body.front() == '+') body.remove_prefix(1);
  const bool negative = body.data() == s.data() && !body.empty() && body.front() == '-';  // no "+-1"
  const std::string_view digits = negative ? body.substr(1) : body;
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos)
    return refuse<std::int64_t>(quoted(text) + " is not a whole number; " + with_example(l.example));
  const char* begin = body.data();
  const char* end = body.data() + body.size();
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec == std::errc::result_out_of_range) {
    if (*begin == '-' && l.min >= 0) return refuse<std::int64_t>(quoted(text) + " is negative" + range);
    return refuse<std::int64_t>(quoted(text) + " is out of range" + range);
  }
  if (ec != std::errc() || ptr != end)
    return refuse<std::int64_t>(quoted(text) + " is not a whole number; " + with_example(l.example));
  if (v < 0 && l.min >= 0) return refuse<std::int64_t>(quoted(text) + " is negative" + range);
  if (v < l.min || v > l.max) return refuse<std::int64_t>(quoted(text) + " is out of range" + range);
  return OptionValue<std::int64_t>{v, {}};
}

OptionValue<double> parse_real(std::string_view text, const RealLimits& l) {
  const std::string_view s = trimmed(text);
  const std::string range = ": give " + range_text(l) + ", e.g. " + std::string(l.example);
  double v = 0;
  bool overflow = false;
  const std::size_t used = leading_double(s, v, overflow);
  if (used == 0 || used != s.size())
    return refuse<double>(quoted(text) + " is not a number; " + with_example(l.example));
  if (overflow) return refuse<double>(quoted(text) + " is out of range" + range);
  if (!std::isfinite(v)) return refuse<double>(quoted(text) + " is not a finite number; " + with_example(l.example));
  const bool below = l.min_inclusive ? v < l.min : v <= l.min;
  const bool above = l.max_inclusive ? v > l.max : v >= l.max;
  if (below && v < 0 && l.min >= 0) return refuse<double>(quoted(text) + " is negative" + range);
  if (below || above) return refuse<double>(quoted(text) + " is out of range" + range);
  return OptionValue<double>{v, {}};
}

OptionValue<std::int64_t> parse_size(std::string_view text, const SizeLimits& l) {
  const std::string_view s = trimmed(text);
  const std::string range = ": give " + range_text(l) + ", e.g. " + std::string(l.example);
  const auto not_a_size = [&](std::string_view why) {
    return refuse<std::int64_t>(quoted(text) + " is not a size" + std::string(why) + "; " + with_example(l.example));
  };
  const auto too_large = [&] { return refuse<std::int64_t>(quoted(text) + " is out of range" + range); };
  // The leading digits.
  std::size_t n = 0;
  while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
  if (n == 0) {
    if (!s.empty() && s.front() == '-') return refuse<std::int64_t>(quoted(text) + " is negative" + range);
    return not_a_size("");
  }
  std::int64_t value = 0;
  if (auto [p, ec] = std::from_chars(s.data(), s.data() + n, value); ec != std::errc()) return too_large();
  const std::string_view rest = s.substr(n);
  if (!rest.empty() && rest.front() == '^') {
    const std::string_view exp_text = rest.substr(1);
    std::int64_t exp = 0;
    const auto [p, ec] = std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp);
    if (exp_text.empty() || exp_text.front() == '-' || p != exp_text.data() + exp_text.size())
      return not_a_size(" (2^K needs a whole K)");
    if (ec != std::errc()) return too_large();
    const std::int64_t base = value;
    value = 1;
    for (std::int64_t i = 0; i < exp && base != 1; ++i) {
      if (base == 0) {
        value = 0;
        break;
      }
      if (value > kMaxInt64 / base) return too_large();
      value *= base;
    }
  } else if (!rest.empty()) {
    int shift = -1;
    if (rest == "k" || rest == "K" || rest == "Ki" || rest == "KiB") shift = 10;
    if (rest == "M" || rest == "Mi" || rest == "MiB") shift = 20;
    if (rest == "G" || rest == "Gi" || rest == "GiB") shift = 30;
    if (rest == "T" || rest == "Ti" || rest == "TiB") shift = 40;
    if (shift < 0) {
      if (rest == "KB" || rest == "kB" || rest == "MB" || rest == "GB" || rest == "TB")
        return not_a_size(" (write KiB, MiB, GiB or TiB for powers of 2, or the plain number)");
      return not_a_size(" (unknown suffix " + quoted(rest) + "; suffixes: k/KiB, M/MiB, G/GiB, T/TiB)");
    }
    if (value > (kMaxInt64 >> shift)) return too_large();
    value <<= shift;
  }
  if (value < l.min || value > l.max) return too_large();
  return OptionValue<std::int64_t>{value, {}};
}

}  // namespace gpuscope::core
