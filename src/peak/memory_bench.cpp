// MemoryBench: DRAM read / write / copy, L2 read and shared-memory bandwidth.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <cstdint>
#include <string>

#include "peak/benchmarks.hpp"
#include "peak/checksums.hpp"

namespace gpuscope::peak::detail {
namespace {

constexpr int kUnrolls[] = {4, 8};  // 16-byte accesses in flight per thread (DRAM kernels)
constexpr std::uint32_t kWriteSeed = 0x5eed0001u, kReadSeed = 0x5eed0002u, kCopySeed = 0x5eed0003u,
                        kL2Seed = 0x5eed0004u;
constexpr int kL2Passes = 200;  // passes over the L2 working set per call
constexpr int kSharedIterations = 4096;
constexpr std::size_t kMinDramBytes = std::size_t{256} << 20;

std::size_t round_up(std::size_t v, std::size_t m) { return (v + m - 1) / m * m; }

void set_verified(Ceiling& c, std::uint32_t got, std::uint32_t want) {
  mark_verified(c, got == want, "got " + std::to_string(got) + ", want " + std::to_string(want));
}

}  // namespace

MemoryBench::MemoryBench(const Context& ctx) : m_ctx(ctx) {
  // Per unroll, one full wave: every SM holds as many blocks as the DRAM kernel that fits
  // fewest (write, read, copy differ only in registers).
  auto blocks = [&](int unroll) {
    int b = memory_blocks_per_sm(MemoryKernel::kCopy, unroll, m_block);
    b = std::min(b, memory_blocks_per_sm(MemoryKernel::kReadSum, unroll, m_block));
    b = std::min(b, memory_blocks_per_sm(MemoryKernel::kWritePattern, unroll, m_block));
    return std::max(1, b);
  };
  const int b4 = blocks(4), b8 = blocks(8);
  m_grid4 = ctx.facts.sm_count * b4;
  m_grid8 = ctx.facts.sm_count * b8;
  // Each buffer alone is >= 8 × L2 (so a copy's working set is >= 16 × L2), at most a
  // quarter of the device memory, and a whole number of grid-stride steps of both grids
  // (no bounds checks in the kernels): a multiple of SMs × block × 8 × lcm(b4, b8).
  const std::size_t granule =
      static_cast<std::size_t>(ctx.facts.sm_count) * m_block * 8 * static_cast<std::size_t>(std::lcm(b4, b8));
  std::size_t bytes = std::max<std::size_t>(8 * static_cast<std::size_t>(ctx.facts.l2_bytes), kMinDramBytes);
  bytes = std::min<std::size_t>(bytes, static_cast<std::size_t>(ctx.facts.global_memory_bytes) / 4);
  m_vectors = round_up(bytes / 16, granule);
  m_a = DeviceBuffer(m_vectors * 16);
  m_b = DeviceBuffer(m_vectors * 16);
  m_checksum = DeviceBuffer(sizeof(std::uint32_t));
}

Ceiling MemoryBench::fastest_unroll(std::string_view name, double work, const DramLaunch& launch,
                                    const std::string& what, int* best_unroll) {
  Ceiling best;
  // Per unroll, two grids: one full wave looping grid-stride (persistent), and one block per
  // block × unroll vectors (no loop, many waves: the shape of torch's and cudaMemcpy's
  // copies, which keeps more requests in flight while blocks retire on some chips).
  for (int unroll : kUnrolls)
    for (const bool persistent : {true, false}) {
      const int grid =
          persistent ? grid_of(unroll) : static_cast<int>(m_vectors / (static_cast<std::size_t>(m_block) * unroll));
      const bench::TimingResult t =
          bench::time_gpu([&](cudaStream_t s) { launch(unroll, grid, s); }, m_ctx.timing(bench::Mode::kHot, 0, 0.25));
      Ceiling c =
          ceiling_from_timing(name, work, t,
                              what + ", unroll " + std::to_string(unroll) +
                                  " (fastest of 4, 8 x one wave or one pass), grid " + std::to_string(grid) + " x " +
                                  std::to_string(m_block) + ", " + format_bytes(16.0 * m_vectors) + " per buffer");
      if (!std::isfinite(best.measured) || c.measured > best.measured) {
        best = std::move(c);
        *best_unroll = unroll;
      }
    }
  return best;
}

Ceiling MemoryBench::dram_write() {
  int unroll = 0;
  Ceiling c = fastest_unroll(
      "dram_write", 16.0 * m_vectors,
      [&](int u, int grid, cudaStream_t s) {
        launch_write_pattern(m_a.get(), m_vectors, kWriteSeed, grid, m_block, u, s);
      },
      "write_pattern kernel, 16-byte stores", &unroll);
  set_verified(c, device_word_sum(m_a.get(), m_vectors, m_checksum, m_stream.get()),
               pattern_sum(m_vectors, kWriteSeed));
  return c;
}

Ceiling MemoryBench::dram_read() {
  fill_pattern_device(m_a.get(), m_vectors, kReadSeed, m_stream.get());
  GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(m_stream.get()));
  auto launch = [&](int u, int grid, cudaStream_t s) {
    launch_read_sum(m_a.get(), m_vectors, m_checksum.as<std::uint32_t>(), grid, m_block, u, s);
  };
  int unroll = 0;
  Ceiling c = fastest_unroll("dram_read", 16.0 * m_vectors, launch, "read_sum kernel, 16-byte loads", &unroll);
  // The fastest variant once more, from a zero sum.
  const cudaStream_t st = m_stream.get();
  const std::uint32_t got = run_for_sum(m_checksum, st, [&](std::uint32_t* sum) {
    launch_read_sum(m_a.get(), m_vectors, sum, grid_of(unroll), m_block, unroll, st);
  });
  set_verified(c, got, pattern_sum(m_vectors, kReadSeed));
  return c;
}

Ceiling MemoryBench::dram_copy() {
  fill_pattern_device(m_a.get(), m_vectors, kCopySeed, m_stream.get());
  GPUSCOPE_CUDA_CALL(cudaMemsetAsync(m_b.get(), 0, m_b.bytes(), m_stream.get()));
  GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(m_stream.get()));
  int unroll = 0;
  Ceiling c = fastest_unroll(
      "dram_copy", 2.0 * 16.0 * m_vectors,
      [&](int u, int grid, cudaStream_t s) { launch_copy(m_a.get(), m_b.get(), m_vectors, grid, m_block, u, s); },
      "copy kernel, 16-byte loads and stores, read + write bytes counted", &unroll);
  set_verified(c, device_word_sum(m_b.get(), m_vectors, m_checksum, m_stream.get()), pattern_sum(m_vectors, kCopySeed));
  return c;
}

Ceiling MemoryBench::l2_read() {
  // The working set: a whole number of chunks per block (so every block reads as much),
  // at most half the L2; at least one chunk per block.
  const int block = 256;
  const int grid = m_ctx.facts.sm_count * std::max(1, memory_blocks_per_sm(MemoryKernel::kL2ReadSum, 0, block));
  const std::size_t chunk = static_cast<std::size_t>(block) * 4;  // vectors per chunk (l2_read_sum_kernel)
  const std::size_t half_l2_chunks = static_cast<std::size_t>(m_ctx.facts.l2_bytes) / 2 / 16 / chunk;
  const std::size_t chunks = std::max<std::size_t>(1, half_l2_chunks / grid) * grid;
  const std::size_t vectors = chunks * chunk;  // a multiple of 1024: fits the helpers' 512
  fill_pattern_device(m_a.get(), vectors, kL2Seed, m_stream.get());
  GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(m_stream.get()));
  const bench::TimingResult t = bench::time_gpu(
      [&](cudaStream_t s) {
        launch_l2_read_sum(m_a.get(), vectors, kL2Passes, m_checksum.as<std::uint32_t>(), grid, block, s);
      },
      m_ctx.timing(bench::Mode::kHot));
  Ceiling c = ceiling_from_timing("l2_read", 16.0 * vectors * kL2Passes, t,
                                  "l2_read_sum kernel, 16-byte ld.global.cg loads, grid " + std::to_string(grid) +
                                      " x " + std::to_string(block) + ", " + format_bytes(16.0 * vectors) + " read " +
                                      std::to_string(kL2Passes) + " times per call");
  const cudaStream_t st = m_stream.get();
  const std::uint32_t got = run_for_sum(m_checksum, st, [&](std::uint32_t* sum) {
    launch_l2_read_sum(m_a.get(), vectors, kL2Passes, sum, grid, block, st);
  });
  set_verified(c, got, static_cast<std::uint32_t>(kL2Passes) * pattern_sum(vectors, kL2Seed));
  return c;
}

Ceiling MemoryBench::shared_memory() {
  const int grid = m_ctx.facts.sm_count * std::max(1, shared_read_blocks_per_sm());
  const bench::TimingResult t = bench::time_gpu(
      [&](cudaStream_t s) { launch_shared_read_sum(kSharedIterations, m_checksum.as<std::uint32_t>(), grid, s); },
      m_ctx.timing(bench::Mode::kHot));
  const double bytes = static_cast<double>(grid) * kSharedBlock * kSharedIterations * kSharedLoadsPerIter * 16.0;
  Ceiling c = ceiling_from_timing("shared_memory", bytes, t,
                                  "shared_read_sum kernel, 16-byte ld.shared loads without bank conflicts, grid " +
                                      std::to_string(grid) + " x " + std::to_string(kSharedBlock) + ", " +
                                      std::to_string(kSharedIterations) + " iterations");
  const cudaStream_t st = m_stream.get();
  const std::uint32_t got = run_for_sum(
      m_checksum, st, [&](std::uint32_t* sum) { launch_shared_read_sum(kSharedIterations, sum, grid, st); });
  set_verified(c, got, shared_read_expected(kSharedIterations, grid));
  return c;
}

}  // namespace gpuscope::peak::detail
