// memcpy_check: are the program's memory copies pageable, small, slow, or in the way of
// compute? A report of `gpuscope stats` (-r memcpy_check).
//
// One row per (Operation, SrcMemKd, DstMemKd) over the memcpys table, sorted by Total Time
// descending (ties by those three, ascending):
//   Operation          the nsys name of the copy kind ("[CUDA memcpy Host-to-Device]", ...)
//   SrcMemKd, DstMemKd memory kinds as the schema spells them ('pageable', 'pinned', 'device',
//                      'managed', ...; NULL kinds read 'unknown')
//   Count              copies
//   Total (bytes)      Σ bytes (a NULL size counts as 0)
//   Total Time (ns)    Σ (end_ns − start_ns)
//   Median, Best (GB/s) median and maximum over the row's copies of the achieved bandwidth
//                      bytes / (end_ns − start_ns) (bytes/ns = GB/s, 1 GB = 1e9 bytes, as
//                      cuda_gpu_trace's Throughput). Copies of zero duration or unknown size
//                      are left out; NULL when none is left.
//   Small              copies of fewer than kSmallCopyBytes (64 KiB) bytes: at that size the
//                      fixed cost of a copy (a few µs of launch and DMA setup) is as long as
//                      moving the bytes over PCIe (64 KiB at 25 GB/s ≈ 2.6 µs), so the
//                      achieved GB/s collapses; batch them
//   Sync               copies with is_async = 0 (cudaMemcpy and friends: the CPU waits)
//   Serialized         copies that serialize with compute (below)
//
// Definitions
//   Pageable copy: copy_kind 'HtoD', 'DtoH', 'HtoA' or 'AtoH' with src_kind or dst_kind
//     'pageable'. The driver stages it through a pinned bounce buffer: slower, and it cannot
//     overlap kernels.
//   Device copy: copy_kind 'DtoD', 'DtoA', 'AtoD', 'AtoA' or 'PtoP': GPU work at device memory
//     bandwidth, like a kernel. Never pageable, never serialized, never given host-memory advice.
//   Serialized copy: a copy that is not a device copy, during which the GPU computes nothing because of it, either
//     (a) synchronous (is_async = 0): the calling thread blocks until the copy ends and
//         enqueues no work meanwhile; or
//     (b) of nonzero duration with no kernel running at any instant of it on the same
//         physical GPU (any stream, any process; GPUs as in gpu_util). A copy that overlaps
//         a kernel even partly is not serialized by (b).
//     Serialized time = Σ durations of the serialized copies.
//
// Notes, in order (only those that apply):
//   - pageable copies (pageable_verdict, also top's): count, bytes, time and share of the
//     wall time; a warning when that share ≥ kPageableShareForWarning (1 %), else info. The
//     median GB/s of the pageable copies is set beside pinned copies' only at comparable
//     sizes: both sides' copies of ≥ kSmallCopyBytes, pinned ones of the directions that have
//     pageable copies (a 4-byte .item() read is not a pinned transfer to match).
//   - serialized copies (serialized_verdict, also top's) — count (sync / no kernel running),
//     time and share of the wall time (wall as gpu_util); a warning when that share ≥
//     kSerializedShareForWarning (5 %), else info.
//   - info: device copies — count, time, share of the wall time, median GB/s: GPU work, not
//     a transfer to hide.
//   - info: small copies — count and their median GB/s against the best seen.
//   - info: "verdict: ..." one plain-language sentence.
// No copies → no rows and one note: "no GPU activity in the capture range" when the trace
// has no kernel, memcpy or memset either, else "no memory copies in the capture range".
// Errors: store::DatabaseError if the database lacks the schema's tables.
#pragma once

#include <cstdint>
#include <vector>

#include "analyze/common/python_sites.hpp"
#include "analyze/nsys/verdict.hpp"
#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

/// Copies of fewer bytes than this count as small (64 KiB).
inline constexpr std::int64_t kSmallCopyBytes = 64 * 1024;
/// Serialized copy time, as a share of the wall time, from which memcpy_check and top warn.
inline constexpr double kSerializedShareForWarning = 0.05;
/// Pageable copy time, as a share of the wall time, from which memcpy_check and top warn.
inline constexpr double kPageableShareForWarning = 0.01;

/// The memcpy_check report (see the file comment).
[[nodiscard]] Report memcpy_check(store::Database& db);

namespace detail {

/// The whole-trace numbers behind memcpy_check's notes (definitions above). Also used by top.
struct MemcpyFindings {
  std::int64_t copies = 0;
  std::int64_t copy_ns = 0;   // Σ copy durations
  std::int64_t wall_ns = 0;   // as gpu_util
  std::int64_t pageable = 0;  // pageable copies
  std::int64_t pageable_bytes = 0;
  std::int64_t pageable_ns = 0;
  std::int64_t serialized = 0;       // serialized copies (sync or with no kernel running)
  std::int64_t serialized_sync = 0;  // of those: synchronous
  std::int64_t serialized_ns = 0;
  std::int64_t small = 0;   // copies < kSmallCopyBytes
  std::int64_t device = 0;  // device copies (DtoD, PtoP, ...)
  std::int64_t device_ns = 0;
  double serialized_share = 0.0;     // serialized_ns / wall_ns; 0 when the wall is 0
  double pageable_share = 0.0;       // pageable_ns / wall_ns; 0 when the wall is 0
  double pageable_large_gbps = 0.0;  // median GB/s of pageable copies ≥ kSmallCopyBytes; NaN if none
  double pinned_large_gbps = 0.0;    // same for pinned copies of the pageable copies' directions; NaN if none
  // With Python call sites (trace --python-callsites): the user's lines of the pageable and of
  // the small copies, by copy time (at most 3 each; common/python_sites.hpp); empty without them.
  std::vector<PySiteTotal> pageable_sites, small_sites;
};

/// The pageable copies diagnosis (memcpy_check's and top's): fires when pageable_share ≥
/// kPageableShareForWarning; bandwidths compared only at comparable sizes (above).
[[nodiscard]] Verdict pageable_verdict(const MemcpyFindings& f);
/// The serialized copies diagnosis (memcpy_check's and top's): fires when serialized_share ≥
/// kSerializedShareForWarning. Device copies are never serialized copies.
[[nodiscard]] Verdict serialized_verdict(const MemcpyFindings& f);

/// The memcpy_check rows (as the Report's) and findings in one pass.
struct MemcpyCheck {
  Report report;
  MemcpyFindings findings;
};
[[nodiscard]] MemcpyCheck memcpy_check_data(store::Database& db);

}  // namespace detail

}  // namespace gpuscope::analyze
