// Bench result files (store/bench_result_json.hpp): JSON and CSV round trips, validation,
// and docs/bench.md embedding the schema.
#include "store/bench_result_json.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace gpuscope::store {
namespace {

const std::string kSource = GPUSCOPE_SOURCE_DIR;
const std::string kSweep = kSource + "/tests/data/bench-copy-sweep.json";

bool same_real(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void expect_same_case(const BenchCase& a, const BenchCase& b) {
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.variant, b.variant);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.params, b.params);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.work.bytes_read, b.work.bytes_read);
  EXPECT_EQ(a.work.bytes_written, b.work.bytes_written);
  EXPECT_EQ(a.work.flops, b.work.flops);
  EXPECT_EQ(a.work.compute_ceiling, b.work.compute_ceiling);
  EXPECT_EQ(a.timing.mode, b.timing.mode);
  EXPECT_EQ(a.timing.batch, b.timing.batch);
  EXPECT_EQ(a.timing.samples, b.timing.samples);
  EXPECT_TRUE(same_real(a.timing.median_s, b.timing.median_s)) << a.timing.median_s << " " << b.timing.median_s;
  EXPECT_TRUE(same_real(a.timing.min_s, b.timing.min_s));
  EXPECT_TRUE(same_real(a.timing.stddev_s, b.timing.stddev_s));
  EXPECT_TRUE(same_real(a.timing.rel_stderr, b.timing.rel_stderr));
  EXPECT_EQ(a.timing.stop, b.timing.stop);
  EXPECT_TRUE(same_real(a.timing.sm_clock_mhz_before, b.timing.sm_clock_mhz_before));
  EXPECT_EQ(a.timing.throttled_samples, b.timing.throttled_samples);
  EXPECT_TRUE(same_real(a.derived.bandwidth, b.derived.bandwidth));
  EXPECT_TRUE(same_real(a.derived.pct_of_ceiling, b.derived.pct_of_ceiling));
  EXPECT_EQ(a.derived.bound, b.derived.bound);
  EXPECT_EQ(a.derived.ceiling, b.derived.ceiling);
  EXPECT_EQ(a.derived.ceiling_source, b.derived.ceiling_source);
  EXPECT_EQ(a.verified, b.verified);
  EXPECT_TRUE(same_real(a.max_abs_error, b.max_abs_error));
  EXPECT_EQ(a.note, b.note);
}

BenchRun sample_run() {
  BenchRun run = read_bench_run(kSweep);
  // Values the committed file does not exercise: unknowns, a failed check, text to quote.
  run.cases[0].timing.stddev_s = kUnknown;
  run.cases[0].derived.bound = "";
  run.cases[1].verified = false;
  run.cases[1].note = "y[3] = nan, reference 1.25, \"quoted\", tolerance 3e-07";
  run.cases[2].timing.median_s = 1.0 / 3.0;  // needs all 17 digits
  run.warnings.push_back("a warning");
  return run;
}

TEST(BenchResultJson, ReadsTheCommittedSweep) {
  const BenchRun run = read_bench_run(kSweep);
  EXPECT_EQ(run.format_version, 1);
  EXPECT_EQ(run.device.sm_count, 132);
  ASSERT_EQ(run.cases.size(), 14u);
  EXPECT_EQ(run.cases[0].op, "copy");
  EXPECT_EQ(run.cases[0].timing.mode, "cold");
}

TEST(BenchResultJson, JsonRoundTrip) {
  const BenchRun run = sample_run();
  const auto path = std::filesystem::temp_directory_path() / "gpuscope_bench_roundtrip.json";
  write_bench_run(run, path);
  const BenchRun back = read_bench_run(path);
  std::filesystem::remove(path);
  EXPECT_EQ(back.device.uuid, run.device.uuid);
  EXPECT_EQ(back.profile_path, run.profile_path);
  EXPECT_EQ(back.warnings, run.warnings);
  ASSERT_EQ(back.cases.size(), run.cases.size());
  for (std::size_t i = 0; i < run.cases.size(); ++i) expect_same_case(run.cases[i], back.cases[i]);
}

TEST(BenchResultJson, CsvRoundTrip) {
  const BenchRun run = sample_run();
  std::stringstream csv;
  write_bench_csv(run, csv);
  const std::vector<BenchCase> back = read_bench_csv(csv, "<csv>");
  ASSERT_EQ(back.size(), run.cases.size());
  for (std::size_t i = 0; i < run.cases.size(); ++i) expect_same_case(run.cases[i], back[i]);
}

TEST(BenchResultJson, CsvHeaderIsTheSchema) {
  std::stringstream csv;
  write_bench_csv(read_bench_run(kSweep), csv);
  std::string header;
  std::getline(csv, header);
  std::string expected;
  for (const BenchCaseField& f : bench_case_fields()) expected += (expected.empty() ? "" : ",") + std::string(f.name);
  EXPECT_EQ(header, expected);
}

nlohmann::ordered_json sweep_json() {
  std::ifstream in(kSweep);
  return nlohmann::ordered_json::parse(in);
}

TEST(BenchResultJson, RejectsAnotherVersion) {
  auto j = sweep_json();
  j["format_version"] = 99;
  try {
    (void)bench_run_from_json(j, "x.json");
    FAIL();
  } catch (const BenchResultVersionError& e) {
    EXPECT_EQ(e.found(), 99);
    EXPECT_EQ(e.expected(), 1);
  }
}

TEST(BenchResultJson, ErrorsNameTheField) {
  auto expect_error = [](nlohmann::ordered_json j, const std::string& field) {
    try {
      (void)bench_run_from_json(j, "x.json");
      ADD_FAILURE() << "accepted a bad " << field;
    } catch (const BenchResultError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  auto j = sweep_json();
  j["cases"][3]["timing"]["mode"] = "lukewarm";
  expect_error(j, "cases[3].timing.mode");
  j = sweep_json();
  j["cases"][1]["work"]["bytes_read"] = -1;
  expect_error(j, "cases[1].work.bytes_read");
  j = sweep_json();
  j["cases"][2]["timing"]["median_s"] = "fast";
  expect_error(j, "cases[2].timing.median_s");
  j = sweep_json();
  j["cases"].push_back(j["cases"][0]);
  expect_error(j, "cases[14]");
  j = sweep_json();
  j.erase("device");
  expect_error(j, "device");
}

TEST(BenchResultJson, MissingFileIsAnError) {
  EXPECT_THROW((void)read_bench_run("/nonexistent/bench.json"), BenchResultError);
}

// docs/bench.md embeds bench_schema_markdown() between two marker lines. To regenerate
// after a schema change: GPUSCOPE_UPDATE_BENCH_DOC=1 ./test_bench_unit.
TEST(BenchResultJson, DocsEmbedTheSchema) {
  const std::string path = kSource + "/docs/bench.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const std::string begin_marker = "<!-- BEGIN bench_schema_markdown";
  const std::string end_marker = "<!-- END bench_schema_markdown -->";
  const std::size_t b = doc.find(begin_marker);
  ASSERT_NE(b, std::string::npos);
  const std::size_t body = doc.find('\n', b) + 1;
  const std::size_t e = doc.find(end_marker, body);
  ASSERT_NE(e, std::string::npos);
  const std::string expected = bench_schema_markdown();
  if (const char* update = std::getenv("GPUSCOPE_UPDATE_BENCH_DOC"); update && *update == '1') {
    std::ofstream(path, std::ios::binary) << doc.substr(0, body) << expected << doc.substr(e);
    GTEST_SKIP() << "rewrote " << path;
  }
  EXPECT_EQ(doc.substr(body, e - body), expected)
      << "docs/bench.md is out of date: GPUSCOPE_UPDATE_BENCH_DOC=1 ./test_bench_unit";
}

}  // namespace
}  // namespace gpuscope::store
