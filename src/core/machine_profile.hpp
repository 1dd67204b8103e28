// MachineProfile: the measured ceilings of one GPU, as `gpuscope peak` writes them and
// `stats`, `bench`, `kernels` and `roofline` read them.
//
// One Ceiling per measured limit (DRAM copy bandwidth, FP32 FMA rate, BF16 tensor rate,
// launch rate, ...). Every ceiling has a canonical name from ceiling_catalog() below;
// the catalog says its kind, its unit and what it means, so the JSON file, the table
// printed by `gpuscope peak`, docs/metrics.md and the roofline all speak the same names.
//
// Units are SI base units so numbers combine without conversions:
//   bandwidths "B/s" (bytes per second; copy bandwidth counts read + write bytes),
//   rates "FLOP/s" (an FMA is 2 FLOP) or "OP/s" (integer and SFU ops; an IMAD is 2 OP),
//   "launch/s", and latencies "s".
// A value that is unknown is NaN (written as JSON null).
//
// Pure data (core/: no I/O). JSON (de)serialization: store/machine_profile_json.hpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::core {

/// What a ceiling limits.
enum class CeilingKind {
  kMemory,    // on-chip or DRAM bandwidth, B/s        (a roofline slope)
  kCompute,   // arithmetic rate, FLOP/s or OP/s       (a roofline roof)
  kTransfer,  // host <-> device or peer bandwidth, B/s
  kLatency,   // launch and synchronization costs, launch/s or s
};

/// One entry of the catalog of ceilings gpuscope knows.
struct CeilingInfo {
  std::string_view name;  // canonical name, e.g. "dram_copy"
  CeilingKind kind;
  std::string_view unit;         // "B/s", "FLOP/s", "OP/s", "launch/s", "s"
  std::string_view label;        // short human label, e.g. "DRAM copy"
  std::string_view description;  // one sentence: what is measured and how it is counted
  bool quick;                    // measured by `gpuscope peak --quick` too
};

/// Every ceiling gpuscope measures, in the order `gpuscope peak` prints them:
///   memory   dram_read, dram_write, dram_copy, l2_read, shared_memory
///   compute  fp64_fma, fp32_fma, fp16_fma, bf16_fma, int32_imad, sfu_expf,
///            tensor_fp16, tensor_bf16, tensor_tf32, tensor_fp8, tensor_int8
///   transfer h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable, bidir_pinned, p2p
///   latency  launch_rate, launch_latency, graph_kernel_cost, stream_sync
[[nodiscard]] std::span<const CeilingInfo> ceiling_catalog();

/// The catalog entry called `name`, or nullptr.
[[nodiscard]] const CeilingInfo* find_ceiling_info(std::string_view name);

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

/// One measured ceiling.
struct Ceiling {
  std::string name;                      // a ceiling_catalog() name
  double measured = kUnknown;            // median of the timed repetitions, in the catalog unit
  double theoretical = kUnknown;         // from the device's units × the clock observed during the
                                         // run (NaN where no formula is known, e.g. L2, launch)
  double datasheet = kUnknown;           // vendor value for this GPU model, NaN if unknown
  std::string method;                    // one line: kernel, access width, grid, sizes, repetitions
  std::string best_shape;                // tensor rates: the GEMM shape that gave `measured` ("8192x8192x8192")
  int samples = 0;                       // timed repetitions behind `measured`
  double rel_spread = kUnknown;          // (max - min) / median of those repetitions
  double sm_clock_mhz_begin = kUnknown;  // SM clock read before and after the measurement
  double sm_clock_mhz_end = kUnknown;
  double mem_clock_mhz = kUnknown;
  bool throttled = false;  // the SM clock fell during the measurement
  bool verified = false;   // the result checksum matched the host's expectation

  /// measured / theoretical × 100, NaN when either is unknown.
  [[nodiscard]] double pct_of_theoretical() const {
    return std::isfinite(theoretical) && theoretical > 0 ? measured / theoretical * 100.0 : kUnknown;
  }
};

/// One GPU-to-GPU copy measured by `gpuscope peak` (the `p2p` ceiling measures every ordered
/// pair of visible GPUs with peer access): cudaMemcpyPeerAsync from GPU `src` to GPU `dst`
/// (CUDA ordinals as the measuring process saw them), bytes per second, median of the timed
/// repetitions; `verified` when the destination's checksum matched.
struct PeerLink {
  int src = 0;
  int dst = 0;
  std::string src_uuid;  // "GPU-8c1f...", "" if unknown
  std::string dst_uuid;
  double bytes_per_s = kUnknown;
  bool verified = false;
};

/// The device the profile was measured on.
struct DeviceFacts {
  std::string name;  // "NVIDIA H200"
  std::string uuid;  // "GPU-8c1f..." (the profile cache key)
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::int64_t global_memory_bytes = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t shared_memory_per_sm_bytes = 0;
  int memory_bus_width_bits = 0;
  double max_sm_clock_mhz = kUnknown;   // cudaDevAttrClockRate
  double max_mem_clock_mhz = kUnknown;  // cudaDevAttrMemoryClockRate
  std::string driver_version;           // "580.159.04" (NVML) or "13000" (cudaDriverGetVersion)
  int cuda_runtime_version = 0;         // cudaRuntimeGetVersion, e.g. 13000
};

/// The whole machine profile.
struct MachineProfile {
  static constexpr int kFormatVersion = 1;
  int format_version = kFormatVersion;
  std::string gpuscope_version;
  std::string measured_at;       // ISO 8601 UTC, "2026-11-22T10:00:00Z"
  bool quick = false;            // measured with --quick (a subset of the catalog)
  double duration_s = kUnknown;  // wall time of the whole measurement
  DeviceFacts device;
  std::vector<Ceiling> ceilings;      // in catalog order; only those measured
  std::vector<std::string> warnings;  // "another process was using the GPU: ..."
  std::vector<PeerLink> peer_links;   // every GPU pair's copy bandwidth (with `p2p`); empty with one GPU

  /// The slowest measured link among the GPUs whose UUIDs are `uuids` (both ends in the set:
  /// the link that bounds a ring over them), or nullptr when no such link was measured.
  [[nodiscard]] const PeerLink* slowest_link(std::span<const std::string> uuids) const {
    const PeerLink* best = nullptr;
    auto in = [&](const std::string& u) {
      for (const std::string& x : uuids)
        if (!u.empty() && x == u) return true;
      return false;
    };
    for (const PeerLink& l : peer_links)
      if (l.bytes_per_s > 0 && in(l.src_uuid) && in(l.dst_uuid) &&
          (best == nullptr || l.bytes_per_s < best->bytes_per_s))
        best = &l;
    return best;
  }

  /// The ceiling called `name`, or nullptr when it was not measured.
  [[nodiscard]] const Ceiling* find(std::string_view name) const {
    for (const Ceiling& c : ceilings)
      if (c.name == name) return &c;
    return nullptr;
  }
};

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
