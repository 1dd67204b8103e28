// fill: the deterministic input values of the operator suite, computable on the host and
// on the device from the element index alone. The GPU fills inputs with these functions
// (kernels.hpp: fill_exact / fill_uniform) and the CPU references recompute any input
// element from its index, so no input ever has to be copied back to be checked.
//
//   value_exact(i, seed)    odd multiples of 1/32 in [-63/32, 63/32] (6 significant bits):
//                           exact in f32, f16 and bf16; a product of two is exact in f32;
//                           a sum of up to 2^30 of them stays far below 2^19, so every
//                           partial sum is exact in f32 and any summation order gives the
//                           same result. Used where the check must be exact (elementwise
//                           ops, mean, transpose).
//   value_uniform(i, seed)  uniform in [-1, 1) with 24 random bits (exact in f32; rounded
//                           to nearest even when stored as f16/bf16). Full-entropy data for
//                           the matrix products (tensor-core power and clocks depend on the
//                           bit patterns: zeros or short mantissas run faster than the
//                           random data users have) and for softmax.
// The index is mixed by splitmix64 (S. Vigna, public domain), so neighbouring elements
// are uncorrelated. Header-only; compiles under nvcc and a plain C++ compiler.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GPUSCOPE_HD __host__ __device__
#else
#define GPUSCOPE_HD
#endif

namespace gpuscope::bench::ops::fill {

GPUSCOPE_HD inline std::uint64_t mix(std::uint64_t index, std::uint32_t seed) {
  std::uint64_t z = index + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(seed) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The numerator of value_exact: an odd integer in [-63, 63].
GPUSCOPE_HD inline int exact_numerator(std::uint64_t index, std::uint32_t seed) {
  return 2 * static_cast<int>(mix(index, seed) >> 58) - 63;
}

GPUSCOPE_HD inline float value_exact(std::uint64_t index, std::uint32_t seed) {
  return static_cast<float>(exact_numerator(index, seed)) * 0.03125f;
}

GPUSCOPE_HD inline float value_uniform(std::uint64_t index, std::uint32_t seed) {
  return static_cast<float>(mix(index, seed) >> 40) * 0x1p-23f - 1.0f;
}

/// Seeds of the inputs, one per operand, so x and y of vector_add differ.
inline constexpr std::uint32_t kSeedX = 1, kSeedY = 2, kSeedA = 3, kSeedB = 4;

}  // namespace gpuscope::bench::ops::fill
