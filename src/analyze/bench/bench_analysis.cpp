#include "analyze/bench/bench_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

namespace gpuscope::analyze {
namespace {

using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;

Key key_of(const BenchCase& c) { return {c.op, c.variant, c.dtype, c.params, c.timing.mode}; }

bool usable(double v) { return std::isfinite(v) && v > 0; }

SweepAnalysis analyze_series(std::vector<const BenchCase*> cases) {
  std::stable_sort(cases.begin(), cases.end(),
                   [](const BenchCase* a, const BenchCase* b) { return a->size < b->size; });
  const BenchCase& last = *cases.back();
  SweepAnalysis s;
  s.op = last.op;
  s.variant = last.variant;
  s.dtype = last.dtype;
  s.mode = last.timing.mode;

  const CeilingInfo* info = find_ceiling_info(last.derived.ceiling);
  if (info) {
    s.metric = info->kind == CeilingKind::kCompute ? "flop_rate" : "bandwidth";
    s.ceiling = last.derived.ceiling;
    s.ceiling_value = last.derived.ceiling_value;
    s.ceiling_source = last.derived.ceiling_source;
  } else {
    s.metric = last.work.bytes_read + last.work.bytes_written > 0 ? "bandwidth" : "flop_rate";
  }
  s.unit = s.metric == "bandwidth" ? "B/s" : info ? std::string(info->unit) : "FLOP/s";

  for (const BenchCase* c : cases) {
    const double v = s.metric == "bandwidth" ? c->derived.bandwidth : c->derived.flop_rate;
    if (usable(v)) s.points.push_back(SweepPoint{c->size, c->params, v});
  }
  if (s.points.empty()) return s;

  const std::size_t n = s.points.size();
  const std::size_t tail = n > static_cast<std::size_t>(kFinalPoints) ? n - kFinalPoints : 0;
  for (std::size_t i = tail; i < n; ++i)
    if (!(s.points[i].throughput <= s.final_throughput)) s.final_throughput = s.points[i].throughput;  // NaN start
  for (const SweepPoint& p : s.points) {
    if (p.throughput >= kSaturationFraction * s.final_throughput) {
      s.size_at_90 = p.size;
      s.params_at_90 = p.params;
      break;
    }
  }
  if (usable(s.ceiling_value)) s.final_pct_of_ceiling = s.final_throughput / s.ceiling_value * 100.0;
  s.still_rising = n >= 2 && s.points[n - 1].throughput == s.final_throughput &&
                   s.points[n - 1].throughput > kStillRisingFactor * s.points[n - 2].throughput;
  return s;
}

bool same_device(const DeviceFacts& a, const DeviceFacts& b) {
  if (!a.uuid.empty() && !b.uuid.empty()) return a.uuid == b.uuid;
  return a.name == b.name;
}

}  // namespace

std::vector<SweepAnalysis> analyze_sweeps(const BenchRun& run) {
  using Series = std::tuple<std::string, std::string, std::string, std::string>;
  std::vector<Series> order;
  std::map<Series, std::vector<const BenchCase*>> series;
  for (const BenchCase& c : run.cases) {
    const Series k{c.op, c.variant, c.dtype, c.timing.mode};
    auto [it, fresh] = series.try_emplace(k);
    if (fresh) order.push_back(k);
    it->second.push_back(&c);
  }
  std::vector<SweepAnalysis> out;
  for (const Series& k : order) out.push_back(analyze_series(series.at(k)));
  return out;
}

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kFaster:
      return "faster";
    case Verdict::kSlower:
      return "slower";
    case Verdict::kSame:
      return "same";
    case Verdict::kUnknown:
      return "unknown";
  }
  return "unknown";
}

CompareResult compare(const BenchRun& base, const BenchRun& next, const CompareOptions& options) {
  if (!(options.k >= 0)) throw std::invalid_argument("compare: k must be >= 0 standard errors");
  if (!(options.floor >= 0)) throw std::invalid_argument("compare: floor must be >= 0 (0.01 means 1 %)");
  CompareResult r;
  r.options = options;
  r.same_device = same_device(base.device, next.device);
  std::map<Key, const BenchCase*> in_base;
  for (const BenchCase& c : base.cases) in_base.emplace(key_of(c), &c);
  std::map<Key, bool> matched;
  for (const BenchCase& n : next.cases) {
    const auto it = in_base.find(key_of(n));
    if (it == in_base.end()) {
      r.only_in_new.push_back(CaseKey{n.op, n.variant, n.dtype, n.params, n.timing.mode});
      continue;
    }
    matched[it->first] = true;
    const BenchCase& b = *it->second;
    CaseComparison c;
    c.op = n.op;
    c.variant = n.variant;
    c.dtype = n.dtype;
    c.params = n.params;
    c.mode = n.timing.mode;
    c.base_median_s = b.timing.median_s;
    c.new_median_s = n.timing.median_s;
    c.base_rel_stderr = b.timing.rel_stderr;
    c.new_rel_stderr = n.timing.rel_stderr;
    c.base_verified = b.verified;
    c.new_verified = n.verified;
    if (usable(c.base_median_s) && usable(c.new_median_s)) {
      c.speedup = c.base_median_s / c.new_median_s;
      c.rel_diff = (c.new_median_s - c.base_median_s) / c.base_median_s;
    }
    if (std::isfinite(c.base_rel_stderr) && std::isfinite(c.new_rel_stderr) && c.base_rel_stderr >= 0 &&
        c.new_rel_stderr >= 0) {
      c.threshold = std::max(options.floor, options.k * std::hypot(c.base_rel_stderr, c.new_rel_stderr));
    }
    if (!std::isnan(c.rel_diff) && !std::isnan(c.threshold)) {
      c.verdict = std::fabs(c.rel_diff) <= c.threshold ? Verdict::kSame
                  : c.rel_diff < 0                     ? Verdict::kFaster
                                                       : Verdict::kSlower;
    }
    r.cases.push_back(std::move(c));
  }
  for (const BenchCase& b : base.cases)
    if (!matched.contains(key_of(b)))
      r.only_in_base.push_back(CaseKey{b.op, b.variant, b.dtype, b.params, b.timing.mode});
  return r;
}

}  // namespace gpuscope::analyze
