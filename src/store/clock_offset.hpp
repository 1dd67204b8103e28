// clock_offset: how far one host's clock is from another's, estimated from moments that are
// the same on both (gpuscope merge, store/trace_merge.hpp).
//
// The moments: NCCL collective kernels. A collective (all-reduce, all-gather, ...) cannot end
// on one rank before the data of every rank has arrived, so its kernels end within a few
// microseconds of each other on every rank. The k-th NCCL kernel of each rank (a GPU of a
// process) is taken to be the same collective instance: this holds when every rank runs the
// same collectives in the same order and the traces start at the same collective (the whole
// run, or capture windows opened at the same step).
//
// Estimate: for each instance k found on every rank of both traces, the median end over the
// reference trace's ranks minus the median end over the other trace's ranks; the offset is
// the median of these differences (robust to a few mismatched instances). The residual of
// instance k is |difference_k - offset|; the median and the largest residual are the error
// left after the offset is applied (what the merged trace states).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace gpuscope::store {

/// One trace's NCCL kernel ends: per rank (a GPU of a process), ends in ns on that host's
/// clock, in the order the kernels started.
using RankEnds = std::vector<std::vector<std::int64_t>>;

struct ClockOffset {
  std::int64_t offset_ns = 0;                      // add to the other trace's timestamps to reach the reference's clock
  std::size_t matched = 0;                         // instances found on every rank of both traces; 0 = no estimate
  std::optional<std::int64_t> residual_median_ns;  // median |difference_k - offset|; nullopt when matched == 0
  std::optional<std::int64_t> residual_max_ns;     // largest |difference_k - offset|
};

/// The offset of `other` relative to `reference` (file comment). A trace without ranks, or a
/// rank with no NCCL kernel, gives matched = 0 and offset 0. Instances beyond the shortest
/// rank's count are left out.
[[nodiscard]] ClockOffset estimate_clock_offset(const RankEnds& reference, const RankEnds& other);

}  // namespace gpuscope::store
