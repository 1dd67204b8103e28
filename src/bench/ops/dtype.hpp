// dtype: the element types of the operator suite of `gpuscope bench` (bench/ops/).
//
//   f32   IEEE binary32, 4 bytes
//   tf32  stored as f32 (4 bytes); matrix products round the inputs to TF32 (10 stored
//         mantissa bits) on the tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32). gemm only.
//   f16   IEEE binary16 (__half), 2 bytes
//   bf16  bfloat16 (__nv_bfloat16), 2 bytes
// Names are the ones `--dtype` takes and BenchCase::dtype holds. Errors: parse_dtype
// throws std::invalid_argument naming the valid names. Pure C++ (no CUDA types).
#pragma once

#include <string_view>

namespace gpuscope::bench::ops {

enum class DType { kF32, kTF32, kF16, kBF16 };

/// "f32", "tf32", "f16", "bf16".
[[nodiscard]] std::string_view dtype_name(DType dtype);
/// Inverse of dtype_name (also accepts "fp32", "float32", "fp16", "half", "float16",
/// "bfloat16"); anything else → std::invalid_argument.
[[nodiscard]] DType parse_dtype(std::string_view text);
/// Bytes per stored element: 4, 4, 2, 2.
[[nodiscard]] int dtype_bytes(DType dtype);
/// Unit roundoff of the stored type, 2^-p with p the significand bits:
/// f32 2^-24, tf32 2^-24 (stored as f32), f16 2^-11, bf16 2^-8.
[[nodiscard]] double dtype_unit_roundoff(DType dtype);
/// The spacing of the dtype's subnormal numbers (f16 2^-24, bf16 2^-133, f32 2^-149): the
/// absolute rounding error of a result below the smallest normal (f16: 6.1e-5), where
/// the relative bound of dtype_unit_roundoff no longer holds.
[[nodiscard]] double dtype_subnormal_step(DType dtype);

}  // namespace gpuscope::bench::ops
