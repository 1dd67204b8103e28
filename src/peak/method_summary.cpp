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
                  "The best of a coarse-to-fine sweep over methods: cub::DeviceReduce::Sum of the 32-bit words, "
                  "and the read_sum kernel in every configuration of 16 or 32 bytes per access x 2/4/8 accesses "
                  "in flight per thread x cache hint (default, ld.global.nc, ld.global.cs, "
                  "ld.global.nc.L1::no_allocate.L2::256B) x grid (1, 2, 4, 8 or all resident blocks per SM looping "
                  "grid-stride, or one block per step); each timed briefly, most promising first, within a time "
                  "budget; the fastest within 3 % (and every method's best) timed in full; buffer max(32 x L2, "
                  "4 GiB), at most 1/8 of the memory; the word sum is checked against its closed form. Every "
                  "method's result is kept in the method line."},
    MethodSummary{"dram_write",
                  "As dram_read over cudaMemsetAsync, cub::DeviceTransform writing the pattern, and the "
                  "write_pattern kernel's configurations (default or st.global.cs streaming stores); the written "
                  "words' sum is checked."},
    MethodSummary{"dram_copy",
                  "As dram_read over cudaMemcpyAsync device to device (what PyTorch's copy_ calls), "
                  "cub::DeviceTransform, and the copy kernel's configurations (loads with each hint, streaming "
                  "stores with .cs) between two buffers; bytes read + written counted; the destination's word sum "
                  "is checked."},
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
                  "cublasLtMatmul, FP16 inputs and output, FP32 accumulation, random inputs: a coarse-to-fine "
                  "sweep over shapes 4096^3, 8192^3, 16384x8192x8192 (8192^3 with --quick), layouts NN, NT, TN and "
                  "up to 8 heuristic algorithms each (4 with --quick), 64 MiB workspace limit; the fastest within "
                  "3 % and each layout's best timed in full; 4 elements of C checked against host dot products. "
                  "Then the winner once more as a burst, as torch.matmul is timed: 20 single GEMMs after 1 s idle, "
                  "at the clock a burst starts at (the sweep's seconds run at the clock the power limit leaves); "
                  "the higher of the two is the ceiling, its method line gives both. "
                  "Below tensor_bf16, the method line says whether the SM clock (power) or the kernel made it so."},
    MethodSummary{"tensor_bf16", "As tensor_fp16 with BF16 inputs and output."},
    MethodSummary{"tensor_tf32", "As tensor_fp16 with FP32 inputs and output, CUBLAS_COMPUTE_32F_FAST_TF32."},
    MethodSummary{
        "tensor_fp8",
        "As tensor_fp16 with FP8 E4M3 inputs, BF16 output, unit scales, CUBLASLT_MATMUL_DESC_FAST_ACCUM; TN layout "
        "only (cuBLASLt requires it)."},
    MethodSummary{
        "tensor_int8",
        "As tensor_fp16 with INT8 inputs, INT32 output, CUBLAS_COMPUTE_32I, TN layout only; C checked exactly."},
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
