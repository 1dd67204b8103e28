#include "core/serve_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "core/sample_stats.hpp"

namespace gpuscope::core::serve {
namespace {

std::string number_text(double v) {
  if (!std::isfinite(v) || v <= 0) return "inf";
  std::ostringstream s;
  s << v;
  return s.str();
}

// The ms value of a time for a report cell; NaN → empty cell.
Cell ms(double seconds) { return std::isnan(seconds) ? Cell{} : Cell{seconds * 1e3}; }

}  // namespace

double percentile(std::vector<double> values, double q) {
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("percentile: q must be in [0, 1]");
  if (values.empty()) return kUnknown;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

Distribution describe(std::span<const double> values) {
  Distribution d;
  d.count = static_cast<std::int64_t>(values.size());
  if (values.empty()) return d;
  std::vector<double> v(values.begin(), values.end());
  double sum = 0;
  for (double x : v) sum += x;
  d.mean = sum / static_cast<double>(v.size());
  if (v.size() >= 2) {
    double ss = 0;
    for (double x : v) ss += (x - d.mean) * (x - d.mean);
    d.stddev = std::sqrt(ss / static_cast<double>(v.size() - 1));
  }
  const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
  d.min = *mn;
  d.max = *mx;
  d.p50 = percentile(v, 0.50);
  d.p90 = percentile(v, 0.90);
  d.p99 = percentile(v, 0.99);
  d.median_rel_stderr = stats::median_rel_stderr(v);
  return d;
}

std::string load_params(const LoadConfig& c) {
  std::string s = "endpoint=" + c.endpoint;
  s += ",concurrency=" + (c.concurrency > 0 ? std::to_string(c.concurrency) : std::string("unbounded"));
  s += ",rate=" + number_text(c.request_rate);
  s += ",requests=" + std::to_string(c.num_requests);
  s += ",prompts=" + c.prompts;
  if (c.input_len > 0) s += ",input=" + std::to_string(c.input_len);
  if (c.output_len > 0) s += ",output=" + std::to_string(c.output_len);
  if (!c.model.empty()) s += ",model=" + c.model;
  return s;
}

ServeSummary summarize(std::span<const RequestRecord> records) {
  ServeSummary s;
  std::vector<double> ttft, tpot, itl, latency;
  double first_start = std::numeric_limits<double>::infinity();
  double last_end = -std::numeric_limits<double>::infinity();
  for (const RequestRecord& r : records) {
    if (r.warmup) {
      if (!r.ok()) s.warmup_errors.push_back("warm-up request " + std::to_string(r.index) + ": " + r.error);
      continue;
    }
    first_start = std::min(first_start, r.start_s);
    last_end = std::max(last_end, r.end_s);
    if (!r.ok()) {
      ++s.failed;
      s.errors.push_back("request " + std::to_string(r.index) + ": " + r.error);
      continue;
    }
    ++s.completed;
    const std::int64_t tokens = r.output_tokens();
    s.output_tokens += tokens;
    s.prompt_tokens += r.prompt_tokens;
    const double first = r.token_times_s.front() - r.start_s;
    const double whole = r.end_s - r.start_s;
    ttft.push_back(first);
    latency.push_back(whole);
    if (tokens >= 2) tpot.push_back((whole - first) / static_cast<double>(tokens - 1));
    for (std::size_t i = 1; i < r.token_times_s.size(); ++i) itl.push_back(r.token_times_s[i] - r.token_times_s[i - 1]);
  }
  if (last_end > first_start) {
    s.duration_s = last_end - first_start;
    s.requests_per_s = static_cast<double>(s.completed) / s.duration_s;
    s.output_tokens_per_s = static_cast<double>(s.output_tokens) / s.duration_s;
  }
  s.ttft = describe(ttft);
  s.tpot = describe(tpot);
  s.itl = describe(itl);
  s.latency = describe(latency);
  return s;
}

namespace {

// No note: `bench report` reads a case with a note and verified false as a failed reference
// check, and a request has no reference to check (the variant says what the case is).
BenchCase metric_case(const std::string& variant, const Distribution& d, const std::string& params) {
  BenchCase c;
  c.op = "serve";
  c.variant = variant;
  c.params = params;
  c.work.compute_ceiling = "";
  c.timing.mode = "serve";
  c.timing.samples = static_cast<int>(d.count);
  c.timing.min_s = d.min;
  c.timing.median_s = d.p50;
  c.timing.mean_s = d.mean;
  c.timing.stddev_s = d.stddev;
  c.timing.rel_stderr = d.median_rel_stderr;
  c.timing.p90_s = d.p90;
  c.timing.p99_s = d.p99;
  return c;
}

BenchCase interval_case(const std::string& variant, double per_s, std::int64_t count, const std::string& params) {
  Distribution d;
  d.count = count;
  if (per_s > 0 && std::isfinite(per_s)) d.min = d.p50 = d.mean = 1.0 / per_s;
  return metric_case(variant, d, params);
}

}  // namespace

BenchRun to_bench_run(const ServeSummary& s, const LoadConfig& config) {
  BenchRun run;
  run.device.name = config.url;
  const std::string params = load_params(config);
  run.cases.push_back(metric_case("ttft", s.ttft, params));
  run.cases.push_back(metric_case("tpot", s.tpot, params));
  run.cases.push_back(metric_case("itl", s.itl, params));
  run.cases.push_back(metric_case("latency", s.latency, params));
  run.cases.push_back(interval_case("request_interval", s.requests_per_s, s.completed, params));
  run.cases.push_back(interval_case("output_token_interval", s.output_tokens_per_s, s.output_tokens, params));
  for (const std::string& e : s.errors) run.warnings.push_back(e);
  for (const std::string& e : s.warmup_errors) run.warnings.push_back(e);
  return run;
}

std::vector<Report> serve_reports(const ServeSummary& s, const LoadConfig& config) {
  Report totals;
  totals.name = "bench_serve";
  totals.title = "Serving Benchmark: " + config.url;
  totals.add_column("Quantity", "", ColumnType::kText)
      .add_column("Value", "", ColumnType::kReal)
      .add_column("Unit", "", ColumnType::kText);
  auto real = [](double v) { return std::isnan(v) ? Cell{} : Cell{v}; };
  totals.rows.push_back(
      Row{std::string("Requests completed"), real(static_cast<double>(s.completed)), std::string("requests")});
  totals.rows.push_back(
      Row{std::string("Requests failed"), real(static_cast<double>(s.failed)), std::string("requests")});
  totals.rows.push_back(Row{std::string("Duration"), real(s.duration_s), std::string("s")});
  totals.rows.push_back(Row{std::string("Request throughput"), real(s.requests_per_s), std::string("requests/s")});
  totals.rows.push_back(
      Row{std::string("Output token throughput"), real(s.output_tokens_per_s), std::string("tokens/s")});
  totals.rows.push_back(
      Row{std::string("Output tokens"), real(static_cast<double>(s.output_tokens)), std::string("tokens")});
  totals.rows.push_back(
      Row{std::string("Prompt tokens (as sent)"), real(static_cast<double>(s.prompt_tokens)), std::string("tokens")});
  totals.add_note(NoteLevel::kInfo, "load: " + load_params(config));
  for (const std::string& e : s.errors) totals.add_note(NoteLevel::kWarning, e);
  for (const std::string& e : s.warmup_errors) totals.add_note(NoteLevel::kWarning, e + " (not counted)");

  Report lat;
  lat.name = "bench_serve_latency";
  lat.title = "Serving Latency";
  lat.add_column("Metric", "", ColumnType::kText)
      .add_column("Count", "", ColumnType::kInteger)
      .add_column("Mean", "ms", ColumnType::kReal)
      .add_column("P50", "ms", ColumnType::kReal)
      .add_column("P90", "ms", ColumnType::kReal)
      .add_column("P99", "ms", ColumnType::kReal)
      .add_column("Min", "ms", ColumnType::kReal)
      .add_column("Max", "ms", ColumnType::kReal);
  auto row = [&](const char* name, const Distribution& d) {
    lat.rows.push_back(
        Row{std::string(name), Cell{d.count}, ms(d.mean), ms(d.p50), ms(d.p90), ms(d.p99), ms(d.min), ms(d.max)});
  };
  row("TTFT (time to first token)", s.ttft);
  row("TPOT (time per output token)", s.tpot);
  row("ITL (inter-token latency)", s.itl);
  row("E2E latency", s.latency);
  lat.add_note(NoteLevel::kInfo,
               "tokens: one per streamed event with text, unless the last event's usage.completion_tokens says "
               "otherwise; TPOT = (latency - TTFT) / (tokens - 1); percentiles interpolate linearly");
  return {totals, lat};
}

std::vector<double> poisson_arrivals(int n, double rate, std::uint64_t seed) {
  std::vector<double> out(static_cast<std::size_t>(std::max(n, 0)), 0.0);
  if (!(rate > 0) || !std::isfinite(rate)) return out;
  std::mt19937_64 gen(seed);
  std::exponential_distribution<double> gap(rate);
  double t = 0;
  for (double& a : out) {
    t += gap(gen);
    a = t;
  }
  return out;
}

}  // namespace gpuscope::core::serve
