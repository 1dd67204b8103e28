// Internal: small helpers the diagnosis reports share to fill cells.
// Notes are plain text (render/ prints them as they are); numbers in them carry units and
// are formatted by core/units.hpp (units::percent_of, units::duration_ns, units::ns_count),
// the one spelling of every unit.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "core/report.hpp"

namespace gpuscope::analyze::detail {

/// A real cell, or NULL for NaN and infinities (an undefined statistic).
[[nodiscard]] inline Cell real_or_null(double v) {
  return std::isnan(v) || std::isinf(v) ? Cell{std::monostate{}} : Cell{v};
}

/// `part / whole × 100` as a cell; NULL when `whole` is 0 (never divides by zero).
[[nodiscard]] inline Cell percent_cell(std::int64_t part, std::int64_t whole) {
  if (whole <= 0) return std::monostate{};
  return static_cast<double>(part) / static_cast<double>(whole) * 100.0;
}

}  // namespace gpuscope::analyze::detail
