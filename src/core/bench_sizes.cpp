#include "core/bench_sizes.hpp"

#include "core/option_values.hpp"

#include <stdexcept>
#include <string>

namespace gpuscope::core {
namespace {

constexpr std::int64_t kMaxValue = std::int64_t{1} << 62;
constexpr std::string_view kSyntax =
    "sizes are comma-separated numbers or shapes (4096, 64x4096x4096) and ranges A:B[:FACTOR] "
    "(2^10:2^30 doubles from 2^10 to 2^30); numbers may be written 2^K or with a suffix k, M, G";

[[noreturn]] void fail(std::string_view item, std::string_view why) {
  throw std::invalid_argument("--sizes '" + std::string(item) + "': " + std::string(why) + " (" + std::string(kSyntax) +
                              ")");
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

// One number of a size list: core/option_values' size grammar (digits, 2^K, k/M/G/T
// suffixes = 2^10/2^20/2^30/2^40), 1 to 2^62.
std::int64_t parse_num(std::string_view text, std::string_view item) {
  const OptionValue<std::int64_t> v = parse_size(text, SizeLimits{1, kMaxValue, "4096, 2^20 or 64k"});
  if (!v.ok()) fail(item, v.error);
  return *v.value;
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
