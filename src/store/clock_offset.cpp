#include "store/clock_offset.hpp"

#include <algorithm>
#include <cstdlib>

namespace gpuscope::store {
namespace {

// The lower median (an element of the sample, no rounding); `v` is reordered.
[[nodiscard]] std::int64_t median(std::vector<std::int64_t>& v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

[[nodiscard]] std::size_t common_instances(const RankEnds& ranks) {
  if (ranks.empty()) return 0;
  std::size_t n = ranks.front().size();
  for (const auto& r : ranks) n = std::min(n, r.size());
  return n;
}

// Median end over the ranks of instance k.
[[nodiscard]] std::int64_t instance_end(const RankEnds& ranks, std::size_t k) {
  std::vector<std::int64_t> ends;
  ends.reserve(ranks.size());
  for (const auto& r : ranks) ends.push_back(r[k]);
  return median(ends);
}

}  // namespace

ClockOffset estimate_clock_offset(const RankEnds& reference, const RankEnds& other) {
  const std::size_t n = std::min(common_instances(reference), common_instances(other));
  ClockOffset out;
  if (n == 0) return out;
  std::vector<std::int64_t> diffs;
  diffs.reserve(n);
  for (std::size_t k = 0; k < n; ++k) diffs.push_back(instance_end(reference, k) - instance_end(other, k));
  std::vector<std::int64_t> sorted = diffs;
  out.offset_ns = median(sorted);
  out.matched = n;
  std::vector<std::int64_t> residuals;
  residuals.reserve(n);
  for (std::int64_t d : diffs) residuals.push_back(std::llabs(d - out.offset_ns));
  out.residual_max_ns = *std::max_element(residuals.begin(), residuals.end());
  out.residual_median_ns = median(residuals);
  return out;
}

}  // namespace gpuscope::store
