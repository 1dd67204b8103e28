#include "core/metric_attribution.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/saturating.hpp"

namespace gpuscope::core {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t kEnd = std::numeric_limits<std::int64_t>::max();

bool usable(const MetricSample& s) { return std::isfinite(s.value) && s.end_ns > s.start_ns; }

// A sample's value per ns of its length: its bytes attributed to 1 ns of overlap.
double per_ns(const MetricSample& s) { return s.value / static_cast<double>(sat_sub(s.end_ns, s.start_ns)); }

// The usable samples in start order.
std::vector<MetricSample> sorted_samples(std::span<const MetricSample> samples) {
  std::vector<MetricSample> out;
  out.reserve(samples.size());
  for (const MetricSample& s : samples)
    if (usable(s)) out.push_back(s);
  std::sort(out.begin(), out.end(),
            [](const MetricSample& a, const MetricSample& b) { return a.start_ns < b.start_ns; });
  return out;
}

}  // namespace

double MetricOverlap::mean() const { return weight_ns > 0 ? value_ns / weight_ns : kNaN; }

double MetricOverlap::rate() const { return weight_ns > 0 ? bytes / weight_ns : kNaN; }

double MetricOverlap::covered_share(std::int64_t of_ns) const {
  return of_ns > 0 ? static_cast<double>(covered_ns) / static_cast<double>(of_ns) : kNaN;
}

CounterValue counter_value(std::string_view unit, double value, std::int64_t duration_ns) {
  const double ns = duration_ns > 0 ? static_cast<double>(duration_ns) : kNaN;
  if (unit == "%") return {value, "%"};
  if (unit == "bytes") return {value / ns, "GB/s"};  // bytes per ns = GB/s
  if (unit == "Hz") return {value / 1e6, "MHz"};
  if (unit.empty()) return {value / ns * 1e9, "/s"};
  return {value, unit};
}

MetricAttribution::MetricAttribution(std::span<const KernelInterval> kernels, std::size_t keys)
    : m_kernels(kernels.begin(), kernels.end()), m_at_start(kernels.size()), m_out(keys) {
  m_events.reserve(2 * m_kernels.size());
  for (std::size_t i = 0; i < m_kernels.size(); ++i) {
    const KernelInterval& k = m_kernels[i];
    if (k.key >= keys) continue;
    ++m_out[k.key].instances;
    if (k.end_ns <= k.start_ns) continue;  // 0 ns: nothing to attribute
    m_out[k.key].kernel_ns = sat_add(m_out[k.key].kernel_ns, sat_sub(k.end_ns, k.start_ns));
    m_events.push_back({k.start_ns, true, i});
    m_events.push_back({k.end_ns, false, i});
  }
  // Only times matter: the integrals do not change within an instant, so events at the
  // same time may be handled in any order.
  std::sort(m_events.begin(), m_events.end(), [](const KernelEvent& a, const KernelEvent& b) { return a.t < b.t; });
}

void MetricAttribution::integrate_to(std::int64_t t) {
  if (!m_started) {
    m_started = true;
    m_t = t;
    return;
  }
  if (t <= m_t) return;
  const std::int64_t dt = sat_sub(t, m_t);
  const auto dt_d = static_cast<double>(dt);
  if (!m_running.empty()) {
    m_now.covered_ns = sat_add(m_now.covered_ns, dt);
    m_now.weight_ns += static_cast<double>(m_running.size()) * dt_d;
    m_now.value_ns += m_values * dt_d;
    m_now.bytes += m_values_per_ns * dt_d;
  }
  if (m_kernels_running >= 2) m_now.concurrent_ns = sat_add(m_now.concurrent_ns, dt);
  m_t = t;
}

void MetricAttribution::advance_to(std::int64_t t) {
  for (;;) {
    const bool kernel = m_next < m_events.size(), sample = !m_running.empty();
    if (!kernel && !sample) return;
    // Sample ends first at equal times (either order gives the same integrals).
    const bool sample_first = sample && (!kernel || m_running.front().end_ns <= m_events[m_next].t);
    const std::int64_t next_t = sample_first ? m_running.front().end_ns : m_events[m_next].t;
    if (next_t > t) return;
    if (sample_first) {
      integrate_to(next_t);
      std::pop_heap(m_running.begin(), m_running.end(), std::greater<>{});
      m_values -= m_running.back().value;
      m_values_per_ns -= m_running.back().per_ns;
      m_running.pop_back();
      if (m_running.empty()) m_values = m_values_per_ns = 0;  // no rounding left behind
      continue;
    }
    const KernelEvent& e = m_events[m_next++];
    integrate_to(e.t);
    if (e.start) {
      ++m_kernels_running;
      m_at_start[e.kernel] = m_now;
      continue;
    }
    --m_kernels_running;
    const Integrals& s = m_at_start[e.kernel];
    KernelMetricShare& k = m_out[m_kernels[e.kernel].key];
    k.concurrent_ns = sat_add(k.concurrent_ns, sat_sub(m_now.concurrent_ns, s.concurrent_ns));
    k.metric.covered_ns = sat_add(k.metric.covered_ns, sat_sub(m_now.covered_ns, s.covered_ns));
    k.metric.weight_ns += m_now.weight_ns - s.weight_ns;
    k.metric.value_ns += m_now.value_ns - s.value_ns;
    k.metric.bytes += m_now.bytes - s.bytes;
  }
}

void MetricAttribution::add(const MetricSample& sample) {
  if (!usable(sample)) return;
  advance_to(sample.start_ns);
  const std::int64_t start = m_started ? std::max(sample.start_ns, m_t) : sample.start_ns;
  if (sample.end_ns <= start) return;  // out of order and already over
  integrate_to(start);
  const Running r{sample.end_ns, sample.value, per_ns(sample)};
  m_running.push_back(r);
  std::push_heap(m_running.begin(), m_running.end(), std::greater<>{});
  m_values += r.value;
  m_values_per_ns += r.per_ns;
}

std::vector<KernelMetricShare> MetricAttribution::finish() {
  advance_to(kEnd);
  return std::move(m_out);
}

std::vector<KernelMetricShare> attribute_metric(std::span<const MetricSample> samples,
                                                std::span<const KernelInterval> kernels, std::size_t keys) {
  MetricAttribution a(kernels, keys);
  for (const MetricSample& s : sorted_samples(samples)) a.add(s);
  return a.finish();
}

MetricOverlap summarize_metric(std::span<const MetricSample> samples, std::int64_t from_ns, std::int64_t to_ns) {
  if (to_ns <= from_ns) return {};
  // The window is one kernel: its share is the samples' overlap with it.
  const KernelInterval window{from_ns, to_ns, 0};
  return attribute_metric(samples, std::span(&window, 1), 1).front().metric;
}

}  // namespace gpuscope::core
