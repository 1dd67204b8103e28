// Report transforms: the `--timeunit`, `--sort` and `--top` options of `gpuscope stats`,
// applied to any Report (core/report.hpp) after it is built, so no report implements
// them itself. Pure functions on values; no I/O.
//
//   convert_time_unit  every column whose unit is a time unit ("ns", "us", "ms", "s") and
//                      whose kind is ColumnKind::kQuantity is converted to `unit`, and its
//                      unit renamed. To a coarser unit an integer column becomes a real
//                      one (1234 ns → 1.234 us; the type follows the conversion, never
//                      the data, so csv/json readers see one type per column); to a
//                      finer unit integers stay integers (2 ms → 2000000 ns). Identifier
//                      columns, NULL and text cells are left alone; notes are not
//                      rewritten. Converting to the column's own unit changes nothing.
//   sort_rows          stable sort by the column named `column` (its name, or its
//                      header "Name (unit)", ASCII case-insensitive). Quantities
//                      descending (largest first), identifiers and text ascending; NULL
//                      and NaN cells last. Unknown column → std::invalid_argument naming
//                      the report and listing its columns.
//   keep_top_rows      keeps the first `n` rows (all if there are fewer). n < 0 →
//                      std::invalid_argument.
//
// Source: the option names and behaviour follow `nsys stats` (--timeunit) and
// `key_averages().table(sort_by=..., row_limit=...)` of torch.profiler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/report.hpp"

namespace gpuscope::core {

enum class TimeUnit { kNs, kUs, kMs, kS };

/// "ns", "us", "ms" or "s" → TimeUnit (also "usec", "msec", "sec", "nsec" as nsys spells
/// them, and "µs"). Anything else → std::invalid_argument: "unknown time unit 'x'
/// (valid: ns, us, ms, s)".
[[nodiscard]] TimeUnit parse_time_unit(std::string_view text);
/// The unit string a converted column carries: "ns", "us", "ms" or "s".
[[nodiscard]] std::string_view time_unit_name(TimeUnit unit);
/// Nanoseconds in one `unit` (1, 1e3, 1e6, 1e9).
[[nodiscard]] std::int64_t ns_per(TimeUnit unit);

/// Index of the column called `column` (name or "Name (unit)" header, case-insensitive);
/// nullopt if the report has none.
[[nodiscard]] std::optional<std::size_t> find_column(const Report& report, std::string_view column);

void convert_time_unit(Report& report, TimeUnit unit);
void sort_rows(Report& report, std::string_view column);
void keep_top_rows(Report& report, std::int64_t n);

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
