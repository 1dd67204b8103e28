#include "core/machine_profile.hpp"

#include <array>

namespace gpuscope::core {
namespace {

using K = CeilingKind;

// One row per ceiling, in the order `gpuscope peak` prints them. The descriptions say what
// is counted (the numerator and denominator of the rate); docs/metrics.md is generated from
// this table and the section "How gpuscope peak measures each ceiling" gives the method.
// `quick`: the ceilings `gpuscope peak --quick` measures — the list (DRAM copy, L2,
// FP32, BF16 tensor, H2D/D2H pinned, launch rate) plus DRAM read/write, launch latency and
// stream sync, which reuse the same buffers and kernels and cost well under a second.
constexpr std::array kCatalog{
    // memory
    CeilingInfo{"dram_read", K::kMemory, "B/s", "DRAM read",
                "Bytes read per second by a kernel that sums 16-byte vector loads over a working set "
                "of at least 8x the L2 size, with a grid that fills every SM.",
                true},
    CeilingInfo{"dram_write", K::kMemory, "B/s", "DRAM write",
                "Bytes written per second by a kernel that stores 16-byte vectors over a working set "
                "of at least 8x the L2 size, with a grid that fills every SM.",
                true},
    CeilingInfo{"dram_copy", K::kMemory, "B/s", "DRAM copy",
                "Bytes read + bytes written per second by a device-to-device copy kernel with 16-byte "
                "accesses over a working set of at least 8x the L2 size (a 1 GB copy counts 2 GB).",
                true},
    CeilingInfo{"l2_read", K::kMemory, "B/s", "L2 read",
                "Bytes per second delivered by L2 to all SMs: 16-byte loads that bypass L1 "
                "(ld.global.cg), repeated over a working set of at most half the L2 size.",
                true},
    CeilingInfo{"shared_memory", K::kMemory, "B/s", "Shared memory",
                "Bytes per second read from shared memory by all SMs together, bank-conflict-free "
                "loads counted per thread access (per SM: divide by the SM count).",
                false},
    // compute (CUDA cores)
    CeilingInfo{"fp64_fma", K::kCompute, "FLOP/s", "FP64 FMA",
                "FP64 FLOP per second of independent unrolled DFMA chains with enough warps in flight "
                "on every SM; one FMA counts 2 FLOP.",
                false},
    CeilingInfo{"fp32_fma", K::kCompute, "FLOP/s", "FP32 FMA",
                "FP32 FLOP per second of independent unrolled FFMA chains with enough warps in flight "
                "on every SM; one FMA counts 2 FLOP.",
                true},
    CeilingInfo{"fp16_fma", K::kCompute, "FLOP/s", "FP16 FMA",
                "FP16 FLOP per second of independent unrolled half2 HFMA2 chains on every SM; one "
                "HFMA2 is 2 FMAs and counts 4 FLOP.",
                false},
    CeilingInfo{"bf16_fma", K::kCompute, "FLOP/s", "BF16 FMA",
                "BF16 FLOP per second of independent unrolled bf162 HFMA2.BF16 chains on every SM; "
                "one instruction is 2 FMAs and counts 4 FLOP.",
                false},
    CeilingInfo{"int32_imad", K::kCompute, "OP/s", "INT32 IMAD",
                "32-bit integer multiply-adds per second x 2 (one IMAD counts 2 OP) of independent "
                "unrolled chains on every SM.",
                false},
    CeilingInfo{"sfu_expf", K::kCompute, "OP/s", "SFU __expf",
                "__expf evaluations per second (one call counts 1 OP) of independent chains on every "
                "SM; bounded by the special function units.",
                false},
    // compute (tensor cores, through cuBLASLt)
    CeilingInfo{"tensor_fp16", K::kCompute, "FLOP/s", "FP16 tensor",
                "2*M*N*K per second of dense FP16 x FP16 GEMMs with FP32 accumulation through "
                "cuBLASLt, the best of the large square shapes tried (best_shape).",
                false},
    CeilingInfo{"tensor_bf16", K::kCompute, "FLOP/s", "BF16 tensor",
                "2*M*N*K per second of dense BF16 x BF16 GEMMs with FP32 accumulation through "
                "cuBLASLt, the best of the large square shapes tried (best_shape).",
                true},
    CeilingInfo{"tensor_tf32", K::kCompute, "FLOP/s", "TF32 tensor",
                "2*M*N*K per second of dense FP32 GEMMs computed in TF32 (CUBLAS_COMPUTE_32F_FAST_TF32) "
                "through cuBLASLt, the best of the large square shapes tried (best_shape).",
                false},
    CeilingInfo{"tensor_fp8", K::kCompute, "FLOP/s", "FP8 tensor",
                "2*M*N*K per second of dense FP8 E4M3 x E4M3 GEMMs with FP32 accumulation through "
                "cuBLASLt, the best of the large square shapes tried (best_shape).",
                false},
    CeilingInfo{"tensor_int8", K::kCompute, "OP/s", "INT8 tensor",
                "2*M*N*K per second of dense INT8 x INT8 GEMMs with INT32 accumulation through "
                "cuBLASLt, the best of the large square shapes tried (best_shape).",
                false},
    // transfer
    CeilingInfo{"h2d_pinned", K::kTransfer, "B/s", "H2D pinned",
                "Bytes per second copied host to device by cudaMemcpyAsync from page-locked "
                "(cudaMallocHost) memory, large transfers.",
                true},
    CeilingInfo{"d2h_pinned", K::kTransfer, "B/s", "D2H pinned",
                "Bytes per second copied device to host by cudaMemcpyAsync into page-locked "
                "(cudaMallocHost) memory, large transfers.",
                true},
    CeilingInfo{"h2d_pageable", K::kTransfer, "B/s", "H2D pageable",
                "Bytes per second copied host to device by cudaMemcpy from ordinary (malloc) memory, "
                "large transfers, staging through the driver included.",
                false},
    CeilingInfo{"d2h_pageable", K::kTransfer, "B/s", "D2H pageable",
                "Bytes per second copied device to host by cudaMemcpy into ordinary (malloc) memory, "
                "large transfers, staging through the driver included.",
                false},
    CeilingInfo{"bidir_pinned", K::kTransfer, "B/s", "H2D+D2H pinned",
                "Bytes per second of both directions together while an H2D and a D2H copy of pinned "
                "memory run at the same time on two streams.",
                false},
    CeilingInfo{"p2p", K::kTransfer, "B/s", "Peer to peer",
                "Bytes per second copied between two GPUs by cudaMemcpyPeerAsync with peer access "
                "enabled: the slowest of every ordered GPU pair (each pair in the profile's peer_links); "
                "measured only when there are two or more GPUs.",
                false},
    // latency
    CeilingInfo{"launch_rate", K::kLatency, "launch/s", "Launch rate",
                "Empty-kernel launches per second: back-to-back launches on one stream, counted from "
                "the first launch call to the completion of the last kernel.",
                true},
    CeilingInfo{"launch_latency", K::kLatency, "s", "Launch latency",
                "Seconds from the host's launch call of an empty kernel on an idle stream to the "
                "start of that kernel on the GPU.",
                true},
    CeilingInfo{"graph_kernel_cost", K::kLatency, "s", "Graph kernel cost",
                "Seconds per kernel node when a CUDA graph of many empty kernels is launched: "
                "graph launch to completion divided by the number of nodes.",
                false},
    CeilingInfo{"stream_sync", K::kLatency, "s", "Stream sync",
                "Seconds of host wall time for launching one empty kernel and waiting for it with "
                "cudaStreamSynchronize (the launch-and-wait round trip).",
                true},
};

}  // namespace

std::span<const CeilingInfo> ceiling_catalog() { return kCatalog; }

const CeilingInfo* find_ceiling_info(std::string_view name) {
  for (const CeilingInfo& c : kCatalog)
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace gpuscope::core
