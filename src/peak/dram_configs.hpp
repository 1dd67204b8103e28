// Internal to src/peak: the configurations of the DRAM kernels that `gpuscope peak` sweeps
// (what decides whether a kernel reaches the memory's limit), and their order. Pure C++.
//
// A configuration: the operation (read, write, copy), the access width per thread (16 B =
// one uint4, or 32 B = two adjacent uint4: sm_90 has no 32-byte load, so the second is a
// separate ld.v4 of the same thread), the unroll (independent accesses in flight per
// thread per step), the cache hint, and the grid: `blocks_per_sm` resident blocks on every
// SM looping grid-stride (persistent), or 0 = one-shot (one block per step of the buffer,
// no loop: many waves, the shape of cudaMemcpy's and PyTorch's copy kernels).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace gpuscope::peak::detail {

enum class DramOp { kRead, kWrite, kCopy };

/// Load / store flavours (PTX): kDefault ld.global / st.global; kNonCoherent ld.global.nc
/// (the read-only path, __ldg) / st.global; kStreaming ld.global.cs / st.global.cs
/// (evict-first, __ldcs / __stcs); kNoAllocate ld.global.nc.L1::no_allocate.L2::256B (L1
/// bypassed, 256-byte L2 prefetch) / st.global.cs. Writes have no loads: only kDefault and
/// kStreaming differ for them.
enum class CacheHint { kDefault, kNonCoherent, kStreaming, kNoAllocate };

struct DramConfig {
  DramOp op = DramOp::kCopy;
  int width = 1;   // 16-byte vectors per access (1 or 2)
  int unroll = 4;  // accesses in flight per thread per step (2, 4 or 8)
  CacheHint hint = CacheHint::kDefault;
  int blocks_per_sm = 0;  // persistent grid of SMs × this; 0 = one-shot
};

inline constexpr int kDramBlock = 256;  // threads per block of every DRAM kernel

/// "32 B x 8, streaming .cs, one-shot grid", "16 B x 4, default, 8 blocks/SM persistent".
[[nodiscard]] std::string dram_label(const DramConfig& c);
[[nodiscard]] const char* cache_hint_name(CacheHint h);

/// Bytes a persistent grid keeps in flight per SM: blocks_per_sm × block × width × 16 ×
/// unroll (loads for read and copy, stores for write); for one-shot, `resident_blocks`
/// stands for blocks_per_sm.
[[nodiscard]] double bytes_in_flight_per_sm(const DramConfig& c, int resident_blocks);

/// Every configuration to sweep for `op`, most promising first (one-shot and fully
/// occupied persistent grids, 16-byte accesses, unroll 4 and 8, before the rest).
/// `max_blocks_per_sm(c)` is the occupancy of c's kernel (at least 1 is assumed); the
/// persistent grids are 1, 2, 4, 8 blocks per SM up to it, and the occupancy itself. quick:
/// 16-byte accesses, unroll 4 and 8, default and streaming hints (and non-coherent for
/// read), the fully occupied and the one-shot grid only.
[[nodiscard]] std::vector<DramConfig> dram_configs(DramOp op, bool quick,
                                                   const std::function<int(const DramConfig&)>& max_blocks_per_sm);

}  // namespace gpuscope::peak::detail
