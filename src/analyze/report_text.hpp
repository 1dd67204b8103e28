// Internal: small helpers the diagnosis reports share to fill cells and word their notes.
// Notes are plain text (render/ prints them as they are); numbers in them carry units.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
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

/// A fraction (0.153) as a percentage for a note: whole percent ("15 %"), one decimal
/// below 10 % so small shares are not "0 %" ("0.5 %").
[[nodiscard]] inline std::string percent_text(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, fraction < 0.1 ? "%.1f %%" : "%.0f %%", fraction * 100.0);
  return buf;
}

/// A duration for a note: "12.3 us" below 1 ms, else "4.567 ms".
[[nodiscard]] inline std::string duration_text(std::int64_t ns) {
  char buf[32];
  if (ns >= 1'000'000) {
    std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f us", static_cast<double>(ns) / 1e3);
  }
  return buf;
}

/// A real for a note with `decimals` decimals ("12.35").
[[nodiscard]] inline std::string real_text(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

/// A per-call cost in ns for a note: whole ns when whole ("4000 ns"), else one decimal
/// ("812.5 ns").
[[nodiscard]] inline std::string cost_ns_text(double ns) {
  return real_text(ns, ns == std::floor(ns) ? 0 : 1) + " ns";
}

}  // namespace gpuscope::analyze::detail
