#include "peak/checksums.hpp"

#include <cmath>

namespace gpuscope::peak::detail {

namespace {
constexpr std::uint32_t kPatternMultiplier = 2654435761u;  // as in memory_kernels.cu
}

std::uint32_t pattern_word(std::uint64_t w, std::uint32_t seed) {
  return static_cast<std::uint32_t>(w) * kPatternMultiplier + seed;
}

std::uint32_t pattern_sum(std::size_t vectors, std::uint32_t seed) {
  // Σ_{w<n} (w·A + seed) = A·n(n-1)/2 + n·seed (mod 2^32); n(n-1)/2 in 128 bits.
  const unsigned __int128 n = static_cast<unsigned __int128>(vectors) * 4u;
  const auto triangle = static_cast<std::uint32_t>(n == 0 ? 0 : n * (n - 1) / 2);
  return triangle * kPatternMultiplier + static_cast<std::uint32_t>(n) * seed;
}

void fill_pattern_host(std::span<std::uint32_t> words, std::uint32_t seed) {
  for (std::size_t w = 0; w < words.size(); ++w) words[w] = pattern_word(w, seed);
}

std::uint32_t word_sum_host(std::span<const std::uint32_t> words) {
  std::uint32_t s = 0;
  for (std::uint32_t w : words) s += w;
  return s;
}

std::uint32_t shared_read_expected(int iterations, int grid) {
  // Thread t, iteration i, load u reads vector k = ((32 i) & 1023) + t + 256 u, whose
  // words sum to 16 k + 6. Summed over t < 256 and u < 4 for one i:
  //   Σ (16 k + 6) = 16 (1024 · off(i) + 4 · Σt + 256 · 256 · Σu) + 6 · 1024.
  constexpr std::uint64_t threads = kSharedBlock, loads = kSharedLoadsPerIter;
  constexpr std::uint64_t sum_t = threads * (threads - 1) / 2, sum_u = loads * (loads - 1) / 2;
  std::uint64_t per_block = 0;  // mod 2^64 is fine: only the low 32 bits matter
  for (int i = 0; i < iterations; ++i) {
    const std::uint64_t off = static_cast<std::uint64_t>((i * 32) & 1023);
    per_block += 16 * (threads * loads * off + loads * sum_t + threads * kSharedBlock * sum_u) + 6 * threads * loads;
  }
  return static_cast<std::uint32_t>(per_block * static_cast<std::uint64_t>(grid));
}

double omega_constant() {
  double x = 0.5;
  for (int i = 0; i < 200; ++i) x = std::exp(-x);  // contraction by ~0.567 per step
  return x;
}

double core_expected(CoreOp op, int chains) {
  double s = 0;
  switch (op) {
    case CoreOp::kSfuExp:
      return chains * omega_constant();
    case CoreOp::kFp16Fma:
    case CoreOp::kBf16Fma:  // two lanes per chain, starting at c + 1 and c + 2
      for (int c = 0; c < chains; ++c) s += (c + 1.0) + (c + 2.0);
      return s;
    default:  // one value per chain, starting at c + 1
      for (int c = 0; c < chains; ++c) s += c + 1.0;
      return s;
  }
}

double core_tolerance(CoreOp op, int chains) { return op == CoreOp::kSfuExp ? 1e-5 * chains : 0.0; }

}  // namespace gpuscope::peak::detail
