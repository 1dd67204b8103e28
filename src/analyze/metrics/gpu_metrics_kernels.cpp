#include "analyze/metrics/gpu_metrics_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "analyze/common/event_budget.hpp"
#include "analyze/common/trace_sql.hpp"
#include "core/saturating.hpp"
#include "store/database.hpp"
#include "store/machine_profile_json.hpp"

namespace gpuscope::analyze::detail {
namespace {

using store::Database;
using store::Statement;

// Held per kernel while a GPU's samples stream by: its interval (24 bytes) in the list, the
// attribution's copy (24), its start and end events (48) and integrals (40), rounded up.
constexpr std::int64_t kBytesPerKernel = 160;
constexpr double kNsPerS = 1e9;

// The metrics attributed to kernels, in column order; the first sampled one gives Sampled (%).
constexpr std::string_view kAttributed[] = {kSmActive, kWarpsActive, kTensorActive, kFmaPipe,
                                            kFp64Pipe, kDramRead,    kDramWrite,    kL2Bytes};

void add(MetricOverlap& sum, const MetricOverlap& o) {
  sum.covered_ns = core::sat_add(sum.covered_ns, o.covered_ns);
  sum.weight_ns += o.weight_ns;
  sum.value_ns += o.value_ns;
  sum.bytes += o.bytes;
}

bool has_metric(const SampledGpu& g, const SampledMetrics& m, std::string_view name) {
  const SampledMetric* metric = m.find(name);
  return metric != nullptr && std::find(g.metric_ids.begin(), g.metric_ids.end(), metric->id) != g.metric_ids.end();
}

DramCeiling dram_ceiling(Database& db, const SampledGpu& g) {
  DramCeiling c;
  c.uuid = g.uuid;
  if (c.uuid.empty()) {  // the session did not say: a traced process's device row may
    Statement st = db.prepare(
        "SELECT uuid FROM devices WHERE device_id = ? AND uuid IS NOT NULL AND uuid <> '' ORDER BY pid LIMIT 1");
    st.bind(1, g.device_id);
    if (st.step()) c.uuid = st.column_text(0);
  }
  if (c.uuid.empty()) return c;
  try {
    if (const std::optional<MachineProfile> p = store::load_cached_profile(c.uuid)) {
      if (const core::Ceiling* dram = p->find("dram_copy"); dram != nullptr && dram->measured > 0)
        c.bytes_per_s = dram->measured;
    }
  } catch (const std::exception& e) {  // store::ProfileError: a broken file, or no cache folder
    c.problem = e.what();
  }
  return c;
}

// Adds one GPU's kernels (keyed by name) to the sums: each sampled metric's attribution, and
// the instances, time and concurrency every metric's shares agree on.
void add_gpu(Database& db, const SampledMetrics& m, const SampledGpu* g, double ceiling_per_ns,
             const std::vector<KernelInterval>& kernels, std::vector<KernelNameSums>& sums) {
  const std::size_t keys = sums.size();
  std::map<std::string_view, std::vector<KernelMetricShare>> shares;
  std::string_view coverage;  // the metric Sampled (%) is of
  if (g != nullptr) {
    for (std::string_view name : kAttributed) {
      if (!has_metric(*g, m, name)) continue;
      MetricAttribution a(kernels, keys);
      each_sample(db, g->device_id, m.find(name)->id, [&a](const MetricSample& s) { a.add(s); });
      shares[name] = a.finish();
      if (coverage.empty()) coverage = name;
    }
  }
  // Instances, time and concurrency are the same in every metric's shares.
  const std::vector<KernelMetricShare> base =
      coverage.empty() ? MetricAttribution(kernels, keys).finish() : shares.at(coverage);
  for (std::size_t k = 0; k < keys; ++k) {
    KernelNameSums& s = sums[k];
    s.instances += base[k].instances;
    s.kernel_ns = core::sat_add(s.kernel_ns, base[k].kernel_ns);
    s.concurrent_ns = core::sat_add(s.concurrent_ns, base[k].concurrent_ns);
    if (!coverage.empty()) s.sampled_ns = core::sat_add(s.sampled_ns, shares.at(coverage)[k].metric.covered_ns);
    for (const auto& [name, per_key] : shares) add(s.metrics[name], per_key[k].metric);
    // This GPU's DRAM rate against its own ceiling, weighted by the time it covers.
    const auto r_it = shares.find(kDramRead), w_it = shares.find(kDramWrite);
    if (r_it == shares.end() || w_it == shares.end()) continue;
    const MetricOverlap& rd = r_it->second[k].metric;
    const MetricOverlap& wr = w_it->second[k].metric;
    if (rd.weight_ns <= 0 || wr.weight_ns <= 0) continue;
    if (!std::isfinite(ceiling_per_ns) || ceiling_per_ns <= 0) {
      s.ceiling_missing = true;
      continue;
    }
    s.ceiling_share_ns += (rd.rate() + wr.rate()) / ceiling_per_ns * rd.weight_ns;
    s.ceiling_weight_ns += rd.weight_ns;
  }
}

}  // namespace

KernelMetricSums kernel_metric_sums(Database& db, const GpuIndexMap& gpus, const SampledMetrics& m,
                                    const ReportOptions& options) {
  check_event_budget(
      {"gpu_metrics_sum", "kernels", db.query_int("SELECT COUNT(*) FROM kernels").value_or(0), kBytesPerKernel, ""});
  KernelMetricSums out;
  // Every kernel, by GPU, keyed by its name's index.
  std::map<std::int64_t, std::vector<KernelInterval>> per_gpu;
  {
    std::map<std::string, std::size_t> key_of;
    Statement st =
        db.prepare("SELECT pid, device_id, start_ns, end_ns, " + kernel_name_sql(options) + " FROM v_kernels");
    while (st.step()) {
      const auto [it, added] = key_of.emplace(st.column_text(4), out.names.size());
      if (added) out.names.push_back(it->first);
      per_gpu[gpus.index(st.column_int(0), st.column_int(1))].push_back(
          {st.column_int(2), st.is_null(3) ? st.column_int(2) : st.column_int(3), it->second});
    }
  }

  for (const SampledGpu& g : m.gpus) out.ceilings.emplace(g.gpu, dram_ceiling(db, g));

  out.sums.resize(out.names.size());
  for (const auto& [gpu, kernels] : per_gpu) {
    const auto g_it =
        std::find_if(m.gpus.begin(), m.gpus.end(), [gpu = gpu](const SampledGpu& g) { return g.gpu == gpu; });
    const double ceiling_per_ns =
        g_it == m.gpus.end() ? std::numeric_limits<double>::quiet_NaN() : out.ceilings.at(gpu).bytes_per_s / kNsPerS;
    add_gpu(db, m, g_it == m.gpus.end() ? nullptr : &*g_it, ceiling_per_ns, kernels, out.sums);
  }
  return out;
}

}  // namespace gpuscope::analyze::detail
