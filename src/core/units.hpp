// units: the one place where a number becomes text with a unit. Every time, byte count,
// rate and percentage that a gpuscope command prints for people (notes, explanations,
// chart labels, CLI messages) is formatted here, so each unit has one spelling and one
// rounding rule. Values stay raw (s, bytes, B/s, FLOP/s, %) until a printer calls these.
// Pure functions: no I/O, no locale (the decimal point is always '.'); never throw.
//
// Spellings (SI, one per unit): s with prefixes p n µ m k M G T P E ("µ" is U+00B5, UTF-8),
// B (bytes), B/s, FLOP/s, FLOP/B, "%" after a space ("42 %"). There is no "us" in
// formatted text: 2.5e-6 s prints "2.5 µs". One exception, memory sizes (memory_size()):
// KiB, MiB, GiB (powers of 1024), the unit allocators and their granules are counted in.
//   Not formatted here: the column units of a Report ("ns", "us", "ms", "MB", "GB/s" in a
//   CSV header such as "Duration (us)") and the --timeunit/--from values a user types
//   (ns|us|ms|s). Those are ASCII identifiers that scripts and the committed golden files
//   rely on; a column holds a raw number in its declared unit.
//
// Rounding rules:
//   si()       `significant` significant digits (default 3), rounded to nearest on the exact
//              binary value (printf rounding), trailing zeros dropped; the prefix is
//              the one that leaves 1 <= mantissa < 1000 *after* rounding (999.6 → "1 k",
//              not "1000"). Prefixes stop at p and E (1e-14 s → "0.01 ps").
//   percent()  one decimal below 9.95 % in magnitude ("0.5 %", "9.9 %"), whole percent
//              from there ("10 %", "101 %"): small shares are never "0 %".
//   real3()    a plain number with about 3 significant digits, fixed decimals by magnitude:
//              >= 100 → 0 decimals ("916"), >= 10 → 1 ("12.5"), else 2 ("0.24", "5.00").
//   ns_count() whole ns when whole ("4000 ns"), else one decimal ("812.5 ns"): for a cost
//              that a note quotes next to the ns columns of the same report.
// Special values: NaN → "-" (every function); ±infinity → "inf unit" / "-inf unit" from
// si() and its wrappers, "-" from percent() and real3(); 0 → "0 unit" ("0 s", "0 B").
// Negative values keep their sign and use the magnitude's prefix and decimals
// (-1.5e-3 s → "-1.5 ms", -50 % → "-50 %").
//
// Examples:
//   duration(0) = "0 s"            duration_ns(999) = "999 ns"    duration_ns(1000) = "1 µs"
//   duration(1.5e-3) = "1.5 ms"    duration(2.46e-6) = "2.46 µs"  duration_ns(45'000) = "45 µs"
//   bytes(1073741824) = "1.07 GB"  byte_rate(2.98e12) = "2.98 TB/s"  memory_size(2^31) = "2 GiB"
//   flop_rate(1e12) = "1 TFLOP/s"  si(0.5e6, "FLOP/s") = "500 kFLOP/s"
//   percent(0.5) = "0.5 %"         percent(99.4) = "99 %"        percent_of(0.153) = "15 %"
//   real3(916.2) = "916"           ns_count(4000) = "4000 ns"     ns_count(812.5) = "812.5 ns"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuscope::core::units {

/// `value` `unit` with an SI prefix and `significant` digits (rules above):
/// (3.352e12, "B/s") → "3.35 TB/s", (1e12, "FLOP/s") → "1 TFLOP/s", (2.5e-6, "s") → "2.5 µs",
/// (0, "s") → "0 s", (NaN, any) → "-". An empty unit gives "1.5 k", "0".
[[nodiscard]] std::string si(double value, std::string_view unit, int significant = 3);

/// The current UTC time as ISO 8601 to the second, e.g. "2026-11-27T02:10:00Z" (results' and
/// sessions' timestamps).
[[nodiscard]] std::string utc_now_iso8601();

/// A time in seconds: si(seconds, "s", significant). 1.5e-3 → "1.5 ms".
[[nodiscard]] std::string duration(double seconds, int significant = 3);

/// A time in integer nanoseconds: duration(ns × 1e-9). 999 → "999 ns", 1000 → "1 µs".
[[nodiscard]] std::string duration_ns(std::int64_t ns, int significant = 3);

/// A byte count, decimal prefixes: si(bytes, "B"). 2^30 → "1.07 GB", 512 → "512 B".
[[nodiscard]] std::string bytes(double bytes, int significant = 3);

/// A memory size, binary prefixes (as CUDA, PyTorch and nvidia-smi print memory): B, KiB,
/// MiB, GiB, TiB, PiB, EiB (powers of 1024), `significant` digits and the rounding rule of
/// si() with 1024 in place of 1000 (1023.9 MiB → "1 GiB"; a mantissa may have 4 digits below
/// that: 1000 MiB → "1000 MiB"). 2^21 → "2 MiB", 1.5 × 2^30 → "1.5 GiB", 512 → "512 B".
[[nodiscard]] std::string memory_size(double bytes, int significant = 3);

/// Bytes per second: si(v, "B/s"). 2.98e12 → "2.98 TB/s".
[[nodiscard]] std::string byte_rate(double bytes_per_s, int significant = 3);

/// FLOP per second: si(v, "FLOP/s"). 6.7e13 → "67 TFLOP/s".
[[nodiscard]] std::string flop_rate(double flop_per_s, int significant = 3);

/// A percentage given in percent: 0.5 → "0.5 %", 9.94 → "9.9 %", 9.95 → "10 %",
/// 100.6 → "101 %". NaN or infinite → "-".
[[nodiscard]] std::string percent(double pct);

/// A fraction given as a share of 1, as a percentage: percent(fraction × 100).
/// 0.153 → "15 %", 0.005 → "0.5 %".
[[nodiscard]] std::string percent_of(double fraction);

/// A plain number with about 3 significant digits (rule above), no unit: 916.2 → "916",
/// 12.46 → "12.5", 0.2357 → "0.24", 5 → "5.00". NaN or infinite → "-".
[[nodiscard]] std::string real3(double value);

/// A per-call cost in nanoseconds, exact: 4000 → "4000 ns", 812.5 → "812.5 ns". NaN → "-".
[[nodiscard]] std::string ns_count(double ns);

}  // namespace gpuscope::core::units

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
