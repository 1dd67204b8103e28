// Theoretical and datasheet values of the ceilings `gpuscope peak` measures.
//
// Theoretical value = the device's units × the clock observed during the measurement:
//   CUDA cores, tensor cores, shared memory:  SM count × per-SM rate per clock × SM clock
//   DRAM (read, write, copy):                 memory clock × 2 (double data rate) × bus width / 8
// Per-SM rates per clock, in the catalog's counted units (an FMA counts 2 FLOP, an IMAD
// 2 OP, an __expf 1 OP; bytes for shared memory):
//
//   cc   FP64  FP32  FP16  BF16  IMAD  SFU  shared  T-FP16 T-BF16 T-TF32 T-FP8 T-INT8
//   8.0   64   128   512   256   128   16   128 B   2048   2048   1024    -    4096
//   9.0  128   256   512   512   128   16   128 B   4096   4096   2048   8192  8192
//
// Sources: CUDA C++ Programming Guide, "Arithmetic Instructions" throughput table (results
// per clock per SM: FP64 32/64, FP32 64/128, FP16 256, 32-bit IMAD 64, MUFU ex2 16;
// cc 8.0/9.0); its "Shared Memory" section (32 banks × 4 bytes per clock); NVIDIA A100
// and H100 architecture whitepapers (dense tensor FLOP per clock per SM; A100 BF16
// non-tensor 39 TFLOPS = half its FP16 rate). The DRAM formula is NVIDIA's "theoretical
// peak bandwidth" (M. Harris, "How to Implement Performance Metrics in CUDA C/C++",
// NVIDIA Technical Blog, 2012: memoryClockRate × (memoryBusWidth / 8) × 2); for HBM3 on
// H100 SXM it gives 2619 MHz × 2 × 5120 / 8 = 3.35 TB/s, the datasheet value.
// No formula (NaN): L2, host transfers and peer copies (the link speed is not read),
// launch and synchronization costs. Unknown compute capability: NaN.
//
// Datasheet values (dense, i.e. the datasheets' "with sparsity" figures halved), matched by
// the exact CUDA device name and SM count:
//   "NVIDIA H100 80GB HBM3" (H100 SXM5, 132 SMs), "NVIDIA H100 PCIe" (114 SMs):
//     NVIDIA H100 Tensor Core GPU datasheet (2023);
//   "NVIDIA H200" (H200 SXM, 132 SMs): NVIDIA H200 Tensor Core GPU datasheet (2024).
// Host transfers: PCIe Gen5 x16, 128 GB/s both directions together (64 GB/s each) per the
// same datasheets. Units: the catalog's (B/s, FLOP/s, OP/s). Pure functions (no CUDA).
#pragma once

#include <string>
#include <string_view>

#include "core/machine_profile.hpp"

namespace gpuscope::peak {

/// The catalog's units per clock per SM of compute ceiling `ceiling` (or bytes per clock
/// per SM for shared_memory) on compute capability major.minor; NaN when unknown.
[[nodiscard]] double per_sm_per_clock(std::string_view ceiling, int cc_major, int cc_minor);

/// The theoretical value of `ceiling` on `device` at the given clocks (MHz), in the
/// catalog unit; NaN where no formula is known or a needed input is NaN or 0.
[[nodiscard]] double theoretical_value(std::string_view ceiling, const DeviceFacts& device, double sm_clock_mhz,
                                       double mem_clock_mhz);

/// The vendor datasheet value of `ceiling` for `device`, NaN when the GPU model or the
/// ceiling is not in the table.
[[nodiscard]] double datasheet_value(std::string_view ceiling, const DeviceFacts& device);

/// The datasheet the values of `device` come from ("NVIDIA H100 Tensor Core GPU datasheet
/// (2023), H100 SXM5"), or "" for a GPU not in the table.
[[nodiscard]] std::string datasheet_source(const DeviceFacts& device);

}  // namespace gpuscope::peak
