#include "analyze/metrics/gpu_metrics_data.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "analyze/common/analysis_cache.hpp"
#include "analyze/common/gpu_busy.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze::detail {
namespace {

using store::Database;
using store::Statement;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The distinct values of an indexed column, one index seek each (SELECT DISTINCT would
// walk every sample): `next_sql` gives the smallest value above its last parameter.
std::vector<std::int64_t> distinct_by_seek(Database& db, const std::string& next_sql,
                                           const std::vector<std::int64_t>& prefix) {
  std::vector<std::int64_t> out;
  Statement st = db.prepare(next_sql);
  std::int64_t after = std::numeric_limits<std::int64_t>::min();
  for (;;) {
    st.rewind();
    int i = 1;
    for (std::int64_t p : prefix) st.bind(i++, p);
    st.bind(i, after);
    if (!st.step() || st.is_null(0) || st.column_int(0) <= after) break;  // (a damaged index could repeat)
    after = st.column_int(0);
    out.push_back(after);
  }
  return out;
}

// The GPU index of gpu_metrics.device_id `device` (file comment of the header).
std::int64_t gpu_of(Database& db, const GpuIndexMap& gpus, std::int64_t device, const std::string& uuid) {
  if (!uuid.empty()) {
    Statement st = db.prepare("SELECT pid, device_id FROM devices WHERE uuid = ? ORDER BY pid, device_id LIMIT 1");
    st.bind(1, std::string_view(uuid));
    if (st.step()) return gpus.index(st.column_int(0), st.column_int(1));
  }
  Statement st = db.prepare(
      "SELECT pid FROM (SELECT pid, device_id FROM devices UNION SELECT pid, device_id FROM kernels) "
      "WHERE device_id = ? ORDER BY pid LIMIT 1");
  st.bind(1, device);
  if (st.step()) return gpus.index(st.column_int(0), device);
  return device;
}

}  // namespace

const SampledMetric* SampledMetrics::find(std::string_view name) const {
  for (const SampledMetric& m : metrics)
    if (m.name == name) return &m;
  return nullptr;
}

const SampledMetric* SampledMetrics::by_id(std::int64_t id) const {
  for (const SampledMetric& m : metrics)
    if (m.id == id) return &m;
  return nullptr;
}

bool SampledMetrics::has(std::string_view name) const {
  const SampledMetric* m = find(name);
  if (m == nullptr) return false;
  return std::any_of(gpus.begin(), gpus.end(), [&](const SampledGpu& g) {
    return std::find(g.metric_ids.begin(), g.metric_ids.end(), m->id) != g.metric_ids.end();
  });
}

bool has_gpu_metrics(Database& db) {
  return db.has_table("gpu_metrics") && db.has_table("gpu_metric_names") &&
         db.query_int("SELECT EXISTS (SELECT 1 FROM gpu_metrics)").value_or(0) != 0;
}

SampledMetrics sampled_metrics(Database& db, const GpuIndexMap& gpus) {
  SampledMetrics out;
  if (!has_gpu_metrics(db)) return out;
  {
    Statement st =
        db.prepare("SELECT id, name, COALESCE(label, name), COALESCE(unit, '') FROM gpu_metric_names ORDER BY id");
    while (st.step())
      out.metrics.push_back({st.column_int(0), st.column_text(1), st.column_text(2), st.column_text(3)});
  }
  const bool sessions = db.has_table("gpu_metrics_sessions");
  for (const std::int64_t device :
       distinct_by_seek(db, "SELECT MIN(device_id) FROM gpu_metrics WHERE device_id > ?", {})) {
    SampledGpu g;
    g.device_id = device;
    if (sessions) {
      Statement st = db.prepare(
          "SELECT COALESCE(chip, ''), COALESCE(device_name, ''), COALESCE(uuid, ''), interval_ns "
          "FROM gpu_metrics_sessions WHERE device_id = ? ORDER BY start_ns LIMIT 1");
      st.bind(1, device);
      if (st.step()) {
        g.chip = st.column_text(0);
        g.device_name = st.column_text(1);
        g.uuid = st.column_text(2);
        g.interval_ns = st.is_null(3) ? 0 : st.column_int(3);
      }
    }
    g.gpu = gpu_of(db, gpus, device, g.uuid);
    g.metric_ids =
        distinct_by_seek(db, "SELECT MIN(metric_id) FROM gpu_metrics WHERE device_id = ? AND metric_id > ?", {device});
    if (g.metric_ids.empty()) continue;  // only in a damaged file
    // Every metric is read at every sample: the first one's rows count the samples.
    Statement st = db.prepare("SELECT COUNT(*) FROM gpu_metrics WHERE device_id = ? AND metric_id = ?");
    st.bind(1, device).bind(2, g.metric_ids.front());
    if (st.step()) g.samples = st.column_int(0);
    out.gpus.push_back(std::move(g));
  }
  std::stable_sort(out.gpus.begin(), out.gpus.end(),
                   [](const SampledGpu& a, const SampledGpu& b) { return a.gpu < b.gpu; });
  return out;
}

void each_sample(Database& db, std::int64_t device_id, std::int64_t metric_id,
                 const std::function<void(const MetricSample&)>& visit,
                 std::optional<std::pair<std::int64_t, std::int64_t>> window) {
  std::string sql = "SELECT start_ns, end_ns, value FROM gpu_metrics WHERE device_id = ? AND metric_id = ?";
  if (window) sql += " AND start_ns < ? AND end_ns > ?";
  Statement st = db.prepare(sql + " ORDER BY start_ns");
  st.bind(1, device_id).bind(2, metric_id);
  if (window) st.bind(3, window->second).bind(4, window->first);
  while (st.step()) visit({st.column_int(0), st.column_int(1), st.is_null(2) ? kNaN : st.column_double(2)});
}

std::optional<std::pair<std::int64_t, std::int64_t>> sample_starts(Database& db, const SampledMetrics& m) {
  std::optional<std::pair<std::int64_t, std::int64_t>> out;
  if (m.empty()) return out;  // perhaps no table to prepare against
  for (const char* order : {"ASC", "DESC"}) {
    Statement st = db.prepare(
        std::string("SELECT start_ns FROM gpu_metrics WHERE device_id = ? AND metric_id = ? AND value IS NOT NULL "
                    "ORDER BY start_ns ") +
        order + " LIMIT 1");
    for (const SampledGpu& g : m.gpus) {
      for (const std::int64_t id : g.metric_ids) {
        st.rewind();
        st.bind(1, g.device_id).bind(2, id);
        if (!st.step()) continue;
        const std::int64_t t = st.column_int(0);
        if (!out) out.emplace(t, t);
        out->first = std::min(out->first, t);
        out->second = std::max(out->second, t);
      }
    }
  }
  return out;
}

std::map<std::int64_t, MetricOverlap> overlap_per_gpu(Database& db, const SampledMetrics& m, std::string_view name,
                                                      std::int64_t from_ns, std::int64_t to_ns) {
  std::map<std::int64_t, MetricOverlap> out;
  const SampledMetric* metric = m.find(name);
  if (metric == nullptr || to_ns <= from_ns) return out;
  const KernelInterval window{from_ns, to_ns, 0};
  for (const SampledGpu& g : m.gpus) {
    if (std::find(g.metric_ids.begin(), g.metric_ids.end(), metric->id) == g.metric_ids.end()) continue;
    // The window is one kernel (core/metric_attribution.hpp); samples stream in.
    MetricAttribution a(std::span(&window, 1), 1);
    each_sample(
        db, g.device_id, metric->id, [&a](const MetricSample& s) { a.add(s); }, std::pair(from_ns, to_ns));
    const MetricOverlap o = a.finish().front().metric;
    // Two sampled ordinals of one GPU (never in practice): their sums add.
    MetricOverlap& sum = out[g.gpu];
    sum.covered_ns += o.covered_ns;
    sum.weight_ns += o.weight_ns;
    sum.value_ns += o.value_ns;
    sum.bytes += o.bytes;
  }
  return out;
}

const SampledActivity& sampled_activity(Database& db) {
  return cached<SampledActivity>(db, "sampled_activity", [&db] {
    SampledActivity a;
    if (!has_gpu_metrics(db)) return a;  // before reading the GPU numbering: most traces stop here
    const SampledMetrics m = sampled_metrics(db, GpuIndexMap::load(db));
    a.present = !m.empty();
    if (!a.present) return a;
    const stats::Interval wall = wall_span(db);
    a.sm_active = overlap_per_gpu(db, m, kSmActive, wall.start_ns, wall.end_ns);
    a.tensor_active = overlap_per_gpu(db, m, kTensorActive, wall.start_ns, wall.end_ns);
    return a;
  });
}

std::string sampled_columns_note(double covered_share) {
  std::string text =
      "SM Active (%) and Tensor Active (%) are read from the GPU's own counters (gpuscope trace --gpu-metrics), "
      "time-weighted over the sampled part of the wall time";
  if (std::isfinite(covered_share)) text += " (" + units::percent_of(covered_share) + " of it)";
  text +=
      ": SM Active is the share of cycles with at least one warp on an SM, averaged over the SMs, Tensor Active "
      "the share of cycles the tensor cores were busy. GPU Busy counts the time any kernel or copy ran; SM "
      "Coverage is estimated from the launch shapes (how many SMs the grids could fill), SM Active is what the "
      "hardware saw; none of them says how busy each SM's pipes were";
  return text;
}

}  // namespace gpuscope::analyze::detail
