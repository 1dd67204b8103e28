// serve_stats: the numbers of a `gpuscope bench serve` run, from its requests' records
// (core/serve_stream.hpp), and the run as a bench result (core/bench_result.hpp) so that
// `gpuscope bench compare` reads two serving runs as it reads two kernel runs. Pure
// functions on values; times in seconds.
//
// Per successful, measured (not warm-up) request, as vLLM's benchmark_serving defines them:
//   ttft     first token time − start_s (the request was sent at start_s);
//   latency  end_s − start_s (end to end);
//   tpot     (latency − ttft) / (output_tokens − 1), for output_tokens >= 2 (else none);
//   itl      each gap between successive token events (pooled over requests).
// Over the run: duration = last measured end − first measured start; requests/s =
// completed / duration; output tokens/s = Σ output_tokens / duration (failed requests
// count neither). Each metric's distribution: count, mean, stddev (unbiased; NaN below 2),
// min, max, and percentiles p50, p90, p99 by linear interpolation between order statistics
// (numpy's default "linear": x[(n−1)·q]); NaN when there are no values.
//
// As a bench result: one case per metric, op "serve", variant the metric ("ttft", "tpot",
// "itl", "latency", and "request_interval" = 1 / requests per second and
// "output_token_interval" = 1 / output tokens per second, so that lower is better for
// every case and `bench compare`'s speedup reads the same way for all), dtype "", params
// the load ("endpoint=...,concurrency=...,..."), timing.mode "serve", timing.median_s the
// p50, p90_s / p99_s the tails, rel_stderr the McKean–Schrader relative standard error of
// the median (core/sample_stats.hpp; NaN below 3 values and for the two interval cases,
// which are one number each). device.name is the endpoint's URL; device.uuid is "".
// Failed requests are the run's warnings ("request 7: HTTP 500: ...").
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/bench_result.hpp"
#include "core/report.hpp"
#include "core/serve_stream.hpp"

namespace gpuscope::core::serve {

/// The distribution of one metric (seconds; NaN fields when count is too small).
struct Distribution {
  std::int64_t count = 0;
  double mean = kUnknown, stddev = kUnknown, min = kUnknown, max = kUnknown;
  double p50 = kUnknown, p90 = kUnknown, p99 = kUnknown;
  double median_rel_stderr = kUnknown;
};

/// Linear-interpolation percentile (q in [0, 1]) of `values` (any order); NaN if empty.
/// Throws std::invalid_argument for q outside [0, 1].
[[nodiscard]] double percentile(std::vector<double> values, double q);

/// count, mean, stddev, min, max, p50/p90/p99, median_rel_stderr of `values`.
[[nodiscard]] Distribution describe(std::span<const double> values);

/// The load, as it was asked for (it becomes the cases' params).
struct LoadConfig {
  std::string url;                       // the full endpoint URL
  std::string endpoint = "completions";  // "completions" or "chat"
  std::string model;
  int concurrency = 0;      // 0 = unbounded (with a request rate)
  double request_rate = 0;  // requests/s of a Poisson process; 0 = all at once (concurrency-limited)
  int num_requests = 0;
  int warmup = 0;
  std::string prompts;  // "synthetic" or the JSONL file's name
  int input_len = 0;    // synthetic prompt words
  int output_len = 0;   // max_tokens asked for
};

/// "endpoint=completions,concurrency=8,rate=inf,requests=100,prompts=synthetic,input=128,output=64".
[[nodiscard]] std::string load_params(const LoadConfig& config);

struct ServeSummary {
  std::int64_t completed = 0, failed = 0;
  double duration_s = kUnknown;
  double requests_per_s = kUnknown, output_tokens_per_s = kUnknown;
  std::int64_t output_tokens = 0, prompt_tokens = 0;
  Distribution ttft, tpot, itl, latency;
  std::vector<std::string> errors;  // "request 7: HTTP 500: ..." for each failed measured request
  std::vector<std::string> warmup_errors;
};

/// Summarizes the records (warm-up records are left out of every number; their errors
/// are listed apart).
[[nodiscard]] ServeSummary summarize(std::span<const RequestRecord> records);

/// The run as bench cases (see the file comment); measured_at and gpuscope_version are
/// the caller's.
[[nodiscard]] BenchRun to_bench_run(const ServeSummary& summary, const LoadConfig& config);

/// Printed reports: "bench_serve" (requests, tokens, rates) and "bench_serve_latency"
/// (one row per metric: mean, p50, p90, p99, min, max in ms).
[[nodiscard]] std::vector<Report> serve_reports(const ServeSummary& summary, const LoadConfig& config);

/// Arrival offsets (s from the start) of n requests: a Poisson process of `rate`
/// requests/s (exponential gaps from a mt19937_64 seeded with `seed`; the first request
/// at its first gap), or all 0 when rate <= 0 or infinite.
[[nodiscard]] std::vector<double> poisson_arrivals(int n, double rate, std::uint64_t seed);

}  // namespace gpuscope::core::serve
