#include "core/bench_sizes.hpp"

#include <stdexcept>
#include <string>

namespace gpuscope::core {
namespace {

constexpr std::int64_t kMaxValue = std::int64_t{1} << 62;
constexpr std::string_view kSyntax =
    "sizes are comma-separated numbers or shapes (4096, 64x4096x4096) and ranges A:B[:FACTOR] "
    "(2^10:2^30 doubles from 2^10 to 2^30); numbers may be written 2^K or with a suffix k, M, G";

[[noreturn]] void fail(std::string_view item, std::string_view why) {
  throw std::invalid_argument("--sizes '" + std::string(item) + "': " + std::string(why) + " (" +
                              std::string(kSyntax) + ")");
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(sep, start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

std::int64_t parse_digits(std::string_view digits, std::string_view item) {
  if (digits.empty()) fail(item, "a number is missing");
  std::int64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') fail(item, "'" + std::string(digits) + "' is not a number");
    if (v > kMaxValue / 10) fail(item, "a number is too large");
    v = v * 10 + (c - '0');
  }
  return v;
}

std::int64_t parse_num(std::string_view text, std::string_view item) {
  std::int64_t value = 0;
  if (const std::size_t caret = text.find('^'); caret != std::string_view::npos) {
    const std::int64_t base = parse_digits(text.substr(0, caret), item);
    const std::int64_t exp = parse_digits(text.substr(caret + 1), item);
    value = 1;
    for (std::int64_t i = 0; i < exp; ++i) {
      if (base != 0 && value > kMaxValue / base) fail(item, "a number is too large (> 2^62)");
      value *= base;
    }
  } else if (!text.empty() && (text.back() == 'k' || text.back() == 'M' || text.back() == 'G')) {
    const int shift = text.back() == 'k' ? 10 : text.back() == 'M' ? 20 : 30;
    value = parse_digits(text.substr(0, text.size() - 1), item);
    if (value > (kMaxValue >> shift)) fail(item, "a number is too large (> 2^62)");
    value <<= shift;
  } else {
    value = parse_digits(text, item);
  }
  if (value < 1) fail(item, "sizes must be >= 1");
  if (value > kMaxValue) fail(item, "a number is too large (> 2^62)");
  return value;
}

}  // namespace

std::vector<std::vector<std::int64_t>> parse_sizes(std::string_view text) {
  if (text.empty()) fail(text, "no sizes given");
  std::vector<std::vector<std::int64_t>> out;
  auto push = [&](std::vector<std::int64_t> shape, std::string_view item) {
    if (out.size() >= kMaxSizes) fail(item, "more than " + std::to_string(kMaxSizes) + " sizes");
    out.push_back(std::move(shape));
  };
  for (std::string_view item : split(text, ',')) {
    if (item.empty()) fail(text, "an empty item");
    if (item.find(':') != std::string_view::npos) {
      const std::vector<std::string_view> p = split(item, ':');
      if (p.size() > 3) fail(item, "a range is A:B or A:B:FACTOR");
      const std::int64_t a = parse_num(p[0], item), b = parse_num(p[1], item);
      const std::int64_t f = p.size() == 3 ? parse_num(p[2], item) : 2;
      if (a > b) fail(item, "the range's start is above its end");
      if (f < 2) fail(item, "the range's FACTOR must be >= 2");
      std::int64_t v = a;
      while (true) {
        push({v}, item);
        if (v > b / f) break;
        v *= f;
      }
      if (out.back().front() != b) push({b}, item);
    } else {
      std::vector<std::int64_t> shape;
      for (std::string_view n : split(item, 'x')) shape.push_back(parse_num(n, item));
      push(std::move(shape), item);
    }
  }
  return out;
}

}  // namespace gpuscope::core
