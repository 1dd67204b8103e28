#include "bench/ops/dtype.hpp"

#include <stdexcept>
#include <string>

namespace gpuscope::bench::ops {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kTF32:
      return "tf32";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
  }
  return "?";
}

DType parse_dtype(std::string_view text) {
  if (text == "f32" || text == "fp32" || text == "float32" || text == "float") return DType::kF32;
  if (text == "tf32") return DType::kTF32;
  if (text == "f16" || text == "fp16" || text == "float16" || text == "half") return DType::kF16;
  if (text == "bf16" || text == "bfloat16") return DType::kBF16;
  throw std::invalid_argument("unknown dtype '" + std::string(text) + "' (valid: f32, tf32, f16, bf16)");
}

int dtype_bytes(DType dtype) { return dtype == DType::kF16 || dtype == DType::kBF16 ? 2 : 4; }

double dtype_unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return 0x1p-11;
    case DType::kBF16:
      return 0x1p-8;
    default:
      return 0x1p-24;
  }
}

double dtype_subnormal_step(DType dtype) {
  switch (dtype) {
    case DType::kF16:
      return 0x1p-24;
    case DType::kBF16:
      return 0x1p-133;
    default:
      return 0x1p-149;
  }
}

}  // namespace gpuscope::bench::ops
