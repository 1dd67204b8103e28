// core/serve_stats: percentiles, per-request TTFT / TPOT / ITL / latency, the run's
// rates, warm-up and failed requests left out, and the run as bench cases.
#include "core/serve_stats.hpp"

#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

namespace gpuscope::core::serve {
namespace {

RequestRecord request(int index, double start, std::vector<double> tokens, double end, bool warmup = false) {
  RequestRecord r;
  r.index = index;
  r.warmup = warmup;
  r.start_s = start;
  r.token_times_s = std::move(tokens);
  r.end_s = end;
  r.prompt_tokens = 10;
  return r;
}

TEST(Percentile, LinearInterpolationLikeNumpy) {
  const std::vector<double> v{4, 1, 3, 2};  // sorted 1 2 3 4
  EXPECT_DOUBLE_EQ(percentile(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(percentile(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(percentile(v, 0.9), 3.7);  // numpy.percentile([1,2,3,4], 90) = 3.7
  EXPECT_DOUBLE_EQ(percentile(v, 0.99), 3.97);
  EXPECT_DOUBLE_EQ(percentile(v, 1.0), 4);
  EXPECT_DOUBLE_EQ(percentile({7.0}, 0.99), 7);
  EXPECT_TRUE(std::isnan(percentile({}, 0.5)));
  EXPECT_THROW((void)percentile(v, 1.5), std::invalid_argument);
}

TEST(Describe, FewValues) {
  const Distribution none = describe({});
  EXPECT_EQ(none.count, 0);
  EXPECT_TRUE(std::isnan(none.mean));
  const std::vector<double> one{0.25};
  const Distribution d = describe(one);
  EXPECT_EQ(d.count, 1);
  EXPECT_DOUBLE_EQ(d.mean, 0.25);
  EXPECT_DOUBLE_EQ(d.p99, 0.25);
  EXPECT_TRUE(std::isnan(d.stddev));
  EXPECT_TRUE(std::isnan(d.median_rel_stderr));
}

TEST(Summarize, TtftTpotItlAndRatesOfKnownSchedules) {
  // Two requests: sent at 0 and 1 s; first token 50 ms after sending, then one every 20 ms.
  std::vector<RequestRecord> rs{
      request(0, 0.0, {0.050, 0.070, 0.090, 0.110}, 0.110), request(1, 1.0, {1.050, 1.070, 1.090}, 1.090),
      request(0, -5.0, {-4.0}, -3.0, /*warmup=*/true),  // not counted, not in the duration
  };
  RequestRecord failed = request(2, 0.5, {0.6}, 0.7);
  failed.error = "HTTP 500: boom";
  rs.push_back(failed);

  const ServeSummary s = summarize(rs);
  EXPECT_EQ(s.completed, 2);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.output_tokens, 7);
  EXPECT_EQ(s.prompt_tokens, 20);
  EXPECT_DOUBLE_EQ(s.duration_s, 1.090);
  EXPECT_DOUBLE_EQ(s.requests_per_s, 2 / 1.090);
  EXPECT_DOUBLE_EQ(s.output_tokens_per_s, 7 / 1.090);
  EXPECT_EQ(s.ttft.count, 2);
  EXPECT_NEAR(s.ttft.mean, 0.050, 1e-12);
  EXPECT_EQ(s.tpot.count, 2);
  EXPECT_NEAR(s.tpot.p50, 0.020, 1e-12);
  EXPECT_EQ(s.itl.count, 5);
  EXPECT_NEAR(s.itl.max, 0.020, 1e-12);
  EXPECT_NEAR(s.latency.mean, (0.110 + 0.090) / 2, 1e-12);
  EXPECT_EQ(s.errors, (std::vector<std::string>{"request 2: HTTP 500: boom"}));
  EXPECT_TRUE(s.warmup_errors.empty());
}

TEST(Summarize, UsageTokensChangeTpotButNotItl) {
  RequestRecord r = request(0, 0.0, {0.1, 0.2}, 0.2);
  r.usage_completion_tokens = 11;  // 2 chunks carried 11 tokens
  const ServeSummary s = summarize(std::vector<RequestRecord>{r});
  EXPECT_EQ(s.output_tokens, 11);
  EXPECT_NEAR(s.tpot.p50, 0.1 / 10, 1e-12);
  EXPECT_EQ(s.itl.count, 1);
  EXPECT_NEAR(s.itl.p50, 0.1, 1e-12);
}

TEST(Summarize, OneTokenHasNoTpotAndAllFailedHasNoRates) {
  const ServeSummary one = summarize(std::vector<RequestRecord>{request(0, 0, {0.3}, 0.3)});
  EXPECT_EQ(one.tpot.count, 0);
  EXPECT_NEAR(one.ttft.p50, 0.3, 1e-12);
  RequestRecord bad = request(0, 0, {}, 0.1);
  bad.error = "no tokens in the stream";
  RequestRecord warm = request(1, 0, {}, 0.1, true);
  warm.error = "HTTP 503: busy";
  const ServeSummary none = summarize(std::vector<RequestRecord>{bad, warm});
  EXPECT_EQ(none.completed, 0);
  EXPECT_EQ(none.failed, 1);
  EXPECT_DOUBLE_EQ(none.requests_per_s, 0);
  EXPECT_EQ(none.warmup_errors, (std::vector<std::string>{"warm-up request 1: HTTP 503: busy"}));
}

TEST(ToBenchRun, OneCasePerMetricLowerIsBetter) {
  std::vector<RequestRecord> rs;
  for (int i = 0; i < 5; ++i) rs.push_back(request(i, i, {i + 0.05, i + 0.07, i + 0.09}, i + 0.09));
  const ServeSummary s = summarize(rs);
  LoadConfig config;
  config.url = "http://127.0.0.1:8000/v1/completions";
  config.concurrency = 4;
  config.num_requests = 5;
  config.prompts = "synthetic";
  config.input_len = 32;
  config.output_len = 3;
  const BenchRun run = to_bench_run(s, config);
  EXPECT_EQ(run.device.name, config.url);
  ASSERT_EQ(run.cases.size(), 6u);
  const std::vector<std::string> variants{
      "ttft", "tpot", "itl", "latency", "request_interval", "output_token_interval"};
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const BenchCase& c = run.cases[i];
    EXPECT_EQ(c.op, "serve");
    EXPECT_EQ(c.variant, variants[i]);
    EXPECT_EQ(c.timing.mode, "serve");
    EXPECT_EQ(c.params, "endpoint=completions,concurrency=4,rate=inf,requests=5,prompts=synthetic,input=32,output=3");
  }
  EXPECT_NEAR(run.cases[0].timing.median_s, 0.05, 1e-12);
  EXPECT_EQ(run.cases[0].timing.samples, 5);
  EXPECT_NEAR(run.cases[0].timing.p99_s, 0.05, 1e-12);
  EXPECT_NEAR(run.cases[4].timing.median_s, 1 / s.requests_per_s, 1e-12);
  EXPECT_NEAR(run.cases[5].timing.median_s, s.duration_s / 15, 1e-12);
  EXPECT_TRUE(std::isnan(run.cases[4].timing.rel_stderr));
}

TEST(ServeReports, RowsInMilliseconds) {
  const ServeSummary s = summarize(std::vector<RequestRecord>{request(0, 0, {0.05, 0.07}, 0.07)});
  LoadConfig config;
  config.url = "http://x/v1/completions";
  const std::vector<Report> reports = serve_reports(s, config);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[1].name, "bench_serve_latency");
  EXPECT_EQ(std::get<std::string>(reports[1].rows[0][0]), "TTFT (time to first token)");
  EXPECT_NEAR(std::get<double>(reports[1].rows[0][3]), 50.0, 1e-9);  // P50, ms
  EXPECT_EQ(std::get<std::string>(reports[0].rows[3][0]), "Request throughput");
}

TEST(PoissonArrivals, IncreasingSeededAndAllAtOnceWithoutRate) {
  const std::vector<double> a = poisson_arrivals(2000, 50.0, 1);
  ASSERT_EQ(a.size(), 2000u);
  for (std::size_t i = 1; i < a.size(); ++i) ASSERT_GT(a[i], a[i - 1]);
  EXPECT_NEAR(a.back() / 2000, 1.0 / 50, 0.1 / 50);  // mean gap 1/rate (±10 %)
  EXPECT_EQ(a, poisson_arrivals(2000, 50.0, 1));
  EXPECT_NE(a, poisson_arrivals(2000, 50.0, 2));
  EXPECT_EQ(poisson_arrivals(3, 0, 1), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(poisson_arrivals(2, INFINITY, 1), (std::vector<double>{0, 0}));
}

}  // namespace
}  // namespace gpuscope::core::serve
