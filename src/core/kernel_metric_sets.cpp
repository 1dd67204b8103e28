#include "core/kernel_metric_sets.hpp"

#include <algorithm>
#include <array>

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

Report metric_set_report(const MetricSet& set) {
  Report r;
  r.name = "metric_set_" + std::string(set.name);
  r.title = "--set " + std::string(set.name) + ": " + std::string(set.summary);
  r.add_column("Metric", "", ColumnType::kText)
      .add_column("Unit", "", ColumnType::kText)
      .add_column("Meaning", "", ColumnType::kText)
      .add_column("Source", "", ColumnType::kText);
  for (const MetricInfo& m : set.metrics)
    r.rows.push_back({std::string(m.name), std::string(m.unit), std::string(m.description), std::string(m.source)});
  return r;
}

}  // namespace gpuscope::core::kernels
