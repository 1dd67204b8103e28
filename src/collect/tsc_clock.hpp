// tsc_clock: the cheapest timestamp a per-call hot path can take, and its conversion to the
// collector's clock. The PyTorch observer's range edges (collect/torch_ops_abi.hpp, two per
// operator call, thousands per training step) are stamped with the CPU's time-stamp counter
// (RDTSC: no vDSO sequence lock, no multiply; measured in docs/performance.md against
// clock_gettime) and converted on the writer thread, after the drain, by linear interpolation
// between two anchors: (TSC, clock) pairs read together, one before the drained records were
// stamped and one after. PyTorch's own profiler stamps its events the same way
// (c10::getApproximateTime, c10::ApproximateClockToUnixTimeConverter).
//
// Used only on x86-64 where the TSC is invariant (CPUID leaf 0x80000007, EDX bit 8: a constant
// rate in every P- and C-state, the flag Linux shows as nonstop_tsc); elsewhere tsc_usable() is
// false and the hot path reads the clock itself. No CUPTI calls: unit-tested in
// tests/unit/collect/test_tsc_clock.cpp.
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace gpuscope::collect {

/// True when read_tsc() gives an invariant counter (x86-64, CPUID 0x80000007 EDX bit 8). Read
/// once (cached).
[[nodiscard]] bool tsc_usable() noexcept;

/// The time-stamp counter (ticks; 0 where there is none: call only when tsc_usable()).
[[nodiscard]] inline std::uint64_t read_tsc() noexcept {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return 0;
#endif
}

/// A TSC reading and a clock reading taken together (ticks, ns).
struct TscAnchor {
  std::uint64_t tsc = 0;
  std::uint64_t ns = 0;
};

/// Reads (TSC, clock()) `tries` times and keeps the pair whose two TSC readings around the
/// clock read are closest (the clock read's own duration is its uncertainty); `clock` returns
/// ns. The TSC of the pair is the midpoint of the two.
template <class Clock>
[[nodiscard]] TscAnchor take_tsc_anchor(Clock&& clock, int tries = 5) {
  TscAnchor best;
  std::uint64_t best_width = UINT64_MAX;
  for (int i = 0; i < tries; ++i) {
    const std::uint64_t t0 = read_tsc();
    const std::uint64_t ns = clock();
    const std::uint64_t t1 = read_tsc();
    if (t1 >= t0 && t1 - t0 < best_width) {
      best_width = t1 - t0;
      best = TscAnchor{t0 + (t1 - t0) / 2, ns};
    }
  }
  return best;
}

/// TSC ticks -> clock ns between two anchors: exact at both, linear between them, the same
/// line extended outside (a record stamped just before the earlier anchor). With the two
/// anchors at the same tick (or the later one behind) the rate is `fallback_ns_per_tick`.
class TscSpan {
 public:
  TscSpan(TscAnchor earlier, TscAnchor later, double fallback_ns_per_tick) noexcept;
  [[nodiscard]] std::uint64_t to_ns(std::uint64_t tsc) const noexcept;
  [[nodiscard]] double ns_per_tick() const noexcept { return m_ns_per_tick; }

 private:
  TscAnchor m_base;
  double m_ns_per_tick = 1.0;
};

}  // namespace gpuscope::collect
