// Bench result files: BenchRun (core/bench_result.hpp) ↔ JSON, and its cases ↔ CSV.
// The schema is defined once, by bench_case_fields() below; docs/bench.md ("The result
// file") embeds bench_schema_markdown(), and a unit test checks the two agree.
//
// JSON: an object, keys in this order:
//   {"format_version": 1, "gpuscope_version", "measured_at", "device": {DeviceFacts fields,
//    exactly as a machine profile writes them}, "profile_path",
//    "cases": [{op, variant, dtype, params, size,
//               "work": {bytes_read, bytes_written, flops, compute_ceiling},
//               "timing": {mode, batch, samples, min_s, median_s, mean_s, stddev_s,
//                          rel_stderr, stop, sm_clock_mhz_before, sm_clock_mhz_after,
//                          throttled_samples, p90_s, p99_s},
//               "derived": {bandwidth, flop_rate, intensity, bound, ceiling, ceiling_value,
//                           pct_of_ceiling, ceiling_source},
//               verified, max_abs_error, note}],
//    "warnings": [...]}
// Numbers in SI units (s, B, FLOP, B/s, FLOP/s, FLOP/B; pct_of_ceiling in %, rel_stderr a
// fraction); unknown (NaN) and infinities ↔ null.
//
// CSV: a header row of the case fields' names (the JSON keys without their group,
// "median_s"), then one row per case, RFC 4180 quoting, numbers with 17 significant
// digits (exact round trip), unknown → empty field, booleans "true"/"false". The run's
// device and warnings are in the JSON only.
//
// Reading validates; every error is a BenchResultError whose message names the file and,
// where one is at fault, the field ("cases[3].timing.mode") or the CSV line and column:
//   - missing or unreadable file, malformed JSON (line and column), not an object;
//   - format_version missing or not BenchRun::kFormatVersion: BenchResultVersionError
//     naming both versions;
//   - a required field missing (format_version, device, device.name, device.uuid, cases,
//     and the case fields marked required), a field of the wrong type, a negative count,
//     size or amount of work, a text field outside its allowed values (mode, stop, bound,
//     ceiling_source);
//   - two cases with the same op, variant, dtype, params and mode.
// Unknown keys are ignored (a newer gpuscope may add fields under the same version).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/bench_result.hpp"
#include "store/atomic_file.hpp"

namespace gpuscope::store {

class BenchResultError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The file's format_version is not BenchRun::kFormatVersion.
class BenchResultVersionError : public BenchResultError {
 public:
  BenchResultVersionError(const std::string& message, int found, int expected)
      : BenchResultError(message), m_found(found), m_expected(expected) {}
  [[nodiscard]] int found() const { return m_found; }
  [[nodiscard]] int expected() const { return m_expected; }

 private:
  int m_found;
  int m_expected;
};

enum class FieldType { kText, kReal, kInteger, kBool };

/// One field of a case: where it sits in the JSON, its type and unit, and what it means.
struct BenchCaseField {
  std::string_view group;  // "" (the case itself), "work", "timing" or "derived"
  std::string_view name;   // JSON key and CSV column
  FieldType type;
  std::string_view unit;     // "s", "B", "FLOP", "B/s", "%", ... ; "" for none
  bool required;             // must be present (null allowed for reals)
  bool non_negative;         // numbers: must be >= 0 when known
  std::string_view allowed;  // text fields with a fixed set: "cold|hot|graph"; "" = any
  std::string_view doc;
};

/// Every case field, in JSON and CSV order.
[[nodiscard]] std::span<const BenchCaseField> bench_case_fields();

/// The schema as markdown (a table per group), as docs/bench.md embeds it.
[[nodiscard]] std::string bench_schema_markdown();

/// The run as JSON (keys in the documented order; NaN and infinities as null).
[[nodiscard]] nlohmann::ordered_json bench_run_to_json(const BenchRun& run);

/// Validates and converts; `source` names the file (or "<string>") in error messages.
[[nodiscard]] BenchRun bench_run_from_json(const nlohmann::ordered_json& json, const std::string& source);

/// Reads and validates the bench result file at `path`.
[[nodiscard]] BenchRun read_bench_run(const std::filesystem::path& path);

/// Writes `run` to `path` (pretty-printed, newline at the end) atomically
/// (store/atomic_file.hpp). An existing file is replaced only with Overwrite::kReplace, else
/// OutputExistsError. Throws BenchResultError when the file cannot be written.
void write_bench_run(const BenchRun& run, const std::filesystem::path& path, Overwrite overwrite = Overwrite::kRefuse);

/// Writes the cases as CSV (header + one row per case) to `out`.
void write_bench_csv(const BenchRun& run, std::ostream& out);

/// Reads CSV written by write_bench_csv (columns in any order; unknown columns ignored;
/// the required fields' columns must be there). `source` names the file in errors.
[[nodiscard]] std::vector<BenchCase> read_bench_csv(std::istream& in, const std::string& source);

}  // namespace gpuscope::store
