// check: the pieces every reference check of the operator suite shares — host rounding
// to a dtype, downloading outputs, choosing what to compare for large outputs, and
// tracking the error against a tolerance (→ Verification, operator.hpp).
//
// Large outputs: up to kFullCheckLimit elements everything is compared; above it,
// kSampleChunks chunks of kSampleChunkLength elements spread evenly over the output (the
// first and the last chunk included, so the tail that a vector loop handles separately is
// always checked), and Verification::note says so.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/ops/dtype.hpp"
#include "bench/ops/operator.hpp"

namespace gpuscope::bench::ops::check {

inline constexpr std::int64_t kFullCheckLimit = std::int64_t{1} << 26;
inline constexpr std::int64_t kSampleChunks = 64;
inline constexpr std::int64_t kSampleChunkLength = 4096;

/// `value` as stored in `dtype`: round to nearest even for f16/bf16 (the conversion the
/// GPU's __float2half_rn / __float2bfloat16_rn does); unchanged for f32/tf32.
[[nodiscard]] float round_to(DType dtype, float value);

/// Elements [first, first + count) of a device array of `dtype`, as doubles
/// (synchronous cudaMemcpy; throws CudaError).
[[nodiscard]] std::vector<double> download(const void* device, DType dtype, std::int64_t first, std::int64_t count);

struct Range {
  std::int64_t first = 0;
  std::int64_t count = 0;
};

/// What to compare of an output of n elements (see the file comment); sorted, disjoint.
[[nodiscard]] std::vector<Range> ranges_to_check(std::int64_t n);
/// Verification::note for ranges_to_check(n): "" when everything is checked.
[[nodiscard]] std::string ranges_note(std::int64_t n);

/// Accumulates |got − reference| against per-element tolerances.
class ErrorTracker {
 public:
  /// `what` names the output in failure messages ("y", "C").
  explicit ErrorTracker(std::string what) : m_what(std::move(what)) {}
  /// Compares one element; an element passes when |got − ref| <= tolerance (NaN fails).
  void add(std::int64_t index, double got, double ref, double tolerance);
  /// Like add, for an element named by text ("C(3,7)").
  void add(const std::string& where, double got, double ref, double tolerance);
  [[nodiscard]] Verification result(std::string note = {}) const;

 private:
  std::string m_what;
  double m_max_abs_error = 0;
  bool m_nan = false;
  std::int64_t m_checked = 0;
  std::int64_t m_failures = 0;
  std::string m_first_failure;
};

}  // namespace gpuscope::bench::ops::check
