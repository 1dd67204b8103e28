// The GPU-metrics sampler's log at import (gpuscope trace --gpu-metrics,
// store/gpu_metrics_tables.hpp): sessions and samples into gpu_metrics, gpu_metric_names and
// gpu_metrics_sessions, device ids by UUID, capture-window clipping, damaged records, no
// processes row for the launcher, the sampler's messages and data loss.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "log_builder.hpp"
#include "store/data_loss_kinds.hpp"
#include "store/database.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"

namespace gpuscope::store {
namespace {

using test::LogBuilder;
using test::TempDir;

constexpr std::uint32_t kLauncherPid = 50;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::string_view kSmActive = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed";
constexpr std::string_view kDramRead = "dram__bytes_read.sum";

class GpuMetricsImport : public ::testing::Test {
 protected:
  std::string log(std::string_view name) { return m_dir.file(name); }
  ImportResult import(const std::vector<std::string>& logs) {
    ImportOptions opts;
    opts.overwrite = true;
    opts.command = "python train.py";
    opts.launched_pid = 100;
    return import_logs(logs, m_db_path, opts);
  }
  Database db() { return open_trace(m_db_path); }
  std::int64_t count(Database& d, const std::string& sql) { return d.query_int(sql).value_or(-1); }
  std::optional<double> real(Database& d, const std::string& sql) {
    Statement st = d.prepare(sql);
    if (!st.step() || st.is_null(0)) return std::nullopt;
    return st.column_double(0);
  }

  // A traced process: pid 100, device 0 = GPU 0xab, device 1 = GPU 0xcd; optional capture
  // window [15'000, 35'000).
  void process_log(bool window = false) {
    LogBuilder b(log("p100.gslog"), 100);
    b.process(1'000);
    b.device(0, "NVIDIA H100 80GB HBM3", 0xab);
    b.device(1, "NVIDIA H100 80GB HBM3", 0xcd);
    if (window) b.capture(15'000, true);
    b.api(20'000, 21'000, 100, 1, "cudaLaunchKernel");
    b.kernel(22'000, 23'000, 1, "k");
    if (window) b.capture(35'000, false, "cudaProfilerStop");
    b.end(50'000);
    b.close();
  }

  TempDir m_dir;
  std::string m_db_path = m_dir.file("trace.sqlite");
};

// Two GPUs sampled; the sampler's ordinals are the other way round from the process's, so the
// rows take the process's ids (by UUID). Values in order, NaN as NULL, labels and units from
// core/gpu_metrics (the name itself and the unit by suffix for a metric outside the list).
// The sampler's log comes first in the list: it is read after the process logs anyway.
TEST_F(GpuMetricsImport, SessionsAndSamplesRoundTrip) {
  process_log();
  {
    LogBuilder b(log("gpu-metrics-node1-50.gslog"), kLauncherPid);
    b.message(1'500, log::Severity::kWarning, "metric nvlrx__bytes.sum dropped");
    b.gpu_metrics_session(0, 0xcd, {kSmActive, kDramRead, "lts__t_sectors.sum"}, 2'000, 1'000);
    b.gpu_metrics_session(1, 0xab, {kSmActive, "gpc__cycles_elapsed.max.per_second"}, 2'100, 1'000, "GH100");
    b.gpu_metric_sample(0, 10'000, 11'000, {42.5, 1e9, 7});
    b.gpu_metric_sample(1, 10'000, 11'000, {12.0, 1.98e9});
    b.gpu_metric_sample(0, 11'000, 12'000, {kNaN, 2e9, 8});
    b.close();
  }
  const ImportResult result = import({log("gpu-metrics-node1-50.gslog"), log("p100.gslog")});
  EXPECT_EQ(result.logs_read, 2);
  EXPECT_EQ(result.rows.gpu_metrics, 8);
  EXPECT_EQ(result.rows.gpu_metric_names, 4);
  EXPECT_EQ(result.rows.gpu_metrics_sessions, 2);
  EXPECT_EQ(result.rows.processes, 1);
  EXPECT_TRUE(result.data_loss.empty());

  Database d = db();
  // Sampler device 0 is GPU 0xcd: the process's device 1.
  Statement st = d.prepare(
      "SELECT device_id, start_ns, end_ns, name, label, unit, value FROM v_gpu_metrics "
      "WHERE name = 'sm__cycles_active.avg.pct_of_peak_sustained_elapsed' ORDER BY device_id, start_ns");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.column_int(0), 0);  // sampler device 1 = GPU 0xab = process device 0
  EXPECT_EQ(st.column_double(6), 12.0);
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.column_int(0), 1);
  EXPECT_EQ(st.column_int(1), 10'000);
  EXPECT_EQ(st.column_int(2), 11'000);
  EXPECT_EQ(st.column_text(4), "SM active");
  EXPECT_EQ(st.column_text(5), "%");
  EXPECT_EQ(st.column_double(6), 42.5);
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.column_int(1), 11'000);
  EXPECT_TRUE(st.is_null(6));  // NaN
  EXPECT_FALSE(st.step());

  EXPECT_EQ(real(d, "SELECT value FROM v_gpu_metrics WHERE name = 'dram__bytes_read.sum' AND start_ns = 11000"), 2e9);
  EXPECT_EQ(d.query_text("SELECT label || '|' || unit FROM gpu_metric_names WHERE name = 'dram__bytes_read.sum'"),
            "DRAM read|bytes");
  EXPECT_EQ(d.query_text("SELECT label || '|' || unit FROM gpu_metric_names WHERE name = 'lts__t_sectors.sum'"),
            "lts__t_sectors.sum|");
  EXPECT_EQ(d.query_text("SELECT unit FROM gpu_metric_names WHERE name = 'gpc__cycles_elapsed.max.per_second'"), "1/s");
  // One name row per metric across sessions.
  EXPECT_EQ(count(d, "SELECT COUNT(*) FROM gpu_metric_names WHERE name LIKE 'sm__cycles_active%'"), 1);
  EXPECT_EQ(count(d, "SELECT COUNT(*) FROM gpu_metrics WHERE value IS NULL"), 1);

  // Sessions.
  Statement s = d.prepare(
      "SELECT device_id, chip, device_name, uuid, start_ns, interval_ns, samples, first_ns, last_ns, clock_offset_ns, "
      "hardware_buffer_bytes, metrics FROM gpu_metrics_sessions ORDER BY start_ns");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_int(0), 1);
  EXPECT_EQ(s.column_text(1), "GH100");
  EXPECT_EQ(s.column_text(2), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(s.column_text(3), d.query_text("SELECT uuid FROM devices WHERE device_id = 1").value_or("?"));
  EXPECT_EQ(s.column_int(4), 2'000);
  EXPECT_EQ(s.column_int(5), 1'000);
  EXPECT_EQ(s.column_int(6), 2);
  EXPECT_EQ(s.column_int(7), 10'000);
  EXPECT_EQ(s.column_int(8), 12'000);
  EXPECT_EQ(s.column_int(9), -250);
  EXPECT_EQ(s.column_int(10), 512 << 20);
  EXPECT_EQ(s.column_int(11), 3);
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.column_int(0), 0);
  EXPECT_EQ(s.column_int(6), 1);
  EXPECT_FALSE(s.step());

  // The launcher has no processes row; its message keeps its pid.
  EXPECT_EQ(count(d, "SELECT COUNT(*) FROM processes"), 1);
  EXPECT_EQ(count(d, "SELECT COUNT(*) FROM processes WHERE pid = 50"), 0);
  EXPECT_EQ(d.query_text("SELECT text FROM messages WHERE pid = 50"), "metric nvlrx__bytes.sum dropped");
  EXPECT_EQ(d.query_text("SELECT value FROM meta WHERE key = 'process_count'"), "1");
  // Samples (10'000 to 12'000) do not widen the trace's span: its events run 20'000 to 23'000.
  EXPECT_EQ(d.query_text("SELECT value FROM meta WHERE key = 'duration_ns'"), "3000");
}

// A sampler log alone (the command used no GPU, or its logs were lost) imports cleanly and
// makes no processes row; the sampler's own ordinals are kept.
TEST_F(GpuMetricsImport, MetricsOnlyLogMakesNoProcessRow) {
  {
    LogBuilder b(log("gpu-metrics-node1-50.gslog"), kLauncherPid);
    b.gpu_metrics_session(3, 0xee, {kSmActive});
    b.gpu_metric_sample(3, 10'000, 11'000, {5.0});
    b.close();
  }
  const ImportResult result = import({log("gpu-metrics-node1-50.gslog")});
  EXPECT_EQ(result.logs_read, 1);
  EXPECT_EQ(result.rows.processes, 0);
  EXPECT_EQ(result.rows.gpu_metrics, 1);
  EXPECT_TRUE(result.data_loss.empty()) << result.data_loss.front().what;  // no truncated_log: it has no end record
  Database d = db();
  EXPECT_EQ(count(d, "SELECT COUNT(*) FROM processes"), 0);
  EXPECT_EQ(count(d, "SELECT device_id FROM gpu_metrics"), 3);
  EXPECT_EQ(count(d, "SELECT device_id FROM gpu_metrics_sessions"), 3);
  EXPECT_EQ(count(d, "SELECT COUNT(*) FROM data_loss"), 0);
}

// A log with neither a process nor GPU metrics is a (damaged) process log, as before.
TEST_F(GpuMetricsImport, LogWithoutProcessOrMetricsIsStillAProcess) {
  {
    LogBuilder b(log("a.gslog"), 77);
    b.api(2'000, 3'000, 77, 1, "cudaLaunchKernel");
    b.close();
  }
  const ImportResult result = import({log("a.gslog")});
  EXPECT_EQ(result.rows.processes, 1);
  Database d = db();
  EXPECT_EQ(count(d, "SELECT pid FROM processes"), 77);
  EXPECT_EQ(count(d, "SELECT COUNT(*) FROM data_loss WHERE what = 'truncated_log' AND pid = 77"), 1);
}

// The sampler's GPU 0xee was seen by no process: its own ordinal (0) is kept, the others map
// by UUID as long as no two GPUs get one number.
TEST_F(GpuMetricsImport, UnseenGpuKeepsTheSamplerOrdinal) {
  process_log();
  {
    LogBuilder b(log("gm.gslog"), kLauncherPid);
    b.gpu_metrics_session(2, 0xee, {kSmActive});
    b.gpu_metrics_session(1, 0xcd, {kSmActive});
    b.gpu_metric_sample(2, 10'000, 11'000, {1.0});
    b.gpu_metric_sample(1, 10'000, 11'000, {2.0});
    b.close();
  }
  (void)import({log("p100.gslog"), log("gm.gslog")});
  Database d = db();
  EXPECT_EQ(real(d, "SELECT value FROM gpu_metrics WHERE device_id = 2"), 1.0);  // unseen: sampler's 2
  EXPECT_EQ(real(d, "SELECT value FROM gpu_metrics WHERE device_id = 1"), 2.0);  // 0xcd: process's 1
}

// Ranks that each see only their own GPU (CUDA_VISIBLE_DEVICES per rank) all call it device 0:
// mapping by UUID would give both GPUs id 0, so every session keeps the sampler's ordinal.
TEST_F(GpuMetricsImport, RanksWithTheirOwnVisibleDevicesKeepTheSamplerOrdinals) {
  for (const auto& [pid, uuid] : {std::pair<std::uint32_t, std::uint8_t>{100, 0xab}, {200, 0xcd}}) {
    LogBuilder b(log("p" + std::to_string(pid) + ".gslog"), pid);
    b.process(1'000);
    b.device(0, "GPU", uuid);
    b.end(50'000);
    b.close();
  }
  {
    LogBuilder b(log("gm.gslog"), kLauncherPid);
    b.gpu_metrics_session(0, 0xab, {kSmActive});
    b.gpu_metrics_session(1, 0xcd, {kSmActive});
    b.gpu_metric_sample(0, 10'000, 11'000, {1.0});
    b.gpu_metric_sample(1, 10'000, 11'000, {2.0});
    b.close();
  }
  (void)import({log("p100.gslog"), log("p200.gslog"), log("gm.gslog")});
  Database d = db();
  EXPECT_EQ(real(d, "SELECT value FROM gpu_metrics WHERE device_id = 0"), 1.0);
  EXPECT_EQ(real(d, "SELECT value FROM gpu_metrics WHERE device_id = 1"), 2.0);
  EXPECT_EQ(count(d, "SELECT COUNT(DISTINCT device_id) FROM gpu_metrics_sessions"), 2);
}

// With a capture window [15'000, 35'000), samples overlapping it are kept (whole), the others
// dropped and counted; the session's samples, first and last count what was kept.
TEST_F(GpuMetricsImport, SamplesAreClippedToTheCaptureWindows) {
  process_log(/*window=*/true);
  {
    LogBuilder b(log("gm.gslog"), kLauncherPid);
    b.gpu_metrics_session(0, 0xab, {kSmActive, kDramRead});
    for (std::uint64_t t : {10'000u, 14'000u, 20'000u, 34'000u, 35'000u, 40'000u}) {
      b.gpu_metric_sample(0, t, t + 2'000, {1.0, 2.0});
    }
    b.close();
  }
  const ImportResult result = import({log("p100.gslog"), log("gm.gslog")});
  Database d = db();
  EXPECT_EQ(count(d, "SELECT COUNT(DISTINCT start_ns) FROM gpu_metrics"), 3);  // 14'000, 20'000, 34'000
  EXPECT_EQ(count(d, "SELECT MIN(start_ns) FROM gpu_metrics"), 14'000);
  EXPECT_EQ(count(d, "SELECT MAX(end_ns) FROM gpu_metrics"), 36'000);
  EXPECT_EQ(count(d, "SELECT samples FROM gpu_metrics_sessions"), 3);
  EXPECT_EQ(count(d, "SELECT first_ns FROM gpu_metrics_sessions"), 14'000);
  EXPECT_EQ(count(d, "SELECT last_ns FROM gpu_metrics_sessions"), 36'000);
  EXPECT_EQ(result.events_outside_windows, 3);
}

// No window but 'all': every sample is kept, even before the process started.
TEST_F(GpuMetricsImport, WithoutCaptureWindowsEverySampleIsKept) {
  process_log();
  {
    LogBuilder b(log("gm.gslog"), kLauncherPid);
    b.gpu_metrics_session(0, 0xab, {kSmActive});
    for (std::uint64_t t : {100u, 20'000u, 90'000u}) b.gpu_metric_sample(0, t, t + 1'000, {1.0});
    b.close();
  }
  const ImportResult result = import({log("p100.gslog"), log("gm.gslog")});
  EXPECT_EQ(result.rows.gpu_metrics, 3);
  EXPECT_EQ(result.events_outside_windows, 0);
}

// Damaged records: a session whose size is not its metric count, samples whose size or count
// is wrong, a sample of a device with no session, a record cut short at the end. Each is
// skipped and counted; the whole ones are imported.
TEST_F(GpuMetricsImport, DamagedRecordsAreSkippedAndCounted) {
  const auto sample_kind = static_cast<std::uint16_t>(log::RecordKind::kGpuMetricSample);
  {
    LogBuilder b(log("gm.gslog"), kLauncherPid);
    // A session that says 3 metrics but carries 2 ids (size mismatch).
    log::GpuMetricsSessionRecord bad{};
    bad.device_id = 5;
    bad.metric_count = 3;
    std::string payload(reinterpret_cast<const char*>(&bad), sizeof bad);
    payload.append(16, '\0');
    b.raw(static_cast<std::uint16_t>(log::RecordKind::kGpuMetricsSession), payload);
    b.raw(static_cast<std::uint16_t>(log::RecordKind::kGpuMetricsSession), std::string(10, '\0'));  // too short
    b.gpu_metric_sample(0, 9'000, 10'000, {1.0, 2.0});  // before any session of device 0
    b.gpu_metrics_session(0, 0xab, {kSmActive, kDramRead});
    b.gpu_metric_sample(0, 10'000, 11'000, {1.0, 2.0});
    b.raw(sample_kind, LogBuilder::gpu_metric_sample_payload(0, 11'000, 12'000, {1.0, 2.0}, 3));    // count 3, 2 values
    b.raw(sample_kind, LogBuilder::gpu_metric_sample_payload(0, 11'000, 12'000, {1.0, 2.0, 3.0}));  // not 2 metrics
    b.gpu_metric_sample(5, 11'000, 12'000, {1.0, 2.0, 3.0});  // device 5: its session was damaged
    b.gpu_metric_sample(0, 12'000, 13'000, {3.0, 4.0});
    b.close();
  }
  {
    // A record cut short: its header says 40 payload bytes, 8 are there.
    std::ofstream out(log("gm.gslog"), std::ios::binary | std::ios::app);
    const log::RecordHeader h{sample_kind, 0, 40};
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write("\0\0\0\0\0\0\0\0", 8);
  }
  const ImportResult result = import({log("gm.gslog")});
  EXPECT_EQ(result.rows.gpu_metrics, 4);
  EXPECT_EQ(result.rows.processes, 0);
  Database d = db();
  EXPECT_EQ(count(d, "SELECT COUNT(*) FROM gpu_metrics_sessions"), 1);
  EXPECT_EQ(count(d, "SELECT samples FROM gpu_metrics_sessions"), 2);
  EXPECT_EQ(count(d, "SELECT count FROM data_loss WHERE what = 'unknown_log_records' AND pid IS NULL"), 6);
  EXPECT_EQ(count(d, "SELECT count FROM data_loss WHERE what = 'truncated_gpu_metrics_log' AND pid IS NULL"),
            static_cast<std::int64_t>(sizeof(log::RecordHeader) + 8));
  EXPECT_EQ(d.query_text("SELECT severity FROM data_loss WHERE what = 'truncated_gpu_metrics_log'"), "data_loss");
}

// The sampler reports samples lost to a hardware-buffer overflow: one data_loss row for the
// trace (pid NULL), severity data_loss, the declared wording.
TEST_F(GpuMetricsImport, OverflowIsDataLoss) {
  process_log();
  {
    LogBuilder b(log("gm.gslog"), kLauncherPid);
    b.gpu_metrics_session(0, 0xab, {kSmActive});
    b.gpu_metric_sample(0, 10'000, 11'000, {1.0});
    b.data_loss(12'000, 5, "gpu_metrics_overflow");
    b.data_loss(13'000, 2, "gpu_metrics_overflow");
    b.close();
  }
  const ImportResult result = import({log("p100.gslog"), log("gm.gslog")});
  EXPECT_EQ(result.data_loss_total, 1);
  ASSERT_EQ(result.data_loss.size(), 1u);
  EXPECT_FALSE(result.data_loss[0].pid.has_value());
  EXPECT_FALSE(result.warnings.empty());
  Database d = db();
  EXPECT_EQ(count(d, "SELECT count FROM data_loss WHERE what = 'gpu_metrics_overflow' AND pid IS NULL"), 7);
  EXPECT_EQ(d.query_text("SELECT severity FROM data_loss WHERE what = 'gpu_metrics_overflow'"), "data_loss");
  EXPECT_EQ(d.query_text("SELECT detail FROM data_loss WHERE what = 'gpu_metrics_overflow'"),
            describe_data_loss(DataLossKind::kGpuMetricsOverflow, 7, std::nullopt));
}

}  // namespace
}  // namespace gpuscope::store
