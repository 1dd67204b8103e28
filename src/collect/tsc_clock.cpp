#include "collect/tsc_clock.hpp"

#include <cmath>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace gpuscope::collect {

bool tsc_usable() noexcept {
  static const bool usable = [] {
#if defined(__x86_64__)
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid_max(0x80000000u, nullptr) < 0x80000007u) return false;
    if (__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) == 0) return false;
    return (edx & (1u << 8)) != 0;  // invariant TSC
#else
    return false;
#endif
  }();
  return usable;
}

TscSpan::TscSpan(TscAnchor earlier, TscAnchor later, double fallback_ns_per_tick) noexcept
    : m_base(earlier), m_ns_per_tick(fallback_ns_per_tick) {
  if (later.tsc > earlier.tsc && later.ns >= earlier.ns) {
    m_ns_per_tick = static_cast<double>(later.ns - earlier.ns) / static_cast<double>(later.tsc - earlier.tsc);
  }
}

std::uint64_t TscSpan::to_ns(std::uint64_t tsc) const noexcept {
  // Offsets from the base in double: a span of seconds is ~1e10 ticks, well inside 53 bits.
  if (tsc >= m_base.tsc) {
    return m_base.ns + static_cast<std::uint64_t>(std::llround(static_cast<double>(tsc - m_base.tsc) * m_ns_per_tick));
  }
  const auto back = static_cast<std::uint64_t>(std::llround(static_cast<double>(m_base.tsc - tsc) * m_ns_per_tick));
  return back < m_base.ns ? m_base.ns - back : 0;
}

}  // namespace gpuscope::collect
