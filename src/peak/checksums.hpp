// The values the host expects from the checksums of the `gpuscope peak` kernels
// (peak/kernels.hpp), computed on the host in closed form or by a short loop — never by
// rerunning the kernel's work. Pure functions (no CUDA), testable on the CPU machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "peak/kernels.hpp"

namespace gpuscope::peak::detail {

/// Word w of the pattern launch_write_pattern writes: w × 2654435761 + seed (mod 2^32).
[[nodiscard]] std::uint32_t pattern_word(std::uint64_t w, std::uint32_t seed);

/// Σ of the 4 × vectors pattern words (mod 2^32): what launch_read_sum adds over a buffer
/// holding the pattern.
[[nodiscard]] std::uint32_t pattern_sum(std::size_t vectors, std::uint32_t seed);

/// Writes the pattern into a host buffer of `words` 32-bit words (for H2D checks).
void fill_pattern_host(std::span<std::uint32_t> words, std::uint32_t seed);

/// Σ of the words (mod 2^32) of a host buffer (for D2H checks).
[[nodiscard]] std::uint32_t word_sum_host(std::span<const std::uint32_t> words);

/// What launch_shared_read_sum(iterations, checksum, grid) adds into *checksum (mod 2^32).
[[nodiscard]] std::uint32_t shared_read_expected(int iterations, int grid);

/// The omega constant Ω = e^-Ω = 0.5671432904097838...
[[nodiscard]] double omega_constant();

/// What every thread of launch_core(op, ...) writes (an even number of steps): the sum of
/// the chains' start values for FMA/IMAD chains; chains × Ω for __expf chains.
[[nodiscard]] double core_expected(CoreOp op, int chains);

/// Allowed |value - core_expected| for one thread's result: 0 for FMA/IMAD chains (the
/// arithmetic is exact), 1e-5 × chains for __expf (MUFU.EX2 is approximate to ~2 ulp and
/// the chain contracts errors by Ω per step).
[[nodiscard]] double core_tolerance(CoreOp op, int chains);

}  // namespace gpuscope::peak::detail
