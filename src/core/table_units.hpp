// table_units: how a table lays out a column of times or sizes, and how it shortens long
// names — the layout half of "one spelling per unit" (core/units.hpp formats single values
// for notes; render/report_render.hpp uses these for table and markdown columns).
// Pure functions: no I/O, no locale; never throw.
//
// Units per column, as torch.profiler's key_averages().table() scales times: one unit per
// column, chosen from the column's values, the header saying it ("Total Time (ms)").
//   Time columns ("ns", "us", "µs", "ms", "s") show in ns, µs, ms or s; size columns
//   ("bytes", "B", "KB", "MB", "GB", "TB"; powers of 1000, as nsys's MB) in B, KB, MB, GB or
//   TB. The unit is the largest in which the column's largest magnitude is at least 1
//   (443,378,042 ns → "ms": 443.4 ms; 4e-6 MB → "B": 4 B). Binary sizes (MiB), rates and
//   other units are not scaled. csv and json never scale: they keep the column's own unit.
//
// Names: a text longer than the width is cut in the middle, keeping its start and its end
// ("void at::native::elementwise_kernel<128, 2, …(int, T3)#1}>(int, T3)"); two different
// names that would read the same show instead the part around where they first differ.
//
// Examples:
//   column_scale("ns", 443378042) = {"ms", 1e-6}     column_scale("MB", 4e-6) = {"B", 1e6}
//   column_scale("us", 0) = {"µs", 1}                column_scale("GB/s", 5) = {"GB/s", 1}
//   cell_decimals(0.0042, 1) = 4                     cell_decimals(12.5, 1) = 1
//   cut_middle("abcdefghij", 5) = "ab…ij"            cut_around("abcdefghij", 5, 5) = "…efg…"
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpuscope::core::units {

enum class UnitFamily { kNone, kTime, kSize };

/// The family of a Report column unit (list above); kNone for any other unit.
[[nodiscard]] UnitFamily unit_family(std::string_view unit);

struct ColumnScale {
  std::string unit;     // the display unit: "ns", "µs", "ms", "s", "B", "KB", "MB", "GB", "TB"
  double factor = 1.0;  // display value = value in the column's unit × factor
};

/// The display unit of a column in `unit` whose largest finite magnitude is `largest`
/// (rule above). A column of zeros or NaN keeps its own unit ("us" shows as "µs", "bytes"
/// as "B"); a largest value below 1 ns or 1 B gives ns or B. {unit, 1} for a unit of no family.
[[nodiscard]] ColumnScale column_scale(std::string_view unit, double largest);

/// Decimals for one cell of a scaled column: `column_decimals`, or more when that would
/// show a non-zero `value` with fewer than 2 significant digits, so a small value never
/// prints as "0.0000" (0.0042 with 1 decimal → 4 decimals, "0.0042"); at most 9.
[[nodiscard]] int cell_decimals(double value, int column_decimals);

/// Length of `text` in code points (UTF-8 continuation bytes do not count).
[[nodiscard]] std::size_t code_points(std::string_view text);

/// `text` cut to `width` code points (at least 5) with "…" in the middle: the first
/// width / 2 and the last (width - 1) / 2 code points. Text that fits, or width 0, as is.
[[nodiscard]] std::string cut_middle(std::string_view text, std::size_t width);

/// `text` cut to `width` code points (at least 5) around code point `at`: "…" + the code
/// points around `at` + "…" (one "…" when `at` is near an end). Text that fits, or width 0, as is.
[[nodiscard]] std::string cut_around(std::string_view text, std::size_t width, std::size_t at);

}  // namespace gpuscope::core::units
