// TransferBench: host <-> device copies (pinned and pageable), both directions at once, and
// peer-to-peer copies between two GPUs.
//
// Pinned copies are timed by the timing engine (CUDA events around cudaMemcpyAsync);
// pageable ones on the host (steady_clock around cudaMemcpy), since the driver's staging
// through its own pinned buffers happens on the CPU, partly outside any event. Checks: the
// destination's word sum (on the GPU or the host) against the pattern's closed form.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/device_facts.hpp"
#include "bench/nvml.hpp"
#include "peak/benchmarks.hpp"
#include "peak/checksums.hpp"

namespace gpuscope::peak::detail {
namespace {

constexpr std::size_t kFullBytes = std::size_t{256} << 20;
constexpr std::size_t kQuickBytes = std::size_t{64} << 20;
constexpr std::uint32_t kH2dSeed = 0x7a000001u, kD2hSeed = 0x7a000002u, kPeerSeed = 0x7a000003u;

}  // namespace

struct TransferBench::State {
  explicit State(std::size_t n)
      : bytes(n),
        vectors(n / 16),
        host_a(n, cudaHostAllocDefault),
        host_b(n, cudaHostAllocDefault),
        dev_a(n),
        dev_b(n),
        scratch(sizeof(std::uint32_t)) {}
  std::size_t bytes = 0;  // per copy; a multiple of kPatternGranule vectors
  std::size_t vectors = 0;
  Stream stream, second;  // `second` carries the D2H half of the bidirectional copy
  SyncEvent fork, join;
  PinnedBuffer host_a, host_b;
  std::vector<std::uint32_t> pageable;
  DeviceBuffer dev_a, dev_b, scratch;
};

TransferBench::TransferBench(const Context& ctx)
    : m_ctx(ctx), m_state(std::make_unique<State>(ctx.quick ? kQuickBytes : kFullBytes)) {}

TransferBench::~TransferBench() = default;

namespace {

std::span<std::uint32_t> words(void* p, std::size_t bytes) { return {static_cast<std::uint32_t*>(p), bytes / 4}; }

// Host-timed repetitions of `copy` (seconds per byte, so that 1 / median is bytes/s) until
// the budget is spent, at least `min_reps`.
Ceiling host_timed_copy(const Context& ctx, std::string_view name, std::size_t bytes, const std::function<void()>& copy,
                        std::string method) {
  using clock = std::chrono::steady_clock;
  const bench::Nvml& nvml = bench::Nvml::instance();
  copy();  // warm-up: first-touch of the pages, driver staging buffers
  const double sm_before = nvml.sm_clock_mhz(ctx.device);
  std::vector<double> per_byte;
  const auto start = clock::now();
  const int min_reps = ctx.quick ? 5 : 10;
  while (static_cast<int>(per_byte.size()) < min_reps ||
         std::chrono::duration<double>(clock::now() - start).count() < ctx.budget_s) {
    const auto t0 = clock::now();
    copy();
    per_byte.push_back(std::chrono::duration<double>(clock::now() - t0).count() / static_cast<double>(bytes));
    if (per_byte.size() >= 1000) break;
  }
  return ceiling_from_host_samples(name, std::move(per_byte), true, sm_before, nvml.sm_clock_mhz(ctx.device),
                                   nvml.mem_clock_mhz(ctx.device), std::move(method));
}

// The engine's timing of one cudaMemcpyAsync per call (pinned memory: fully asynchronous).
bench::TimingResult time_async_copy(const Context& ctx, void* dst, const void* src, std::size_t bytes,
                                    cudaMemcpyKind kind) {
  return bench::time_gpu([&](cudaStream_t st) { GPUSCOPE_CUDA_CALL(cudaMemcpyAsync(dst, src, bytes, kind, st)); },
                         ctx.timing(bench::Mode::kHot, 1));
}

std::string sum_detail(std::uint32_t got, std::uint32_t want) {
  return "destination sums to " + std::to_string(got) + ", want " + std::to_string(want);
}

}  // namespace

Ceiling TransferBench::h2d(bool pinned) {
  State& s = *m_state;
  const std::string size = format_bytes(static_cast<double>(s.bytes));
  Ceiling c;
  if (pinned) {
    fill_pattern_host(words(s.host_a.get(), s.bytes), kH2dSeed);
    const bench::TimingResult t =
        time_async_copy(m_ctx, s.dev_a.get(), s.host_a.get(), s.bytes, cudaMemcpyHostToDevice);
    c = ceiling_from_timing("h2d_pinned", static_cast<double>(s.bytes), t,
                            "cudaMemcpyAsync host to device, " + size + " from cudaHostAlloc memory");
  } else {
    s.pageable.assign(s.bytes / 4, 0);
    fill_pattern_host(s.pageable, kH2dSeed);
    c = host_timed_copy(
        m_ctx, "h2d_pageable", s.bytes,
        [&] { GPUSCOPE_CUDA_CALL(cudaMemcpy(s.dev_a.get(), s.pageable.data(), s.bytes, cudaMemcpyHostToDevice)); },
        "cudaMemcpy host to device, " + size + " from malloc'd (pageable) memory");
  }
  const std::uint32_t got = device_word_sum(s.dev_a.get(), s.vectors, s.scratch, s.stream.get());
  const std::uint32_t want = pattern_sum(s.vectors, kH2dSeed);
  mark_verified(c, got == want, sum_detail(got, want));
  return c;
}

Ceiling TransferBench::d2h(bool pinned) {
  State& s = *m_state;
  const std::string size = format_bytes(static_cast<double>(s.bytes));
  fill_pattern_device(s.dev_a.get(), s.vectors, kD2hSeed, s.stream.get());
  GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(s.stream.get()));
  Ceiling c;
  std::span<const std::uint32_t> landed;
  if (pinned) {
    const bench::TimingResult t =
        time_async_copy(m_ctx, s.host_b.get(), s.dev_a.get(), s.bytes, cudaMemcpyDeviceToHost);
    c = ceiling_from_timing("d2h_pinned", static_cast<double>(s.bytes), t,
                            "cudaMemcpyAsync device to host, " + size + " into cudaHostAlloc memory");
    landed = words(s.host_b.get(), s.bytes);
  } else {
    s.pageable.assign(s.bytes / 4, 0);
    c = host_timed_copy(
        m_ctx, "d2h_pageable", s.bytes,
        [&] { GPUSCOPE_CUDA_CALL(cudaMemcpy(s.pageable.data(), s.dev_a.get(), s.bytes, cudaMemcpyDeviceToHost)); },
        "cudaMemcpy device to host, " + size + " into malloc'd (pageable) memory");
    landed = s.pageable;
  }
  const std::uint32_t got = word_sum_host(landed), want = pattern_sum(s.vectors, kD2hSeed);
  mark_verified(c, got == want, sum_detail(got, want));
  return c;
}

Ceiling TransferBench::bidirectional() {
  State& s = *m_state;
  fill_pattern_host(words(s.host_a.get(), s.bytes), kH2dSeed);
  fill_pattern_device(s.dev_b.get(), s.vectors, kD2hSeed, s.stream.get());
  GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(s.stream.get()));
  // H2D on the timed stream, D2H on `second`, forked from and joined back into it.
  const bench::TimingResult t = bench::time_gpu(
      [&](cudaStream_t st) {
        GPUSCOPE_CUDA_CALL(cudaEventRecord(s.fork.get(), st));
        GPUSCOPE_CUDA_CALL(cudaStreamWaitEvent(s.second.get(), s.fork.get(), 0));
        GPUSCOPE_CUDA_CALL(cudaMemcpyAsync(s.dev_a.get(), s.host_a.get(), s.bytes, cudaMemcpyHostToDevice, st));
        GPUSCOPE_CUDA_CALL(
            cudaMemcpyAsync(s.host_b.get(), s.dev_b.get(), s.bytes, cudaMemcpyDeviceToHost, s.second.get()));
        GPUSCOPE_CUDA_CALL(cudaEventRecord(s.join.get(), s.second.get()));
        GPUSCOPE_CUDA_CALL(cudaStreamWaitEvent(st, s.join.get(), 0));
      },
      m_ctx.timing(bench::Mode::kHot, 1));
  Ceiling c = ceiling_from_timing("bidir_pinned", 2.0 * static_cast<double>(s.bytes), t,
                                  "cudaMemcpyAsync host to device and device to host at once on two streams, " +
                                      format_bytes(static_cast<double>(s.bytes)) +
                                      " each way, cudaHostAlloc memory (both directions counted)");
  const std::uint32_t got_h2d = device_word_sum(s.dev_a.get(), s.vectors, s.scratch, s.stream.get());
  const std::uint32_t got_d2h = word_sum_host(words(s.host_b.get(), s.bytes));
  const std::uint32_t want_h2d = pattern_sum(s.vectors, kH2dSeed), want_d2h = pattern_sum(s.vectors, kD2hSeed);
  mark_verified(c, got_h2d == want_h2d && got_d2h == want_d2h,
                "H2D " + sum_detail(got_h2d, want_h2d) + "; D2H " + sum_detail(got_d2h, want_d2h));
  return c;
}

namespace {

// Peer access from `from` to `to` (already enabled is fine); leaves `from` current.
void enable_peer(int from, int to) {
  GPUSCOPE_CUDA_CALL(cudaSetDevice(from));
  const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled)
    (void)cudaGetLastError();
  else
    GPUSCOPE_CUDA_CALL(e);
}

// cudaMemcpyPeerAsync of `bytes` from GPU `src` to GPU `dst`, timed on `src`; the destination's
// word sum is checked on `dst`. Leaves `src` current.
Ceiling measure_pair(const Context& ctx, int src, int dst, std::size_t bytes, std::size_t vectors) {
  enable_peer(dst, src);
  DeviceBuffer remote(bytes), remote_scratch(sizeof(std::uint32_t));  // on dst
  enable_peer(src, dst);
  DeviceBuffer local(bytes);  // on src
  {
    Stream fill;
    fill_pattern_device(local.get(), vectors, kPeerSeed, fill.get());
    GPUSCOPE_CUDA_CALL(cudaStreamSynchronize(fill.get()));
  }
  const bench::TimingResult t = bench::time_gpu(
      [&](cudaStream_t st) { GPUSCOPE_CUDA_CALL(cudaMemcpyPeerAsync(remote.get(), dst, local.get(), src, bytes, st)); },
      ctx.timing(bench::Mode::kHot, 1));
  Ceiling c = ceiling_from_timing("p2p", static_cast<double>(bytes), t,
                                  "cudaMemcpyPeerAsync GPU " + std::to_string(src) + " to GPU " + std::to_string(dst) +
                                      ", " + format_bytes(static_cast<double>(bytes)) + ", peer access enabled");
  GPUSCOPE_CUDA_CALL(cudaSetDevice(dst));
  std::uint32_t got = 0;
  {
    Stream check;
    got = device_word_sum(remote.get(), vectors, remote_scratch, check.get());
  }
  GPUSCOPE_CUDA_CALL(cudaSetDevice(src));
  const std::uint32_t want = pattern_sum(vectors, kPeerSeed);
  mark_verified(c, got == want, sum_detail(got, want));
  return c;
}

}  // namespace

Ceiling TransferBench::peer_to_peer() {
  const State& s = *m_state;
  int count = 0;
  GPUSCOPE_CUDA_CALL(cudaGetDeviceCount(&count));
  if (count < 2) throw NotMeasured("one GPU visible: peer-to-peer needs two");
  std::vector<std::string> uuids;
  for (int d = 0; d < count; ++d) uuids.push_back(bench::query_device_facts(d).uuid);
  std::vector<PeerLink> links;
  std::vector<std::string> no_access;
  Ceiling slowest;
  bool all_verified = true;
  for (int a = 0; a < count; ++a)
    for (int b = 0; b < count; ++b) {
      if (a == b) continue;
      int can = 0;
      GPUSCOPE_CUDA_CALL(cudaDeviceCanAccessPeer(&can, a, b));
      if (can == 0) {
        no_access.push_back(std::to_string(a) + " to " + std::to_string(b));
        continue;
      }
      Ceiling c = measure_pair(m_ctx, a, b, s.bytes, s.vectors);
      links.push_back(PeerLink{a, b, uuids[static_cast<std::size_t>(a)], uuids[static_cast<std::size_t>(b)], c.measured,
                               c.verified});
      all_verified = all_verified && c.verified;
      if (links.size() == 1 || c.measured < slowest.measured) slowest = std::move(c);
    }
  GPUSCOPE_CUDA_CALL(cudaSetDevice(m_ctx.device));
  if (links.empty()) throw NotMeasured("no pair of the " + std::to_string(count) + " visible GPUs has peer access");
  if (!no_access.empty()) {
    std::string pairs;
    for (const std::string& x : no_access) pairs += (pairs.empty() ? "GPU " : ", GPU ") + x;
    m_ctx.warn("p2p: no peer access from " + pairs + ": not measured");
  }
  slowest.method += "; the slowest of " + std::to_string(links.size()) +
                    " GPU pairs (every ordered pair of visible GPUs; each pair in the profile's peer_links)";
  slowest.verified = all_verified;
  if (m_ctx.peer_links != nullptr) *m_ctx.peer_links = std::move(links);
  return slowest;
}

}  // namespace gpuscope::peak::detail
