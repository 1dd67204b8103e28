#include "core/memory_usage.hpp"

#include <algorithm>

#include "core/saturating.hpp"

namespace gpuscope::core {

std::int64_t GpuMemorySum::update(std::int64_t gpu, std::int64_t pid, std::int64_t device_id,
                                  std::int64_t in_use_bytes) {
  in_use_bytes = std::max<std::int64_t>(0, in_use_bytes);
  std::int64_t& level = m_level[{gpu, pid, device_id}];
  std::int64_t& total = m_total[gpu];
  // total - old + new, saturating: a damaged trace's levels may not add up.
  total = std::max<std::int64_t>(0, sat_add(sat_sub(total, level), in_use_bytes));
  level = in_use_bytes;
  return total;
}

std::int64_t GpuMemorySum::total(std::int64_t gpu) const {
  const auto it = m_total.find(gpu);
  return it == m_total.end() ? 0 : it->second;
}

WindowPeak peak_in(const std::vector<MemoryLevel>& series, std::int64_t start, std::int64_t end) {
  const auto before = [](const MemoryLevel& l, std::int64_t t) { return l.ts_ns < t; };
  const auto first = std::lower_bound(series.begin(), series.end(), start, before);
  const auto last = end > start ? std::lower_bound(first, series.end(), end, before) : first;
  WindowPeak p;
  p.first = static_cast<std::size_t>(first - series.begin());
  p.last = static_cast<std::size_t>(last - series.begin());
  p.start_bytes = first == series.begin() ? 0 : (first - 1)->in_use_bytes;
  p.peak_bytes = p.start_bytes;
  p.peak_ns = start;
  for (auto it = first; it != last; ++it) {
    if (it->in_use_bytes > p.peak_bytes) {
      p.peak_bytes = it->in_use_bytes;
      p.peak_ns = it->ts_ns;
      p.peak_index = static_cast<std::size_t>(it - series.begin());
    }
  }
  p.end_bytes = last == series.begin() ? 0 : (last - 1)->in_use_bytes;
  return p;
}

}  // namespace gpuscope::core
