// gpu_metrics_sum and the sampled columns of top and gpu_util on hand-built traces
// (gpu_metrics_trace.hpp: the numbers below are worked out there), diffed against
// tests/expected/gpu_metrics/ (GPUSCOPE_REWRITE_EXPECTED=1 rewrites). The DRAM ceiling comes
// from a machine profile in a profile cache made for the test (GPUSCOPE_CACHE_DIR).
#include "analyze/metrics/gpu_metrics_report.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "../expect_file.hpp"
#include "../store/log_builder.hpp"
#include "analyze/nsys/gpu_util_report.hpp"
#include "analyze/report_registry.hpp"
#include "analyze/nsys/top_report.hpp"
#include "gpu_metrics_trace.hpp"
#include "render/report_render.hpp"
#include "profile_cache.hpp"
#include "store/machine_profile_json.hpp"

namespace gpuscope::analyze {
namespace {

using test::cell;
using test::col;
using test::has_note;
using test::ProfileCache;
using test::TraceDb;
namespace rows = store::rows;

std::string rendered(const Report& r, render::Format format) {
  std::ostringstream out;
  render::render(std::vector<Report>{r}, format, out);
  return out.str();
}

bool null_at(const Report& r, std::size_t row, const std::string& column) {
  return std::holds_alternative<std::monostate>(r.rows.at(row).at(col(r, column)));
}

bool has_column(const Report& r, const std::string& name) {
  for (const Column& c : r.columns)
    if (c.name == name) return true;
  return false;
}

TEST(GpuMetricsReport, PerKernelNameFromTheSamplesItOverlaps) {
  ProfileCache cache;
  cache.add("GPU-100", "dram_copy", 2.9e12);
  TraceDb t;
  test::build_metrics_trace(t);
  const Report r = gpu_metrics_sum(t.db());
  ASSERT_EQ(r.rows.size(), 3u) << rendered(r, render::Format::kTable);
  // Most kernel time first: gemm 250 µs, late 150 µs, relu 20 µs.
  EXPECT_EQ(cell<std::string>(r, 0, "Name"), "gemm");
  EXPECT_EQ(cell<std::string>(r, 1, "Name"), "late");
  EXPECT_EQ(cell<std::string>(r, 2, "Name"), "relu");
  EXPECT_FALSE(has_column(r, "FMA Pipe"));  // not sampled: no column
  EXPECT_FALSE(has_column(r, "FP64 Pipe"));

  // gemm: 50 µs of sample 0 (0 %), 100 of sample 1 (10 %), 50 of 2 (20 %), 50 of 3 (30 %).
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Instances"), 2);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Total Time"), 250'000);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Sampled"), 100.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "SM Active"), (10.0 * 100 + 20.0 * 50 + 30.0 * 50) / 250);  // 14
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Warps Active"), 50.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Tensor Active"), 7.0);
  // DRAM read 100, 200, 300, 400 GB/s over 50, 100, 50, 50 µs: 6e7 bytes in 250 µs.
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "DRAM Read"), 240.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "DRAM Write"), 50.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "DRAM"), 290.0);
  EXPECT_NEAR(cell<double>(r, 0, "DRAM of Ceiling"), 10.0, 1e-9);  // of 2.9 TB/s
  EXPECT_EQ(cell<std::int64_t>(r, 0, "DRAM Bytes"), 36'250'000);   // (6e7 + 1.25e7) / 2
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "L2"), 200.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Concurrent"), 20.0 / 250 * 100);  // relu inside it

  // late: [650, 800) is half in sample 6, half in the gap; its tensor value is NULL.
  EXPECT_NEAR(cell<double>(r, 1, "Sampled"), 100.0 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "SM Active"), 60.0);
  EXPECT_TRUE(null_at(r, 1, "Tensor Active"));
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "DRAM Read"), 700.0);
  // 750 GB/s over the 50 sampled µs, carried over its 150 µs.
  EXPECT_EQ(cell<std::int64_t>(r, 1, "DRAM Bytes"), 750 * 150'000);

  // relu: inside sample 3 and inside gemm the whole time.
  EXPECT_DOUBLE_EQ(cell<double>(r, 2, "SM Active"), 30.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 2, "DRAM"), 450.0);
  EXPECT_NEAR(cell<double>(r, 2, "DRAM of Ceiling"), 450.0 / 2900 * 100, 1e-9);
  EXPECT_DOUBLE_EQ(cell<double>(r, 2, "Concurrent"), 100.0);

  // The GPU line: SM active over the 900 sampled µs (380 × 100 / 900), tensor over 800.
  EXPECT_TRUE(has_note(r,
                       "GPU 0 (NVIDIA H100 80GB HBM3, GH100): 9 samples every 100 µs; over the wall time (90 % "
                       "of it sampled): SM active 42 %, tensor active 20 %, DRAM 572 GB/s (20 % of the measured "
                       "2.9 TB/s), SM clock 1980 MHz"))
      << rendered(r, render::Format::kTable);
  EXPECT_TRUE(has_note(r, "1 of 3 kernel names run shorter than one sample (100 µs)"));
  EXPECT_TRUE(has_note(r, "Sampled (%) below 100"));
  EXPECT_TRUE(has_note(r, "gpuscope peak measured: GPU 0 2.9 TB/s"));
  test::expect_matches_file(rendered(r, render::Format::kTable), "gpu_metrics/gpu_metrics_sum.txt");
  test::expect_matches_file(rendered(r, render::Format::kCsv), "gpu_metrics/gpu_metrics_sum.csv");
}

TEST(GpuMetricsReport, OptionalMetricsGetColumnsWhenSampled) {
  ProfileCache cache;
  TraceDb t;
  test::build_metrics_trace(t, true, true);
  const Report r = gpu_metrics_sum(t.db());
  ASSERT_TRUE(has_column(r, "FMA Pipe"));
  EXPECT_EQ(col(r, "FMA Pipe"), col(r, "Tensor Active") + 1);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "FMA Pipe"), 25.0);
}

TEST(GpuMetricsReport, WithoutAProfileTheCeilingIsBlankAndSaysWhy) {
  ProfileCache cache;  // empty
  TraceDb t;
  test::build_metrics_trace(t);
  const Report r = gpu_metrics_sum(t.db());
  ASSERT_EQ(r.rows.size(), 3u);
  for (std::size_t i = 0; i < r.rows.size(); ++i) EXPECT_TRUE(null_at(r, i, "DRAM of Ceiling"));
  EXPECT_TRUE(has_note(r,
                       "DRAM of Ceiling (%) is blank without a machine profile of GPU 0 (GPU-100): run gpuscope "
                       "peak on that GPU"));
  EXPECT_TRUE(has_note(r, "DRAM 572 GB/s, SM clock"));  // no share in the GPU line either
}

TEST(GpuMetricsReport, KernelsOnSeveralGpusShareOneRowPerName) {
  ProfileCache cache;
  cache.add("GPU-a", "dram_copy", 2e12);  // GPU 1 has none: the ceiling share is blank
  TraceDb t;
  t.add(rows::CaptureWindow{.pid = 1, .start_ns = 0, .end_ns = 1'000'000, .reason = "all"});
  rows::Device b = TraceDb::h100_row(1, "GPU-b");
  b.device_id = 1;
  t.add<rows::Device>({TraceDb::h100_row(1, "GPU-a"), b});
  t.strings({{1, "k"}});
  t.kernel(1, 0, 7, 1, 0, 100'000, 1);
  t.kernel(1, 1, 7, 2, 0, 100'000, 1);
  test::add_metric_names(
      t, {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "dram__bytes_read.sum", "dram__bytes_write.sum"});
  t.add<rows::GpuMetricsSession>({test::metrics_session(0, "GPU-a", 1), test::metrics_session(1, "GPU-b", 1)});
  t.add<rows::GpuMetric>({{.device_id = 0, .start_ns = 0, .end_ns = 100'000, .metric_id = 1, .value = 20.0},
                          {.device_id = 1, .start_ns = 0, .end_ns = 100'000, .metric_id = 1, .value = 60.0},
                          {.device_id = 0, .start_ns = 0, .end_ns = 100'000, .metric_id = 2, .value = 1e8},
                          {.device_id = 1, .start_ns = 0, .end_ns = 100'000, .metric_id = 2, .value = 3e8},
                          {.device_id = 0, .start_ns = 0, .end_ns = 100'000, .metric_id = 3, .value = 0.0},
                          {.device_id = 1, .start_ns = 0, .end_ns = 100'000, .metric_id = 3, .value = 0.0}});
  const Report r = gpu_metrics_sum(t.db());
  ASSERT_EQ(r.rows.size(), 1u) << rendered(r, render::Format::kTable);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Instances"), 2);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "SM Active"), 40.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "DRAM Read"), 2000.0);  // 4e8 bytes in 2 × 100 µs
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Concurrent"), 0.0);    // on two GPUs: not concurrent
  EXPECT_TRUE(null_at(r, 0, "DRAM of Ceiling"));
  EXPECT_TRUE(has_note(r, "GPU 0 (NVIDIA H100 80GB HBM3, GH100): 1 sample every 100 µs"));
  EXPECT_TRUE(has_note(r, "GPU 1 (NVIDIA H100 80GB HBM3, GH100)"));
  EXPECT_TRUE(has_note(r, "blank without a machine profile of GPU 1 (GPU-b)"));
  EXPECT_TRUE(has_note(r, "gpuscope peak measured: GPU 0 2 TB/s"));
}

TEST(GpuMetricsReport, LostSamplesAreDataLoss) {
  ProfileCache cache;
  TraceDb t;
  test::build_metrics_trace(t);
  t.add(rows::DataLoss{.what = "gpu_metrics_overflow", .count = 3, .severity = "data_loss"});
  const Report r = gpu_metrics_sum(t.db());
  EXPECT_TRUE(has_note(r, NoteLevel::kDataLoss, "gpu_metrics_overflow (count 3)"));
}

TEST(GpuMetricsReport, WithoutSamplesItSaysHowToRecordThem) {
  TraceDb t;
  test::build_metrics_trace(t, false);
  const std::vector<Report> reports = run_report(t.db(), "gpu_metrics_sum");
  ASSERT_EQ(reports.size(), 1u);
  const Report& r = reports.front();
  EXPECT_TRUE(r.rows.empty());
  EXPECT_TRUE(has_note(r, "gpuscope trace --gpu-metrics"));
  std::vector<std::string> columns;
  for (const Column& c : r.columns) columns.push_back(c.name);
  EXPECT_EQ(columns, (std::vector<std::string>{"Instances", "Total Time", "Sampled", "Concurrent", "Name"}));
  // A trace from before the tables existed reads the same.
  TraceDb old;
  old.db().exec(
      "DROP VIEW v_gpu_metrics; DROP TABLE gpu_metrics; DROP TABLE gpu_metric_names; "
      "DROP TABLE gpu_metrics_sessions");
  EXPECT_TRUE(has_note(gpu_metrics_sum(old.db()), "gpuscope trace --gpu-metrics"));
}

TEST(GpuMetricsColumns, GpuUtilAndTopShowSampledActivityBesideBusyAndCoverage) {
  TraceDb t;
  test::build_metrics_trace(t);
  const Report util = gpu_util(t.db());
  ASSERT_EQ(util.rows.size(), 1u);
  EXPECT_EQ(col(util, "SM Active"), col(util, "SM Coverage") + 1);
  EXPECT_EQ(col(util, "Tensor Active"), col(util, "SM Coverage") + 2);
  EXPECT_NEAR(cell<double>(util, 0, "SM Active"), 380.0 / 9, 1e-9);
  EXPECT_DOUBLE_EQ(cell<double>(util, 0, "Tensor Active"), 20.0);
  EXPECT_TRUE(has_note(util, "time-weighted over the sampled part of the wall time (90 % of it)"));
  test::expect_matches_file(rendered(util, render::Format::kTable), "gpu_metrics/gpu_util.txt");

  const std::vector<Report> top_reports = top(t.db());
  const Report& row = top_reports.front();
  ASSERT_EQ(row.rows.size(), 1u);
  EXPECT_EQ(col(row, "SM Active"), col(row, "SM Coverage") + 1);
  EXPECT_NEAR(cell<double>(row, 0, "SM Active"), 380.0 / 9, 1e-9);
  EXPECT_DOUBLE_EQ(cell<double>(row, 0, "Tensor Active"), 20.0);
  EXPECT_TRUE(has_note(row, "SM Active is what the hardware saw"));
  test::expect_matches_file(rendered(row, render::Format::kTable), "gpu_metrics/top.txt");
}

TEST(GpuMetricsColumns, AbsentWithoutSamples) {
  TraceDb t;
  test::build_metrics_trace(t, false);
  for (const Report& r : {gpu_util(t.db()), top(t.db()).front()}) {
    EXPECT_FALSE(has_column(r, "SM Active")) << r.name;
    EXPECT_FALSE(has_column(r, "Tensor Active")) << r.name;
    EXPECT_FALSE(has_note(r, "SM Active")) << r.name;
  }
}

}  // namespace
}  // namespace gpuscope::analyze
