#include "core/table_units.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>

namespace gpuscope::core::units {
namespace {

struct Step {
  std::string_view name;   // as a Report column spells it
  std::string_view shown;  // as a table shows it
  double base;             // in ns or bytes
};
constexpr std::array<Step, 4> kTimeSteps{{{"ns", "ns", 1}, {"us", "µs", 1e3}, {"ms", "ms", 1e6}, {"s", "s", 1e9}}};
constexpr std::array<Step, 5> kSizeSteps{
    {{"B", "B", 1}, {"KB", "KB", 1e3}, {"MB", "MB", 1e6}, {"GB", "GB", 1e9}, {"TB", "TB", 1e12}}};

const Step* find_step(std::string_view unit) {
  if (unit == "µs") return &kTimeSteps[1];
  if (unit == "bytes") return &kSizeSteps[0];
  for (const Step& s : kTimeSteps)
    if (s.name == unit) return &s;
  for (const Step& s : kSizeSteps)
    if (s.name == unit) return &s;
  return nullptr;
}

// Byte offset of code point `n` of `s` (s.size() past the end).
std::size_t offset_of(std::string_view s, std::size_t n) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (seen == n) return i;
      ++seen;
    }
  }
  return s.size();
}

// Code points [from, from + n) of `s`.
std::string points(std::string_view s, std::size_t from, std::size_t n) {
  const std::size_t a = offset_of(s, from);
  return std::string(s.substr(a, offset_of(s, from + n) - a));
}

}  // namespace

UnitFamily unit_family(std::string_view unit) {
  const Step* s = find_step(unit);
  if (s == nullptr) return UnitFamily::kNone;
  return s >= kTimeSteps.data() && s < kTimeSteps.data() + kTimeSteps.size() ? UnitFamily::kTime : UnitFamily::kSize;
}

ColumnScale column_scale(std::string_view unit, double largest) {
  const Step* own = find_step(unit);
  if (own == nullptr) return {std::string(unit), 1.0};
  const std::span<const Step> steps =
      unit_family(unit) == UnitFamily::kTime ? std::span<const Step>(kTimeSteps) : std::span<const Step>(kSizeSteps);
  const double in_base = std::isfinite(largest) ? std::fabs(largest) * own->base : 0.0;
  if (in_base == 0.0) return {std::string(own->shown), 1.0};
  const Step* pick = &steps.front();  // below 1 ns or 1 B
  for (const Step& s : steps)
    if (in_base >= s.base) pick = &s;
  return {std::string(pick->shown), own->base / pick->base};
}

int cell_decimals(double value, int column_decimals) {
  if (!std::isfinite(value) || value == 0.0) return column_decimals;
  const int two_digits = 1 - static_cast<int>(std::floor(std::log10(std::fabs(value))));  // 2 significant digits
  return std::clamp(two_digits, column_decimals, std::max(column_decimals, 9));
}

std::size_t code_points(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string cut_middle(std::string_view text, std::size_t width) {
  const std::size_t n = code_points(text);
  if (width == 0 || n <= width) return std::string(text);
  width = std::max<std::size_t>(width, 5);
  const std::size_t head = width / 2, tail = (width - 1) / 2;
  return points(text, 0, head) + "…" + points(text, n - tail, tail);
}

std::string cut_around(std::string_view text, std::size_t width, std::size_t at) {
  const std::size_t n = code_points(text);
  if (width == 0 || n <= width) return std::string(text);
  width = std::max<std::size_t>(width, 5);
  // A window of width - 2 code points centred on `at`, "…" on each side that is cut.
  const std::size_t half = (width - 2) / 2;
  if (at <= half) return points(text, 0, width - 1) + "…";
  if (at + (width - 1 - half) >= n) return "…" + points(text, n - (width - 1), width - 1);
  return "…" + points(text, at - half, width - 2) + "…";
}

}  // namespace gpuscope::core::units
