#include "core/metric_attribution.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/saturating.hpp"

namespace gpuscope::core {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool usable(const MetricSample& s) { return std::isfinite(s.value) && s.end_ns > s.start_ns; }

// A sample's value per ns of its length: its bytes attributed to 1 ns of overlap.
double per_ns(const MetricSample& s) { return s.value / static_cast<double>(sat_sub(s.end_ns, s.start_ns)); }

// The running integrals of the sweep, from its first event to now.
struct Integrals {
  std::int64_t covered_ns = 0;     // ∫ [some sample active] dt
  std::int64_t concurrent_ns = 0;  // ∫ [two or more kernels active] dt
  double weight_ns = 0;            // ∫ (active samples) dt
  double value_ns = 0;             // ∫ Σ active values dt
  double bytes = 0;                // ∫ Σ active values per ns dt
};

enum class EventKind : std::uint8_t { kSampleStart, kSampleEnd, kKernelStart, kKernelEnd };

struct Event {
  std::int64_t t = 0;
  EventKind kind = EventKind::kSampleStart;
  std::size_t index = 0;
};

}  // namespace

double MetricOverlap::mean() const { return weight_ns > 0 ? value_ns / weight_ns : kNaN; }

double MetricOverlap::rate() const { return weight_ns > 0 ? bytes / weight_ns : kNaN; }

double MetricOverlap::covered_share(std::int64_t of_ns) const {
  return of_ns > 0 ? static_cast<double>(covered_ns) / static_cast<double>(of_ns) : kNaN;
}

std::vector<KernelMetricShare> attribute_metric(std::span<const MetricSample> samples,
                                                std::span<const KernelInterval> kernels, std::size_t keys) {
  std::vector<KernelMetricShare> out(keys);
  std::vector<Event> events;
  events.reserve(2 * (samples.size() + kernels.size()));
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!usable(samples[i])) continue;
    events.push_back({samples[i].start_ns, EventKind::kSampleStart, i});
    events.push_back({samples[i].end_ns, EventKind::kSampleEnd, i});
  }
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const KernelInterval& k = kernels[i];
    if (k.key >= keys) continue;
    ++out[k.key].instances;
    if (k.end_ns <= k.start_ns) continue;  // 0 ns: nothing to attribute
    out[k.key].kernel_ns = sat_add(out[k.key].kernel_ns, sat_sub(k.end_ns, k.start_ns));
    events.push_back({k.start_ns, EventKind::kKernelStart, i});
    events.push_back({k.end_ns, EventKind::kKernelEnd, i});
  }
  // Only times matter: the integrals do not change inside one instant, so events at the
  // same time may come in any order.
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.t < b.t; });

  Integrals now;
  std::vector<Integrals> at_start(kernels.size());  // the integrals when each kernel started
  std::int64_t active_samples = 0, active_kernels = 0;
  double values = 0, values_per_ns = 0;  // Σ over the active samples
  std::int64_t prev_t = events.empty() ? 0 : events.front().t;
  for (const Event& e : events) {
    if (e.t != prev_t) {
      const std::int64_t dt = sat_sub(e.t, prev_t);
      const auto dt_d = static_cast<double>(dt);
      if (active_samples > 0) {
        now.covered_ns = sat_add(now.covered_ns, dt);
        now.weight_ns += static_cast<double>(active_samples) * dt_d;
        now.value_ns += values * dt_d;
        now.bytes += values_per_ns * dt_d;
      }
      if (active_kernels >= 2) now.concurrent_ns = sat_add(now.concurrent_ns, dt);
      prev_t = e.t;
    }
    switch (e.kind) {
      case EventKind::kSampleStart:
        ++active_samples;
        values += samples[e.index].value;
        values_per_ns += per_ns(samples[e.index]);
        break;
      case EventKind::kSampleEnd:
        if (--active_samples == 0) {
          values = values_per_ns = 0;  // no rounding left behind by the additions
        } else {
          values -= samples[e.index].value;
          values_per_ns -= per_ns(samples[e.index]);
        }
        break;
      case EventKind::kKernelStart:
        ++active_kernels;
        at_start[e.index] = now;
        break;
      case EventKind::kKernelEnd: {
        --active_kernels;
        const Integrals& s = at_start[e.index];
        KernelMetricShare& k = out[kernels[e.index].key];
        k.concurrent_ns = sat_add(k.concurrent_ns, sat_sub(now.concurrent_ns, s.concurrent_ns));
        k.metric.covered_ns = sat_add(k.metric.covered_ns, sat_sub(now.covered_ns, s.covered_ns));
        k.metric.weight_ns += now.weight_ns - s.weight_ns;
        k.metric.value_ns += now.value_ns - s.value_ns;
        k.metric.bytes += now.bytes - s.bytes;
        break;
      }
    }
  }
  return out;
}

MetricOverlap summarize_metric(std::span<const MetricSample> samples, std::int64_t from_ns, std::int64_t to_ns) {
  MetricOverlap out;
  if (to_ns <= from_ns) return out;
  // Σ over samples clipped to the window; covered_ns is the union of the clipped samples
  // (sorted copies of their spans), the rest per sample.
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  for (const MetricSample& s : samples) {
    if (!usable(s)) continue;
    const std::int64_t start = std::max(s.start_ns, from_ns), end = std::min(s.end_ns, to_ns);
    if (end <= start) continue;
    const auto overlap = static_cast<double>(sat_sub(end, start));
    out.weight_ns += overlap;
    out.value_ns += s.value * overlap;
    out.bytes += per_ns(s) * overlap;
    spans.emplace_back(start, end);
  }
  std::sort(spans.begin(), spans.end());
  std::int64_t reach = std::numeric_limits<std::int64_t>::min();  // end of the union so far
  for (const auto& [start, end] : spans) {
    if (end <= reach) continue;
    out.covered_ns = sat_add(out.covered_ns, sat_sub(end, std::max(start, reach)));
    reach = end;
  }
  return out;
}

}  // namespace gpuscope::core
