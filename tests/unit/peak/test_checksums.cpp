// The host's expected checksums (peak/checksums.hpp) against brute force over what the
// kernels do (peak/kernels.hpp, memory_kernels.cu, compute_kernels.cu).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "peak/checksums.hpp"

using namespace gpuscope::peak::detail;

TEST(PatternSum, MatchesBruteForce) {
  for (std::size_t vectors : {0u, 1u, 7u, 512u, 100000u})
    for (std::uint32_t seed : {0u, 1u, 0x5eed0003u, 0xffffffffu}) {
      std::uint32_t sum = 0;
      for (std::uint64_t w = 0; w < 4 * vectors; ++w) sum += pattern_word(w, seed);
      EXPECT_EQ(pattern_sum(vectors, seed), sum) << vectors << " vectors, seed " << seed;
    }
}

TEST(PatternSum, HostFillAndWordSumAgree) {
  std::vector<std::uint32_t> words(4 * 1000);
  fill_pattern_host(words, 42);
  EXPECT_EQ(words[5], 5u * 2654435761u + 42u);
  EXPECT_EQ(word_sum_host(words), pattern_sum(1000, 42));
}

// shared_read_sum_kernel: thread t, iteration i, load u reads vector
// k = ((32 i) & 1023) + t + 256 u, whose words are 4k .. 4k+3.
TEST(SharedReadExpected, MatchesSimulatedKernel) {
  for (int iterations : {0, 1, 2, 31, 32, 33, 100})
    for (int grid : {1, 3}) {
      std::uint32_t sum = 0;
      for (int b = 0; b < grid; ++b)
        for (int t = 0; t < kSharedBlock; ++t)
          for (int i = 0; i < iterations; ++i)
            for (int u = 0; u < kSharedLoadsPerIter; ++u) {
              const std::uint32_t k = static_cast<std::uint32_t>(((i * 32) & 1023) + t + kSharedBlock * u);
              ASSERT_LT(k, static_cast<std::uint32_t>(kSharedVectors));
              sum += 4 * k + (4 * k + 1) + (4 * k + 2) + (4 * k + 3);
            }
      EXPECT_EQ(shared_read_expected(iterations, grid), sum) << iterations << " iterations, grid " << grid;
    }
}

TEST(CoreExpected, FmaChainsReturnToTheirStart) {
  // x -> -x + 3 twice is x again: the sum of the start values c + 1 (two lanes: c+1, c+2).
  EXPECT_EQ(core_expected(CoreOp::kFp32Fma, 16), 136.0);
  EXPECT_EQ(core_expected(CoreOp::kFp64Fma, 8), 36.0);
  EXPECT_EQ(core_expected(CoreOp::kInt32Imad, 16), 136.0);
  EXPECT_EQ(core_expected(CoreOp::kFp16Fma, 16), 136.0 + 152.0);
  EXPECT_EQ(core_tolerance(CoreOp::kFp32Fma, 16), 0.0);
  // Simulate one FP32 chain: exact.
  float x = 5.0f;
  for (int i = 0; i < 1000; ++i) x = std::fma(x, -1.0f, 3.0f);
  EXPECT_EQ(x, 5.0f);
}

TEST(CoreExpected, ExpChainsConvergeToOmega) {
  EXPECT_NEAR(omega_constant(), 0.5671432904097838, 1e-15);
  EXPECT_NEAR(std::exp(-omega_constant()), omega_constant(), 1e-15);
  EXPECT_NEAR(core_expected(CoreOp::kSfuExp, 8), 8 * 0.5671432904097838, 1e-12);
  EXPECT_GT(core_tolerance(CoreOp::kSfuExp, 8), 0.0);
}
