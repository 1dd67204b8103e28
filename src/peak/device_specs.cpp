#include "peak/device_specs.hpp"

#include <array>
#include <cmath>
#include <utility>

namespace gpuscope::peak {
namespace {

struct Rate {
  std::string_view ceiling;
  double cc80;
  double cc90;
};

// See the table in device_specs.hpp.
constexpr std::array kRates{
    Rate{"fp64_fma", 64, 128},       Rate{"fp32_fma", 128, 256},         Rate{"fp16_fma", 512, 512},
    Rate{"bf16_fma", 256, 512},      Rate{"int32_imad", 128, 128},       Rate{"sfu_expf", 16, 16},
    Rate{"shared_memory", 128, 128}, Rate{"tensor_fp16", 2048, 4096},    Rate{"tensor_bf16", 2048, 4096},
    Rate{"tensor_tf32", 1024, 2048}, Rate{"tensor_fp8", kUnknown, 8192}, Rate{"tensor_int8", 4096, 8192},
};

struct Datasheet {
  std::string_view device_name;
  int sm_count;
  std::string_view source;
  double dram;  // B/s
  double fp64, fp32, tf32, fp16, bf16, fp8, int8;
  double pcie_per_direction;  // B/s
};

constexpr double T = 1e12, G = 1e9;
constexpr std::array kDatasheets{
    Datasheet{"NVIDIA H100 80GB HBM3", 132, "NVIDIA H100 Tensor Core GPU datasheet (2023), H100 SXM5", 3.35 * T, 34 * T,
              67 * T, 989.0 / 2 * T, 1979.0 / 2 * T, 1979.0 / 2 * T, 3958.0 / 2 * T, 3958.0 / 2 * T, 64 * G},
    Datasheet{"NVIDIA H100 PCIe", 114, "NVIDIA H100 Tensor Core GPU datasheet (2023), H100 PCIe", 2.0 * T, 26 * T,
              51 * T, 756.0 / 2 * T, 1513.0 / 2 * T, 1513.0 / 2 * T, 3026.0 / 2 * T, 3026.0 / 2 * T, 64 * G},
    Datasheet{"NVIDIA H200", 132, "NVIDIA H200 Tensor Core GPU datasheet (2024), H200 SXM", 4.8 * T, 34 * T, 67 * T,
              989.0 / 2 * T, 1979.0 / 2 * T, 1979.0 / 2 * T, 3958.0 / 2 * T, 3958.0 / 2 * T, 64 * G},
};

const Datasheet* find_datasheet(const DeviceFacts& d) {
  for (const Datasheet& s : kDatasheets)
    if (d.name == s.device_name && d.sm_count == s.sm_count) return &s;
  return nullptr;
}

bool usable(double v) { return std::isfinite(v) && v > 0; }

}  // namespace

double per_sm_per_clock(std::string_view ceiling, int cc_major, int cc_minor) {
  for (const Rate& r : kRates) {
    if (r.ceiling != ceiling) continue;
    if (cc_major == 8 && cc_minor == 0) return r.cc80;
    if (cc_major == 9 && cc_minor == 0) return r.cc90;
    return kUnknown;
  }
  return kUnknown;
}

double theoretical_value(std::string_view ceiling, const DeviceFacts& d, double sm_clock_mhz, double mem_clock_mhz) {
  if (ceiling == "dram_read" || ceiling == "dram_write" || ceiling == "dram_copy") {
    if (!usable(mem_clock_mhz) || d.memory_bus_width_bits <= 0) return kUnknown;
    return mem_clock_mhz * 1e6 * 2.0 * d.memory_bus_width_bits / 8.0;
  }
  const double per_clock = per_sm_per_clock(ceiling, d.cc_major, d.cc_minor);
  if (!usable(per_clock) || !usable(sm_clock_mhz) || d.sm_count <= 0) return kUnknown;
  return d.sm_count * per_clock * sm_clock_mhz * 1e6;
}

double datasheet_value(std::string_view c, const DeviceFacts& d) {
  const Datasheet* s = find_datasheet(d);
  if (s == nullptr) return kUnknown;
  if (c == "dram_read" || c == "dram_write" || c == "dram_copy") return s->dram;
  if (c == "fp64_fma") return s->fp64;
  if (c == "fp32_fma") return s->fp32;
  if (c == "tensor_tf32") return s->tf32;
  if (c == "tensor_fp16") return s->fp16;
  if (c == "tensor_bf16") return s->bf16;
  if (c == "tensor_fp8") return s->fp8;
  if (c == "tensor_int8") return s->int8;
  if (c == "h2d_pinned" || c == "d2h_pinned") return s->pcie_per_direction;
  if (c == "bidir_pinned") return 2 * s->pcie_per_direction;
  return kUnknown;
}

std::string datasheet_source(const DeviceFacts& d) {
  const Datasheet* s = find_datasheet(d);
  return s == nullptr ? std::string() : std::string(s->source);
}

}  // namespace gpuscope::peak
