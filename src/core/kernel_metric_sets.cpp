#include "core/kernel_metric_sets.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <array>
#include <utility>

namespace gpuscope::core::kernels {
namespace {

// One definition per metric; the sets below copy these (the views share the literals).
constexpr MetricInfo k_duration{
    metric::k_duration, "ns",
    "Time the kernel ran on the GPU, from its first to its last instruction (with counters on, "
    "so a little above an untraced run).",
    "GPU front-end timer — Nsight Compute GPU Speed Of Light Throughput"};
constexpr MetricInfo k_dram_read{
    metric::k_dram_read, "bytes",
    "Bytes read from device memory (HBM/GDDR) into the L2 cache: the traffic that the DRAM "
    "bandwidth ceiling limits.",
    "DRAM controllers (dram) — Nsight Compute Memory Workload Analysis"};
constexpr MetricInfo k_dram_write{metric::k_dram_write, "bytes",
                                  "Bytes written from the L2 cache back to device memory.",
                                  "DRAM controllers (dram) — Nsight Compute Memory Workload Analysis"};
constexpr MetricInfo k_l2_bytes{
    metric::k_l2_bytes, "bytes",
    "Bytes requested from the L2 cache by all its clients (SMs, copy engines), hits and misses "
    "together.",
    "L2 cache slices (lts) — Nsight Compute Memory Workload Analysis"};
constexpr MetricInfo k_l1_bytes{metric::k_l1_bytes, "bytes",
                                "Bytes requested from the SMs' L1/texture caches (global, local, shared and texture "
                                "accesses).",
                                "L1/texture cache (l1tex) — Nsight Compute Memory Workload Analysis"};
constexpr MetricInfo k_achieved_occupancy{
    metric::k_achieved_occupancy, "%",
    "Achieved occupancy: the average number of warps resident on an SM while it was active, as a "
    "percentage of the most it can hold.",
    "SM warp slots (sm) — Nsight Compute Occupancy"};

constexpr MetricInfo k_ffma{metric::k_ffma, "thread instructions",
                            "FP32 fused multiply-adds executed by threads whose predicate was on (each is 2 FLOP).",
                            "SASS instruction counts (instrumented, sass) — Nsight Compute roofline chart"};
constexpr MetricInfo k_fadd{metric::k_fadd, "thread instructions",
                            "FP32 additions executed by threads whose predicate was on (1 FLOP each).",
                            "SASS instruction counts (instrumented, sass) — Nsight Compute roofline chart"};
constexpr MetricInfo k_fmul{metric::k_fmul, "thread instructions",
                            "FP32 multiplications executed by threads whose predicate was on (1 FLOP each).",
                            "SASS instruction counts (instrumented, sass) — Nsight Compute roofline chart"};
constexpr MetricInfo k_dfma{metric::k_dfma, "thread instructions",
                            "FP64 fused multiply-adds executed by threads whose predicate was on (each is 2 FLOP).",
                            "SASS instruction counts (instrumented, sass) — Nsight Compute roofline chart"};
constexpr MetricInfo k_dadd{metric::k_dadd, "thread instructions",
                            "FP64 additions executed by threads whose predicate was on (1 FLOP each).",
                            "SASS instruction counts (instrumented, sass) — Nsight Compute roofline chart"};
constexpr MetricInfo k_dmul{metric::k_dmul, "thread instructions",
                            "FP64 multiplications executed by threads whose predicate was on (1 FLOP each).",
                            "SASS instruction counts (instrumented, sass) — Nsight Compute roofline chart"};
constexpr MetricInfo k_hfma{metric::k_hfma, "thread instructions",
                            "FP16 fused multiply-add instructions on CUDA cores executed by threads whose predicate "
                            "was on; packed HFMA2 (two lanes), so 4 FLOP each (measured on H100).",
                            "SASS instruction counts (instrumented, sass) — Nsight Compute roofline chart"};
constexpr MetricInfo k_hadd{metric::k_hadd, "thread instructions",
                            "FP16 addition instructions on CUDA cores executed by threads whose predicate was on "
                            "(packed HADD2: 2 FLOP each).",
                            "SASS instruction counts (instrumented, sass) — Nsight Compute roofline chart"};
constexpr MetricInfo k_hmul{metric::k_hmul, "thread instructions",
                            "FP16 multiplication instructions on CUDA cores executed by threads whose predicate was "
                            "on (packed HMUL2: 2 FLOP each).",
                            "SASS instruction counts (instrumented, sass) — Nsight Compute roofline chart"};
constexpr MetricInfo k_tensor_inst{
    metric::k_tensor_inst, "warp instructions",
    "Warp instructions issued to the tensor-core pipe (mma/wgmma); one instruction does many "
    "multiply-adds, so FLOPs need a calibration factor.",
    "SM tensor pipe (sm) — Nsight Compute Compute Workload Analysis"};
constexpr MetricInfo k_hgmma_fp16{
    metric::k_hgmma_fp16, "tensor ops",
    "Hopper warpgroup MMA (wgmma) math operations with FP16 inputs, in the counter's op units "
    "(calibrate against a GEMM of known 2·M·N·K FLOP).",
    "SM tensor cores, wgmma path (sm) — Nsight Compute Compute Workload Analysis"};
constexpr MetricInfo k_hgmma_bf16{
    metric::k_hgmma_bf16, "tensor ops",
    "Hopper wgmma math operations with BF16 inputs and FP32 accumulation, in the counter's op "
    "units (calibrate before converting to FLOPs).",
    "SM tensor cores, wgmma path (sm) — Nsight Compute Compute Workload Analysis"};
constexpr MetricInfo k_hgmma_tf32{
    metric::k_hgmma_tf32, "tensor ops",
    "Hopper wgmma math operations with TF32 inputs and FP32 accumulation, in the counter's op "
    "units (calibrate before converting to FLOPs).",
    "SM tensor cores, wgmma path (sm) — Nsight Compute Compute Workload Analysis"};
constexpr MetricInfo k_hgmma_fp8{metric::k_hgmma_fp8, "tensor ops",
                                 "Hopper wgmma math operations with FP8 (E4M3/E5M2) inputs, in the counter's op units "
                                 "(calibrate before converting to FLOPs).",
                                 "SM tensor cores, wgmma path (sm) — Nsight Compute Compute Workload Analysis"};

constexpr MetricInfo k_sm_throughput{
    metric::k_sm_throughput, "%",
    "Compute throughput: how busy the busiest SM unit or pipe was, as a percentage of its peak "
    "over the kernel's elapsed time.",
    "SM (sm) — Nsight Compute GPU Speed Of Light Throughput"};
constexpr MetricInfo k_compute_memory_throughput{
    metric::k_compute_memory_throughput, "%",
    "Memory throughput: how busy the busiest memory unit (L1, L2 or DRAM) was, as a percentage of "
    "its peak over the elapsed time.",
    "memory units (gpu) — Nsight Compute GPU Speed Of Light Throughput"};
constexpr MetricInfo k_dram_throughput{
    metric::k_dram_throughput, "%",
    "DRAM throughput as a percentage of the DRAM's theoretical peak over the elapsed time.",
    "DRAM controllers (dram) — Nsight Compute GPU Speed Of Light Throughput"};
constexpr MetricInfo k_l2_throughput{metric::k_l2_throughput, "%",
                                     "L2 cache throughput as a percentage of the L2's peak over the elapsed time.",
                                     "L2 cache slices (lts) — Nsight Compute GPU Speed Of Light Throughput"};
constexpr MetricInfo k_l1_throughput{metric::k_l1_throughput, "%",
                                     "L1/texture cache throughput as a percentage of its peak over the elapsed time.",
                                     "L1/texture cache (l1tex) — Nsight Compute GPU Speed Of Light Throughput"};

constexpr MetricInfo k_l1_hit_rate{"l1tex__t_sector_hit_rate.pct", "%",
                                   "Share of 32-byte sectors requested from L1 that were already in L1.",
                                   "L1/texture cache (l1tex) — Nsight Compute Memory Workload Analysis"};
constexpr MetricInfo k_l2_hit_rate{
    "lts__t_sector_hit_rate.pct", "%",
    "Share of 32-byte sectors requested from L2 that were already in L2 (the rest came from DRAM).",
    "L2 cache slices (lts) — Nsight Compute Memory Workload Analysis"};
constexpr MetricInfo k_ld_sectors{
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sectors",
    "32-byte sectors that global loads touched in L1; 4 sectors per warp request is perfectly "
    "coalesced 4-byte access.",
    "L1/texture cache, LSU pipe (l1tex) — Nsight Compute Memory Workload Analysis Tables"};
constexpr MetricInfo k_ld_requests{
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "requests",
    "Warp-level global load requests sent to L1 (one per load instruction of a warp).",
    "L1/texture cache, LSU pipe (l1tex) — Nsight Compute Memory Workload Analysis Tables"};
constexpr MetricInfo k_st_sectors{
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "sectors", "32-byte sectors that global stores touched in L1.",
    "L1/texture cache, LSU pipe (l1tex) — Nsight Compute Memory Workload Analysis Tables"};
constexpr MetricInfo k_st_requests{
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "requests",
    "Warp-level global store requests sent to L1 (one per store instruction of a warp).",
    "L1/texture cache, LSU pipe (l1tex) — Nsight Compute Memory Workload Analysis Tables"};
constexpr MetricInfo k_smem_ld_conflicts{
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "conflicts",
    "Extra cycles shared-memory loads waited because threads of a warp hit the same bank "
    "(0 is ideal).",
    "L1/shared memory banks (l1tex) — Nsight Compute Memory Workload Analysis Tables"};
constexpr MetricInfo k_smem_st_conflicts{
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "conflicts",
    "Extra cycles shared-memory stores waited because threads of a warp hit the same bank "
    "(0 is ideal).",
    "L1/shared memory banks (l1tex) — Nsight Compute Memory Workload Analysis Tables"};

constexpr MetricInfo k_active_warps{
    metric::k_active_warps, "warps",
    "Achieved active warps per SM: the average number of warps resident on an SM per cycle while "
    "it was active.",
    "SM warp slots (sm) — Nsight Compute Occupancy"};
constexpr MetricInfo k_eligible_warps{
    metric::k_eligible_warps, "warps",
    "Warps per cycle per scheduler that were ready to issue an instruction; below 1 the scheduler "
    "often had nothing to issue (latency not hidden).",
    "SM sub-partition warp schedulers (smsp) — Nsight Compute Scheduler Statistics"};

// Compute Workload Analysis (Nsight Compute's ComputeWorkloadAnalysis section, sm_90 names).
constexpr MetricInfo k_ipc_elapsed{
    metric::k_ipc_elapsed, "warp instructions per cycle",
    "Executed IPC over the elapsed cycles: warp instructions executed per cycle per SM, idle cycles included "
    "(an SM of H100 can issue at most 4 per cycle, one per scheduler).",
    "SM (sm) — Nsight Compute Compute Workload Analysis"};
constexpr MetricInfo k_ipc_active{metric::k_ipc_active, "warp instructions per cycle",
                                  "Executed IPC over the cycles the SM had work: warp instructions executed per "
                                  "active cycle per SM.",
                                  "SM (sm) — Nsight Compute Compute Workload Analysis"};
constexpr MetricInfo k_issued_ipc{metric::k_issued_ipc, "warp instructions per cycle",
                                  "Issued IPC over the active cycles: warp instructions issued per active cycle per "
                                  "SM (replayed instructions count again).",
                                  "SM (sm) — Nsight Compute Compute Workload Analysis"};
constexpr MetricInfo k_sm_busy{metric::k_sm_busy, "%",
                               "SM busy: the busiest of the SM's instruction-issue and pipe throughputs, as a "
                               "percentage of its peak over the active cycles.",
                               "SM (sm) — Nsight Compute Compute Workload Analysis"};
constexpr MetricInfo k_issue_slots{metric::k_issue_slots, "%",
                                   "Issue slots busy: the share of the schedulers' issue slots that issued an "
                                   "instruction while the SM was active.",
                                   "SM sub-partition schedulers (sm) — Nsight Compute Compute Workload Analysis"};
#define GPUSCOPE_PIPE(var, pipe, what)                                                 \
  constexpr MetricInfo var {                                                           \
    "sm__inst_executed_pipe_" pipe ".avg.pct_of_peak_sustained_active", "%",           \
        "Warp instructions executed on the " what                                      \
        ", as a percentage of that pipe's peak instruction rate "                      \
        "over the active cycles.",                                                     \
        "SM pipes (sm) — Nsight Compute Compute Workload Analysis, Pipe Utilization" \
  }
GPUSCOPE_PIPE(k_pipe_inst_fma, "fma", "FMA pipe (FP32 multiply-add, FP16x2, integer multiply-add)");
GPUSCOPE_PIPE(k_pipe_inst_alu, "alu", "ALU pipe (integer and logic, FP32 compare and min/max, conversions)");
GPUSCOPE_PIPE(k_pipe_inst_lsu, "lsu", "LSU pipe (loads, stores and atomics to global, local and shared memory)");
GPUSCOPE_PIPE(k_pipe_inst_tma, "tma", "TMA pipe (Hopper's tensor memory accelerator: bulk async copies)");
GPUSCOPE_PIPE(k_pipe_inst_adu, "adu", "ADU pipe (address divergence unit: branch targets, indirect jumps)");
GPUSCOPE_PIPE(k_pipe_inst_cbu, "cbu", "CBU pipe (convergence barrier unit: warp-level branches and syncs)");
GPUSCOPE_PIPE(k_pipe_inst_tex, "tex", "TEX pipe (texture and surface fetches)");
GPUSCOPE_PIPE(k_pipe_inst_uniform, "uniform", "Uniform pipe (warp-uniform integer work on uniform registers)");
GPUSCOPE_PIPE(k_pipe_inst_xu, "xu", "XU pipe (transcendentals sin, exp, rsqrt; integer division; conversions)");
GPUSCOPE_PIPE(k_pipe_inst_fp64, "fp64", "FP64 pipe (double-precision arithmetic)");
GPUSCOPE_PIPE(k_pipe_inst_tensor, "tensor", "tensor pipe (mma and wgmma matrix instructions, all types)");
#undef GPUSCOPE_PIPE
#define GPUSCOPE_PIPE_CYCLES(var, pipe, what)                                          \
  constexpr MetricInfo var {                                                           \
    "sm__pipe_" pipe "_cycles_active.avg.pct_of_peak_sustained_active", "%",           \
        "Cycles the " what                                                             \
        " was busy, as a percentage of the active cycles (a pipe that takes several "  \
        "cycles per instruction is busy longer than its instruction count shows).",    \
        "SM pipes (sm) — Nsight Compute Compute Workload Analysis, Pipe Utilization" \
  }
GPUSCOPE_PIPE_CYCLES(k_pipe_cycles_fma, "fma", "FMA pipe");
GPUSCOPE_PIPE_CYCLES(k_pipe_cycles_alu, "alu", "ALU pipe");
GPUSCOPE_PIPE_CYCLES(k_pipe_cycles_fp64, "fp64", "FP64 pipe");
GPUSCOPE_PIPE_CYCLES(k_pipe_cycles_shared, "shared", "shared pipe (FP16 and tensor work share it)");
GPUSCOPE_PIPE_CYCLES(k_pipe_cycles_tensor, "tensor", "tensor pipe");
GPUSCOPE_PIPE_CYCLES(k_pipe_cycles_tma, "tma", "TMA unit");
#undef GPUSCOPE_PIPE_CYCLES

// Warp State Statistics (Nsight Compute's WarpStateStats section).
constexpr MetricInfo k_warp_cycles_per_issue{
    metric::k_warp_cycles_per_issue, "cycles",
    "Warp cycles per issued instruction: on average a warp issues one instruction every this many cycles; "
    "the stall reasons below add up to it.",
    "SM sub-partition schedulers (smsp) — Nsight Compute Warp State Statistics"};
constexpr MetricInfo k_issue_active{
    metric::k_issue_active, "instructions per cycle",
    "Instructions each scheduler issued per active cycle (1 is its peak); near 1, stalls matter little.",
    "SM sub-partition schedulers (smsp) — Nsight Compute Scheduler Statistics"};
#define GPUSCOPE_STALL(var, reason, what)                                                                   \
  constexpr MetricInfo var {                                                                                \
    "smsp__average_warps_issue_stalled_" reason "_per_issue_active.ratio", "cycles per issued instruction", \
        "Cycles per issued instruction that a warp spent " what ".",                                        \
        "SM sub-partition schedulers (smsp) — Nsight Compute Warp State Statistics"                       \
  }
GPUSCOPE_STALL(k_stall_long_scoreboard, "long_scoreboard",
               "waiting for an L1TEX result (global, local, texture memory)");
GPUSCOPE_STALL(k_stall_barrier, "barrier",
               "waiting at a block barrier (__syncthreads) for the other warps of its block");
GPUSCOPE_STALL(k_stall_mio_throttle, "mio_throttle",
               "held back because the MIO queue (shared memory, special math) was full");
GPUSCOPE_STALL(k_stall_not_selected, "not_selected", "ready but not picked: the scheduler issued another warp");
GPUSCOPE_STALL(k_stall_math_pipe_throttle, "math_pipe_throttle", "held back because the math pipe it needed was busy");
GPUSCOPE_STALL(k_stall_short_scoreboard, "short_scoreboard",
               "waiting for an MIO result (shared memory, special math, shuffles)");
GPUSCOPE_STALL(k_stall_wait, "wait", "waiting on a fixed-latency dependency between instructions");
GPUSCOPE_STALL(k_stall_lg_throttle, "lg_throttle",
               "held back because the local/global memory instruction queue was full");
GPUSCOPE_STALL(k_stall_dispatch_stall, "dispatch_stall", "with a selected instruction that the dispatcher held back");
GPUSCOPE_STALL(k_stall_drain, "drain", "after its last instruction, waiting for its memory writes to drain");
GPUSCOPE_STALL(k_stall_membar, "membar", "waiting at a memory barrier (__threadfence)");
GPUSCOPE_STALL(k_stall_branch_resolving, "branch_resolving", "waiting for a branch target to be computed");
GPUSCOPE_STALL(k_stall_no_instruction, "no_instruction", "with no instruction fetched (instruction cache miss)");
GPUSCOPE_STALL(k_stall_imc_miss, "imc_miss", "waiting on an immediate constant cache miss");
GPUSCOPE_STALL(k_stall_tex_throttle, "tex_throttle", "held back because the texture queue was full");
GPUSCOPE_STALL(k_stall_sleeping, "sleeping", "asleep (__nanosleep, or all its threads waiting)");
GPUSCOPE_STALL(k_stall_gmma, "gmma", "waiting for a Hopper warpgroup MMA (wgmma) to accept or finish work");
GPUSCOPE_STALL(k_stall_misc, "misc", "stalled for a reason in no other category");
GPUSCOPE_STALL(k_stall_selected, "selected", "being issued (the issue cycle itself, not a stall)");
#undef GPUSCOPE_STALL

constexpr std::array k_quick{k_duration, k_dram_read, k_dram_write, k_l2_bytes, k_l1_bytes, k_achieved_occupancy};

constexpr std::array k_roofline{
    k_duration,   k_dram_read, k_dram_write, k_l2_bytes,    k_l1_bytes,   k_achieved_occupancy,
    k_ffma,       k_fadd,      k_fmul,       k_dfma,        k_dadd,       k_dmul,
    k_hfma,       k_hadd,      k_hmul,       k_tensor_inst, k_hgmma_fp16, k_hgmma_bf16,
    k_hgmma_tf32, k_hgmma_fp8};

constexpr std::array k_sol{k_duration,        k_sm_throughput, k_compute_memory_throughput,
                           k_dram_throughput, k_l2_throughput, k_l1_throughput};

constexpr std::array k_memory{k_duration,    k_dram_read,         k_dram_write,       k_l1_hit_rate,
                              k_l2_hit_rate, k_ld_sectors,        k_ld_requests,      k_st_sectors,
                              k_st_requests, k_smem_ld_conflicts, k_smem_st_conflicts};

constexpr std::array k_occupancy{k_duration, k_achieved_occupancy, k_active_warps, k_eligible_warps};

constexpr std::array k_compute{
    k_duration,           k_ipc_elapsed,        k_ipc_active,      k_issued_ipc,        k_sm_busy,
    k_issue_slots,        k_pipe_inst_fma,      k_pipe_inst_alu,   k_pipe_inst_lsu,     k_pipe_inst_tma,
    k_pipe_inst_adu,      k_pipe_inst_cbu,      k_pipe_inst_tex,   k_pipe_inst_uniform, k_pipe_inst_xu,
    k_pipe_inst_fp64,     k_pipe_inst_tensor,   k_pipe_cycles_fma, k_pipe_cycles_alu,   k_pipe_cycles_fp64,
    k_pipe_cycles_shared, k_pipe_cycles_tensor, k_pipe_cycles_tma};

constexpr std::array k_warps{k_duration,
                             k_warp_cycles_per_issue,
                             k_issue_active,
                             k_eligible_warps,
                             k_stall_long_scoreboard,
                             k_stall_barrier,
                             k_stall_mio_throttle,
                             k_stall_not_selected,
                             k_stall_math_pipe_throttle,
                             k_stall_short_scoreboard,
                             k_stall_wait,
                             k_stall_lg_throttle,
                             k_stall_dispatch_stall,
                             k_stall_drain,
                             k_stall_membar,
                             k_stall_branch_resolving,
                             k_stall_no_instruction,
                             k_stall_imc_miss,
                             k_stall_tex_throttle,
                             k_stall_sleeping,
                             k_stall_gmma,
                             k_stall_misc,
                             k_stall_selected};

// The union of every set above, each metric once (the order of their first appearance).
template <std::size_t... N>
constexpr auto union_of(const std::array<MetricInfo, N>&... sets) {
  std::array<MetricInfo, (N + ...)> all{};
  std::size_t n = 0;
  auto add = [&](const auto& set) {
    for (const MetricInfo& m : set) {
      bool seen = false;
      for (std::size_t i = 0; i < n; ++i) seen = seen || all[i].name == m.name;
      if (!seen) all[n++] = m;
    }
  };
  (add(sets), ...);
  return std::pair{all, n};
}
constexpr auto k_detailed_all = union_of(k_quick, k_roofline, k_sol, k_memory, k_occupancy, k_compute, k_warps);
constexpr std::span<const MetricInfo> k_detailed{k_detailed_all.first.data(), k_detailed_all.second};

constexpr std::array k_sets{
    MetricSet{"quick",
              "Duration, DRAM/L2/L1 bytes and achieved occupancy: bandwidth against the memory ceilings; "
              "1 replay pass on H100.",
              k_quick},
    MetricSet{"roofline",
              "quick + CUDA-core FLOP counts per precision + tensor-core counters: each kernel on the "
              "hierarchical roofline; 2-3 passes on H100.",
              k_roofline},
    MetricSet{"sol",
              "Speed of Light: compute and memory throughput as % of peak, DRAM/L2/L1 separately; "
              "about 9 passes on H100.",
              k_sol},
    MetricSet{"memory",
              "Cache hit rates, global-access coalescing (sectors per request) and shared-memory bank "
              "conflicts.",
              k_memory},
    MetricSet{"occupancy", "Achieved vs theoretical occupancy and ready warps per scheduler: is latency hidden?",
              k_occupancy},
    MetricSet{"compute",
              "Compute Workload Analysis: executed and issued IPC, SM and issue-slot busy, and the utilization of "
              "each pipe (FMA, ALU, LSU, TMA, ADU, CBU, TEX, uniform, XU, FP64, tensor): which pipe is busiest? "
              "9 passes on H100.",
              k_compute},
    MetricSet{"warps",
              "Warp State Statistics: cycles between a warp's issued instructions and the stall reasons that fill "
              "them (long scoreboard, barrier, MIO throttle, not selected, ...): why do warps wait? 7 passes on H100.",
              k_warps},
    MetricSet{"detailed",
              "Every set above in one run, as Nsight Compute's --set detailed (Speed of Light, memory, occupancy, "
              "compute workload, warp states, roofline counters): 78 metrics in 18 passes on H100.",
              k_detailed},
};

}  // namespace

std::span<const MetricSet> metric_sets() { return k_sets; }

const MetricSet* find_metric_set(std::string_view name) {
  for (const auto& set : k_sets) {
    if (set.name == name) return &set;
  }
  return nullptr;
}

std::vector<std::string> set_metric_names(const MetricSet& set) {
  std::vector<std::string> names;
  names.reserve(set.metrics.size());
  for (const auto& m : set.metrics) {
    if (std::find(names.begin(), names.end(), m.name) == names.end()) names.emplace_back(m.name);
  }
  return names;
}

const MetricInfo* find_metric_info(std::string_view name) {
  for (const auto& set : k_sets) {
    for (const auto& m : set.metrics) {
      if (m.name == name) return &m;
    }
  }
  return nullptr;
}

std::string metric_header(std::string_view m) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 43> kHeaders{{
      {metric::k_duration, "GPU Time"},
      {metric::k_dram_read, "DRAM Read"},
      {metric::k_dram_write, "DRAM Write"},
      {metric::k_l2_bytes, "L2 Bytes"},
      {metric::k_l1_bytes, "L1 Bytes"},
      {metric::k_achieved_occupancy, "Achieved Occ"},
      {metric::k_active_warps, "Active Warps"},
      {metric::k_theoretical_occupancy, "Max Warps"},
      {metric::k_eligible_warps, "Eligible Warps"},
      {metric::k_ffma, "FFMA"},
      {metric::k_fadd, "FADD"},
      {metric::k_fmul, "FMUL"},
      {metric::k_dfma, "DFMA"},
      {metric::k_dadd, "DADD"},
      {metric::k_dmul, "DMUL"},
      {metric::k_hfma, "HFMA"},
      {metric::k_hadd, "HADD"},
      {metric::k_hmul, "HMUL"},
      {metric::k_tensor_inst, "Tensor Inst"},
      {metric::k_hgmma_fp16, "HGMMA FP16"},
      {metric::k_hgmma_bf16, "HGMMA BF16"},
      {metric::k_hgmma_tf32, "HGMMA TF32"},
      {metric::k_hgmma_fp8, "Tensor FP8"},
      {metric::k_sm_throughput, "SM Thr"},
      {metric::k_compute_memory_throughput, "Mem Thr"},
      {metric::k_dram_throughput, "DRAM Thr"},
      {metric::k_l2_throughput, "L2 Thr"},
      {metric::k_l1_throughput, "L1 Thr"},
      {metric::k_ipc_elapsed, "IPC Elapsed"},
      {metric::k_ipc_active, "IPC Active"},
      {metric::k_issued_ipc, "Issued IPC"},
      {metric::k_sm_busy, "SM Busy"},
      {metric::k_issue_slots, "Issue Slots"},
      {metric::k_warp_cycles_per_issue, "Cycles/Issue"},
      {metric::k_issue_active, "Issue Active"},
      {"l1tex__t_sector_hit_rate.pct", "L1 Hit"},
      {"lts__t_sector_hit_rate.pct", "L2 Hit"},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "Ld Sectors"},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "Ld Requests"},
      {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "St Sectors"},
      {"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "St Requests"},
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "Smem Ld Confl"},
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "Smem St Confl"},
  }};
  for (const auto& [name, header] : kHeaders)
    if (name == m) return std::string(header);
  // Families: pipe utilisation and stall reasons, named by their middle part.
  const auto middle = [&](std::string_view prefix, std::string_view suffix) -> std::optional<std::string_view> {
    if (!m.starts_with(prefix) || !m.ends_with(suffix) || m.size() <= prefix.size() + suffix.size())
      return std::nullopt;
    return m.substr(prefix.size(), m.size() - prefix.size() - suffix.size());
  };
  std::string upper;
  if (const auto pipe = middle(metric::k_pipe_inst_prefix, metric::k_pipe_suffix)) {
    for (char c : *pipe) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return "Pipe " + upper;
  }
  if (const auto pipe = middle(metric::k_pipe_cycles_prefix, "_cycles_active" + std::string(metric::k_pipe_suffix))) {
    for (char c : *pipe) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return "Pipe " + upper + " Cyc";
  }
  if (const auto reason = middle(metric::k_stall_prefix, metric::k_stall_suffix))
    return "Stall " + std::string(*reason);
  return std::string(m);
}

Report metric_set_report(const MetricSet& set) {
  Report r;
  r.name = "metric_set_" + std::string(set.name);
  r.title = "--set " + std::string(set.name) + ": " + std::string(set.summary);
  r.add_column("Metric", "", ColumnType::kText)
      .add_column("Unit", "", ColumnType::kText)
      .add_column("Meaning", "", ColumnType::kText)
      .add_column("Source", "", ColumnType::kText)
      .add_column("Header", "", ColumnType::kText);  // short header in kernels' table; last, for csv readers
  for (const MetricInfo& m : set.metrics)
    r.rows.push_back({std::string(m.name), std::string(m.unit), std::string(m.description), std::string(m.source),
                      metric_header(m.name)});
  return r;
}

}  // namespace gpuscope::core::kernels
