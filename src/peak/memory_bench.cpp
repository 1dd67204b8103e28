// MemoryBench: DRAM read / write / copy, L2 read and shared-memory bandwidth.
//
// Each DRAM ceiling is the best of several methods, found by the coarse-to-fine sweep of
// peak/sweep.hpp: the hand-written kernels in every configuration of
// peak/dram_configs.hpp (width, unroll, cache hint, grid), and what CUDA itself offers
// (cudaMemcpyAsync and cudaMemsetAsync, cub::DeviceTransform, cub::DeviceReduce::Sum).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "peak/benchmarks.hpp"
#include "peak/checksums.hpp"

namespace gpuscope::peak::detail {
namespace {

constexpr std::uint32_t kWriteSeed = 0x5eed0001u, kReadSeed = 0x5eed0002u, kCopySeed = 0x5eed0003u,
                        kL2Seed = 0x5eed0004u;
constexpr int kL2Passes = 200;  // passes over the L2 working set per call
constexpr int kSharedIterations = 4096;
// Each DRAM buffer: 32 × the L2, at least 4 GiB (PyTorch's copy reference moves a 4 GiB
// tensor), at most an eighth of the device memory (two buffers), at least 256 MiB.
constexpr std::size_t kL2Multiple = 32;
constexpr std::size_t kDramBytes = std::size_t{4} << 30, kMinDramBytes = std::size_t{256} << 20;
constexpr unsigned char kMemsetByte = 0x5A;
// The sweep per DRAM ceiling (peak/context.hpp, SweepPlan): 3 s of coarse timings (0.8 s
// with --quick), up to 4 (2) finalists within 3 % of the best, each 0.3 of the run's budget.
constexpr SweepPlan kSweep{3.0, 4, 0.03, 0.3, 1e-9, "GB/s"}, kQuickSweep{0.8, 2, 0.03, 0.3, 1e-9, "GB/s"};

std::size_t round_up(std::size_t v, std::size_t m) { return (v + m - 1) / m * m; }

std::string check_sum(std::uint32_t got, std::uint32_t want) {
  return got == want ? std::string() : "got " + std::to_string(got) + ", want " + std::to_string(want);
}

void set_verified(Ceiling& c, std::uint32_t got, std::uint32_t want) {
  const std::string wrong = check_sum(got, want);
  mark_verified(c, wrong.empty(), wrong);
}

// The expected word sum of `words` words all equal to the memset byte repeated.
std::uint32_t memset_sum(std::size_t words) {
  const std::uint32_t word = 0x01010101u * kMemsetByte;
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(words) * word);
}

}  // namespace

MemoryBench::MemoryBench(const Context& ctx) : m_ctx(ctx) {
  // A multiple of every step of every kernel configuration (kDramBlock × width 2 × unroll
  // 8 vectors) times SMs × 8: a persistent grid of 1, 2, 4 or 8 blocks per SM divides the
  // steps evenly (no block does one more step than the others).
  const std::size_t granule = static_cast<std::size_t>(ctx.facts.sm_count) * kDramBlock * 2 * 8 * 8;
  std::size_t bytes = std::max(kL2Multiple * static_cast<std::size_t>(ctx.facts.l2_bytes), kDramBytes);
  bytes = std::min<std::size_t>(bytes, static_cast<std::size_t>(ctx.facts.global_memory_bytes) / 8);
  bytes = std::max(bytes, kMinDramBytes);
  m_vectors = round_up(bytes / 16, granule);
  m_a = DeviceBuffer(m_vectors * 16);
  m_b = DeviceBuffer(m_vectors * 16);
  m_checksum = DeviceBuffer(sizeof(std::uint32_t));
  m_cub_temp = DeviceBuffer(std::max<std::size_t>(cub_sum_temp_bytes(m_vectors * 4), 16));
}

void MemoryBench::add_kernel_trials(DramOp op, const std::string& family, const void* src, void* dst,
                                    std::uint32_t seed, std::vector<Trial>& trials, std::vector<Enqueue>& enqueue) {
  const int sms = m_ctx.facts.sm_count;
  for (const DramConfig& c : dram_configs(op, m_ctx.quick, [](const DramConfig& k) { return dram_blocks_per_sm(k); })) {
    const int resident = std::max(1, dram_blocks_per_sm(c));
    trials.push_back(
        Trial{family, dram_label(c) + " (" + format_bytes(bytes_in_flight_per_sm(c, resident)) + " in flight per SM)",
              kUnknown, kUnknown, false});
    enqueue.push_back([this, c, sms, src, dst, seed](cudaStream_t s) {
      launch_dram(c, sms, src, dst, m_vectors, seed, m_checksum.as<std::uint32_t>(), s);
    });
  }
}

Ceiling MemoryBench::sweep(std::string_view name, double work, std::vector<Trial> trials,
                           const std::vector<Enqueue>& enqueue, const std::function<std::string(std::size_t)>& check) {
  std::optional<Ceiling> best = run_sweep(
      m_ctx, trials, m_ctx.quick ? kQuickSweep : kSweep, [&](std::size_t i, cudaStream_t s) { enqueue[i](s); },
      [&](std::size_t) { return work; },
      [&](std::size_t i, const bench::TimingResult& t) {
        Ceiling c = ceiling_from_timing(
            name, work, t,
            trials[i].family + ", " + trials[i].label + ", " + format_bytes(16.0 * m_vectors) + " per buffer");
        const std::string wrong = check(i);
        mark_verified(c, wrong.empty(), wrong);
        return c;
      });
  if (!best) throw NotMeasured("no method of " + std::string(name) + " could be timed");
  return std::move(*best);
}

Ceiling MemoryBench::dram_write() {
  const cudaStream_t st = m_stream.get();
  std::vector<Trial> trials{{"cudaMemsetAsync", "byte 0x5A"}, {"cub::DeviceTransform", "pattern words"}};
  std::vector<Enqueue> enqueue{
      [this](cudaStream_t s) { GPUSCOPE_CUDA_CALL(cudaMemsetAsync(m_a.get(), kMemsetByte, m_a.bytes(), s)); },
      [this](cudaStream_t s) { launch_cub_write_pattern(m_a.get(), m_vectors * 4, kWriteSeed, s); }};
  add_kernel_trials(DramOp::kWrite, "write kernel", nullptr, m_a.get(), kWriteSeed, trials, enqueue);
  return sweep("dram_write", 16.0 * m_vectors, std::move(trials), enqueue, [&](std::size_t i) {
    GPUSCOPE_CUDA_CALL(cudaMemsetAsync(m_a.get(), 0, m_a.bytes(), st));
    enqueue[i](st);
    const std::uint32_t want = i == 0 ? memset_sum(m_vectors * 4) : pattern_sum(m_vectors, kWriteSeed);
    return check_sum(device_word_sum(m_a.get(), m_vectors, m_checksum, st), want);
  });
}

Ceiling MemoryBench::dram_read() {
  const cudaStream_t st = m_stream.get();
  fill_pattern_device(m_a.get(), m_vectors, kReadSeed, st);
  GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(st));
  std::vector<Trial> trials{{"cub::DeviceReduce::Sum", "32-bit words"}};
  std::vector<Enqueue> enqueue{[this](cudaStream_t s) {
    launch_cub_sum(m_a.get(), m_vectors * 4, m_checksum.as<std::uint32_t>(), m_cub_temp.get(), m_cub_temp.bytes(), s);
  }};
  add_kernel_trials(DramOp::kRead, "read kernel", m_a.get(), nullptr, 0, trials, enqueue);
  // Every read trial adds into (or, cub, writes) m_checksum: run it once from a zero sum.
  return sweep("dram_read", 16.0 * m_vectors, std::move(trials), enqueue, [&](std::size_t i) {
    const std::uint32_t got = run_for_sum(m_checksum, st, [&](std::uint32_t*) { enqueue[i](st); });
    return check_sum(got, pattern_sum(m_vectors, kReadSeed));
  });
}

Ceiling MemoryBench::dram_copy() {
  const cudaStream_t st = m_stream.get();
  fill_pattern_device(m_a.get(), m_vectors, kCopySeed, st);
  GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(st));
  std::vector<Trial> trials{{"cudaMemcpyAsync", "device to device"}, {"cub::DeviceTransform", "32-bit words"}};
  std::vector<Enqueue> enqueue{
      [this](cudaStream_t s) {
        GPUSCOPE_CUDA_CALL(cudaMemcpyAsync(m_b.get(), m_a.get(), m_a.bytes(), cudaMemcpyDeviceToDevice, s));
      },
      [this](cudaStream_t s) { launch_cub_copy(m_a.get(), m_b.get(), m_vectors * 4, s); }};
  add_kernel_trials(DramOp::kCopy, "copy kernel", m_a.get(), m_b.get(), 0, trials, enqueue);
  return sweep("dram_copy", 2.0 * 16.0 * m_vectors, std::move(trials), enqueue, [&](std::size_t i) {
    GPUSCOPE_CUDA_CALL(cudaMemsetAsync(m_b.get(), 0, m_b.bytes(), st));
    enqueue[i](st);
    return check_sum(device_word_sum(m_b.get(), m_vectors, m_checksum, st), pattern_sum(m_vectors, kCopySeed));
  });
}

Ceiling MemoryBench::l2_read() {
  // The working set: a whole number of chunks per block (so every block reads as much),
  // at most half the L2; at least one chunk per block.
  const int block = 256;
  const int grid = m_ctx.facts.sm_count * std::max(1, l2_read_blocks_per_sm(block));
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
