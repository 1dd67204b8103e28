// Realistic H100 counter sets and ceilings for the tests of core/kernel_derive (the
// numbers) and analyze/kernel_explain (the sentences said about them).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "core/bench_derive.hpp"
#include "core/kernel_derive.hpp"
#include "core/machine_profile.hpp"

namespace gpuscope::core::kernels::testing {

inline bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// H100-like measured ceilings (B/s, FLOP/s); launch_rate 400k/s → launch threshold 5 µs.
inline MachineProfile h100() {
  MachineProfile p;
  p.device.name = "NVIDIA H100 80GB HBM3";
  p.device.uuid = "GPU-1";
  p.device.sm_count = 132;
  for (auto [name, v] : std::initializer_list<std::pair<const char*, double>>{{"dram_read", 3.1e12},
                                                                              {"dram_write", 3.0e12},
                                                                              {"dram_copy", 3.0e12},
                                                                              {"l2_read", 10e12},
                                                                              {"shared_memory", 30e12},
                                                                              {"fp64_fma", 50e12},
                                                                              {"fp32_fma", 60e12},
                                                                              {"fp16_fma", 120e12},
                                                                              {"tensor_fp16", 780e12},
                                                                              {"tensor_bf16", 790e12},
                                                                              {"tensor_fp8", 1500e12},
                                                                              {"launch_rate", 4e5}}) {
    Ceiling c;
    c.name = name;
    c.measured = v;
    p.ceilings.push_back(c);
  }
  return p;
}

inline KernelDevice h100_device() {
  KernelDevice d;
  d.sm_count = 132;
  d.limits.cc_major = 9;
  d.limits.max_warps_per_sm = 64;
  d.limits.max_blocks_per_sm = 32;
  d.limits.max_registers_per_sm = 65536;
  d.limits.max_registers_per_block = 65536;
  d.limits.max_shared_memory_per_sm = 233472;
  d.limits.max_threads_per_block = 1024;
  return d;
}

// H100 theoretical ceilings (core::theoretical_profile): cc 9.0, 132 SMs at 1980 MHz,
// memory at 2619 MHz × 5120 bits; no L2 ceiling.
inline MachineProfile h100_theoretical() {
  DeviceFacts dev;
  dev.cc_major = 9;
  dev.sm_count = 132;
  dev.max_mem_clock_mhz = 2619;
  dev.memory_bus_width_bits = 5120;
  return core::theoretical_profile(dev, 1980);
}

inline LaunchFacts big_grid() { return LaunchFacts{132 * 16, 256, 32, 0}; }

inline constexpr double kGiB = 1024.0 * 1024 * 1024;

// A 1 GiB device-to-device copy: 2 GiB of DRAM traffic in 0.72 ms on a 3.0 TB/s ceiling.
inline MetricValues copy_1gib() {
  return {{"gpu__time_duration.sum", 0.72e6}, {"dram__bytes_read.sum", kGiB},
          {"dram__bytes_write.sum", kGiB},    {"lts__t_bytes.sum", 2 * kGiB},
          {"l1tex__t_bytes.sum", kGiB},       {"sm__warps_active.avg.pct_of_peak_sustained_active", 85}};
}

// bf16 GEMM 8192³ through wgmma: 2·8192³ FLOP in 1.4 ms.
inline double gemm_flop() { return 2.0 * 8192.0 * 8192.0 * 8192.0; }
inline MetricValues gemm() {
  return {{"gpu__time_duration.sum", 1.4e6},
          {"dram__bytes_read.sum", 1.0e9},
          {"dram__bytes_write.sum", 0.2e9},
          {"lts__t_bytes.sum", 8e9},
          {"l1tex__t_bytes.sum", 2e9},
          {"sm__warps_active.avg.pct_of_peak_sustained_active", 12},
          {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 0},
          {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 0},
          {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 6.7e7},
          {"sm__inst_executed_pipe_tensor.sum", 4.2e6},
          {"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum", gemm_flop() / 512},
          {"sm__ops_path_tensor_op_hgmma_src_fp16.sum", 0}};
}
inline TensorCalibration gemm_calibration() { return {{"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum", 512}}; }

// A 2 µs kernel of one 32-thread block moving 256 bytes.
inline MetricValues tiny_kernel() {
  return {{"gpu__time_duration.sum", 2000}, {"dram__bytes_read.sum", 128},
          {"dram__bytes_write.sum", 128},   {"lts__t_bytes.sum", 256},
          {"l1tex__t_bytes.sum", 256},      {"sm__warps_active.avg.pct_of_peak_sustained_active", 1.5}};
}

// A dependent FP32 chain: 5 % of FP32, little memory traffic.
inline MetricValues fp32_chain(double achieved_occupancy) {
  return {{"gpu__time_duration.sum", 1e6},
          {"dram__bytes_read.sum", 1e7},
          {"dram__bytes_write.sum", 1e7},
          {"lts__t_bytes.sum", 2e7},
          {"l1tex__t_bytes.sum", 2e7},
          {"sm__warps_active.avg.pct_of_peak_sustained_active", achieved_occupancy},
          {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 1.5e9},
          {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 0},
          {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 0}};
}

// fp32_chain without its FLOP counters, as the quick set collects it.
inline MetricValues quick_chain() {
  MetricValues v = fp32_chain(50);
  for (const char* op : {"ffma", "fadd", "fmul"})
    v.erase(std::string("smsp__sass_thread_inst_executed_op_") + op + "_pred_on.sum");
  return v;
}

// Speed-of-Light percentages only (the sol set): memory 40 % > compute 33 %.
inline MetricValues sol_memory() {
  return {{"gpu__time_duration.sum", 1e5},
          {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 33},
          {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 40},
          {"dram__throughput.avg.pct_of_peak_sustained_elapsed", 40},
          {"lts__throughput.avg.pct_of_peak_sustained_elapsed", 21},
          {"l1tex__throughput.avg.pct_of_peak_sustained_elapsed", 15}};
}

// Speed-of-Light percentages only: compute 85 % > memory 20 %.
inline MetricValues sol_compute() {
  return {{"gpu__time_duration.sum", 1e5},
          {"sm__throughput.avg.pct_of_peak_sustained_elapsed", 85},
          {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 20}};
}

}  // namespace gpuscope::core::kernels::testing
