// method_summary(): how `gpuscope peak` measures each ceiling (peak/peak.hpp). One row per
// ceiling of ceiling_catalog(), in its order; tests/unit/peak checks that they match.
// `gpuscope peak --methods` prints these rows with the catalog; docs/metrics.md is
// generated from that output.
#include <array>

#include "peak/peak.hpp"

namespace gpuscope::peak {
namespace {

constexpr std::array kMethods{
    MethodSummary{"dram_read",
                  "read_sum kernel: every thread keeps 4 (or 8: the faster counts) independent 16-byte loads in "
                  "flight per step of a grid-stride loop; one full wave of blocks on every SM; buffer max(8 x L2, "
                  "256 MiB); the 32-bit word sum is checked against its closed form."},
    MethodSummary{"dram_write",
                  "write_pattern kernel: 4 or 8 independent 16-byte stores per thread per step (the faster counts), "
                  "grid and buffer as dram_read; the written pattern's word sum is checked."},
    MethodSummary{"dram_copy",
                  "copy kernel: 4 (or 8: the faster counts) 16-byte loads then as many 16-byte stores per thread "
                  "per step between two buffers of max(8 x L2, 256 MiB); bytes read + written counted; the "
                  "destination's word sum is checked."},
    MethodSummary{"l2_read",
                  "l2_read_sum kernel: 16-byte ld.global.cg loads (L1 bypassed), 200 passes over a working set of "
                  "at most half the L2, each block reading different chunks in each pass; word sum checked."},
    MethodSummary{"shared_memory",
                  "shared_read_sum kernel: 32 KiB of shared memory per block, 4 ld.shared.v4 per thread per "
                  "iteration, warp-contiguous (no bank conflicts), offset moving each iteration; sum checked."},
    MethodSummary{"fp64_fma",
                  "8 independent DFMA chains x 32 unrolled steps per thread (x = x * -1 + 3), full occupancy, one "
                  "wave; every thread's result must return exactly to the chains' start values."},
    MethodSummary{"fp32_fma",
                  "16 independent FFMA chains x 32 unrolled steps per thread, full occupancy, one wave; exact "
                  "result check of every thread."},
    MethodSummary{"fp16_fma", "16 independent half2 HFMA2 chains x 32 unrolled steps per thread; exact result check."},
    MethodSummary{"bf16_fma",
                  "16 independent bf162 HFMA2.BF16 chains x 32 unrolled steps per thread; exact result check."},
    MethodSummary{"int32_imad",
                  "16 independent mad.lo.s32 chains (inline PTX, so the compiler cannot fold them) x 32 steps per "
                  "thread; exact result check."},
    MethodSummary{"sfu_expf",
                  "8 independent x = __expf(-x) chains x 16 steps per thread (MUFU.EX2); every thread's result "
                  "must converge to the omega constant 0.567143..."},
    MethodSummary{"tensor_fp16",
                  "cublasLtMatmul, FP16 inputs and output, FP32 accumulation, TN layout, random inputs; square "
                  "4096/8192/16384 (8192 with --quick), the first 3 heuristic algorithms each; best kept; 4 "
                  "elements of C checked against host dot products."},
    MethodSummary{"tensor_bf16", "As tensor_fp16 with BF16 inputs and output."},
    MethodSummary{"tensor_tf32", "As tensor_fp16 with FP32 inputs and output, CUBLAS_COMPUTE_32F_FAST_TF32."},
    MethodSummary{"tensor_fp8",
                  "As tensor_fp16 with FP8 E4M3 inputs, BF16 output, unit scales, CUBLASLT_MATMUL_DESC_FAST_ACCUM."},
    MethodSummary{"tensor_int8",
                  "As tensor_fp16 with INT8 inputs, INT32 output, CUBLAS_COMPUTE_32I; C checked exactly."},
    MethodSummary{"h2d_pinned",
                  "cudaMemcpyAsync of 256 MiB (64 MiB with --quick) from cudaHostAlloc memory, timed with CUDA "
                  "events; the device copy's word sum is checked."},
    MethodSummary{"d2h_pinned",
                  "cudaMemcpyAsync device to cudaHostAlloc memory, as h2d_pinned; host word sum checked."},
    MethodSummary{"h2d_pageable",
                  "cudaMemcpy from malloc'd memory, timed on the host (steady_clock, median); device word sum "
                  "checked."},
    MethodSummary{"d2h_pageable", "cudaMemcpy into malloc'd memory, timed on the host; host word sum checked."},
    MethodSummary{"bidir_pinned",
                  "H2D and D2H cudaMemcpyAsync of pinned memory at once on two streams (fork/join events), both "
                  "directions' bytes counted; both destinations checked."},
    MethodSummary{"p2p",
                  "cudaMemcpyPeerAsync of 256 MiB from every GPU to every other one with peer access enabled, "
                  "timed on the source; word sum checked on the destination; the slowest pair is the ceiling. "
                  "Needs two GPUs."},
    MethodSummary{"launch_rate",
                  "2000 back-to-back <<<1,1>>> launches on one stream, host time from the first launch call to "
                  "cudaStreamSynchronize's return; a device counter must equal the launch count."},
    MethodSummary{"launch_latency",
                  "A <<<1,1>>> kernel stores a new value to mapped pinned memory; host time from the launch call "
                  "on an idle stream until it sees the value; median of repetitions."},
    MethodSummary{"graph_kernel_cost",
                  "A captured CUDA graph of 1000 <<<1,1>>> kernel nodes, event-timed replays / 1000; the device "
                  "counter must equal the kernels run."},
    MethodSummary{"stream_sync",
                  "One <<<1,1>>> launch + cudaStreamSynchronize, host wall time, median of repetitions; device "
                  "counter checked."},
};

}  // namespace

std::span<const MethodSummary> method_summary() { return kMethods; }

}  // namespace gpuscope::peak
