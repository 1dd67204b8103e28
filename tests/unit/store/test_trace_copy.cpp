// store/trace_copy.hpp: the filtered copy of a trace, on a small trace built with the row
// writer. The user-level filters built on it are tested in tests/unit/analyze/test_trace_filter.cpp.
#include "store/trace_copy.hpp"

#include <gtest/gtest.h>

#include <string>

#include "store/row_writer.hpp"
#include "store/schema.hpp"

namespace gpuscope::store {
namespace {

// pid 1: device 0, window [0,1000], API calls [100,110] (corr 1) and [500,510] (corr 2),
// their kernels [200,300] and [600,700]; process [0,1000]. pid 2: device 0, one call
// [100,110] (corr 1) and its kernel [150,160]. A whole-trace data_loss row (pid NULL).
class TraceCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    src.exec(create_schema_sql());
    insert(src, rows::Meta{.key = "schema_version", .value = "1"});
    for (std::int64_t pid : {1, 2}) {
      insert(src, rows::Process{.pid = pid, .start_ns = 0, .end_ns = 1000, .ended_cleanly = 1});
      insert(src, rows::Device{.pid = pid, .device_id = 0, .uuid = "GPU-x"});
      insert(src, rows::CaptureWindow{.pid = pid, .start_ns = 0, .end_ns = 1000, .reason = "all"});
    }
    RowWriter<rows::ApiCall> api(src);
    RowWriter<rows::Kernel> kernels(src);
    auto launch = [&](std::int64_t pid, std::int64_t corr, std::int64_t call, std::int64_t start, std::int64_t end) {
      api.insert(
          {.pid = pid, .tid = pid, .domain = "runtime", .start_ns = call, .end_ns = call + 10, .correlation_id = corr});
      kernels.insert({.pid = pid, .correlation_id = corr, .start_ns = start, .end_ns = end});
    };
    launch(1, 1, 100, 200, 300);
    launch(1, 2, 500, 600, 700);
    launch(2, 1, 100, 150, 160);
    insert(src, rows::DataLoss{.what = "truncated_log", .count = 1, .severity = "data_loss", .detail = "cut"});
  }
  std::int64_t count(Database& db, const std::string& sql) { return db.query_int(sql).value_or(-1); }

  Database src{":memory:", Database::Mode::kReadWriteCreate};
};

TEST_F(TraceCopyTest, NoFilterCopiesEveryRowWithTheSchemaAndNoHelperTables) {
  Database db = copy_trace(src, {});
  for (const TableDef& t : tables()) {
    const std::string n = "SELECT COUNT(*) FROM " + std::string(t.name);
    EXPECT_EQ(count(db, n), count(src, n)) << t.name;
  }
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"),
            static_cast<std::int64_t>(indexes().size()));
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM v_kernels"), 3);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM sqlite_temp_master"), 0);
  EXPECT_EQ(count(src, "SELECT COUNT(*) FROM sqlite_temp_master"), 0);
}

TEST_F(TraceCopyTest, AnEmptyDeviceSetKeepsOnlyRowsWithoutAProcess) {
  TraceCopyFilter f;
  f.devices.emplace();
  Database db = copy_trace(src, f);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM kernels"), 0);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM api_calls"), 0);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM processes"), 0);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM data_loss"), 1);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM meta"), 1);
}

TEST_F(TraceCopyTest, RangesKeepTheCallsInsideAndTheirGpuWorkWithTheGivenWindows) {
  TraceCopyFilter f;
  // Two overlapping intervals of pid 1 merge into [90,120]: only the first call is inside.
  f.ranges = std::vector<PidInterval>{{1, 90, 105}, {1, 100, 120}};
  f.capture_windows = {{.pid = 1, .start_ns = 90, .end_ns = 120, .reason = "nvtx:x"}};
  Database db = copy_trace(src, f);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM api_calls"), 1);
  EXPECT_EQ(count(db, "SELECT correlation_id FROM kernels"), 1);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM kernels"), 1);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM capture_windows"), 1);
  EXPECT_EQ(count(db, "SELECT end_ns FROM capture_windows WHERE reason = 'nvtx:x'"), 120);

  f.widen_spans = true;  // the kernel [200,300] runs past the window
  Database wide = copy_trace(src, f);
  EXPECT_EQ(count(wide, "SELECT start_ns FROM capture_windows"), 90);
  EXPECT_EQ(count(wide, "SELECT end_ns FROM capture_windows"), 300);
}

TEST_F(TraceCopyTest, TimeWindowKeepsOverlapsWholeAndClipsProcessesAndWindows) {
  TraceCopyFilter f;
  f.from_ns = 250;
  f.to_ns = 550;
  f.pid = 1;
  Database db = copy_trace(src, f);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM kernels"), 1);
  EXPECT_EQ(count(db, "SELECT end_ns - start_ns FROM kernels"), 100);  // [200,300] whole
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM api_calls"), 1);           // [500,510]
  EXPECT_EQ(count(db, "SELECT start_ns FROM processes"), 250);
  EXPECT_EQ(count(db, "SELECT end_ns FROM capture_windows"), 550);
  EXPECT_EQ(count(db, "SELECT COUNT(*) FROM data_loss"), 1);  // no pid: kept
}

}  // namespace
}  // namespace gpuscope::store

namespace gpuscope::store {
namespace {

// memory_events: by device like GPU work, by time at ts_ns, inside ranges by their API call
// or their own time; in_use_bytes is copied as computed on the whole trace.
TEST_F(TraceCopyTest, MemoryEventsFollowDevicesTimesAndRanges) {
  RowWriter<rows::MemoryEvent> mem(src);
  mem.insert({.pid = 1, .device_id = 0, .correlation_id = 1, .ts_ns = 105, .operation = "alloc", .in_use_bytes = 8});
  mem.insert({.pid = 1, .device_id = 1, .correlation_id = 0, .ts_ns = 400, .operation = "alloc", .in_use_bytes = 4});
  mem.insert({.pid = 2, .device_id = 0, .correlation_id = 0, .ts_ns = 800, .operation = "free", .in_use_bytes = 0});
  {
    TraceCopyFilter f;
    f.devices = std::vector<PidDevice>{{1, 1}};
    Database db = copy_trace(src, f);
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM memory_events"), 1);
    EXPECT_EQ(count(db, "SELECT in_use_bytes FROM memory_events"), 4);
  }
  {
    TraceCopyFilter f;
    f.from_ns = 300;
    f.to_ns = 900;
    Database db = copy_trace(src, f);
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM memory_events"), 2);
  }
  {
    TraceCopyFilter f;
    f.ranges = std::vector<PidInterval>{{1, 90, 120}, {1, 390, 410}};
    Database db = copy_trace(src, f);
    // ts 105 (its call [100,110] is inside too) and ts 400 (no call: its own time).
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM memory_events"), 2);
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM memory_events WHERE pid = 2"), 0);
  }
}

// py_samples: inside NVTX ranges by their own time (ts_ns), like messages; by time window too.
TEST_F(TraceCopyTest, PySamplesFollowRangesAndTimes) {
  RowWriter<rows::PySample> samples(src);
  for (std::int64_t ts : {95, 105, 115, 300})
    samples.insert({.pid = 1, .tid = 1, .ts_ns = ts, .holds_gil = 1, .on_cpu = 1});
  samples.insert({.pid = 2, .tid = 2, .ts_ns = 100, .holds_gil = 0, .on_cpu = 0});
  {
    TraceCopyFilter f;
    f.ranges = std::vector<PidInterval>{{1, 100, 120}};
    Database db = copy_trace(src, f);
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM py_samples"), 2);
    EXPECT_EQ(count(db, "SELECT MIN(ts_ns) FROM py_samples"), 105);
  }
  {
    TraceCopyFilter f;
    f.from_ns = 200;
    f.to_ns = 900;
    Database db = copy_trace(src, f);
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM py_samples"), 1);
  }
}

// gpu_metrics (no pid): by device through the sessions' UUIDs (GPU-x is device 0 of both
// processes, GPU-y device 1 of pid 1, GPU-z no process's), by time like any start/end rows,
// inside ranges when they overlap an interval of any process; names and sessions copied.
TEST_F(TraceCopyTest, GpuMetricsFollowDevicesTimesAndRanges) {
  insert(src, rows::Device{.pid = 1, .device_id = 1, .uuid = "GPU-y"});
  insert(src, rows::GpuMetricName{.id = 1, .name = "dram__bytes_read.sum", .label = "DRAM read", .unit = "bytes"});
  RowWriter<rows::GpuMetricsSession> sessions(src);
  sessions.insert({.device_id = 0, .uuid = "GPU-x", .samples = 2});
  sessions.insert({.device_id = 1, .uuid = "GPU-y", .samples = 1});
  sessions.insert({.device_id = 2, .uuid = "GPU-z", .samples = 1});
  RowWriter<rows::GpuMetric> metrics(src);
  auto sample = [&](std::int64_t device, std::int64_t start, std::int64_t end, double value) {
    metrics.insert({.device_id = device, .start_ns = start, .end_ns = end, .metric_id = 1, .value = value});
  };
  sample(0, 100, 200, 1);
  sample(0, 400, 450, 2);
  sample(1, 100, 200, 3);
  sample(2, 100, 200, 4);
  {
    TraceCopyFilter f;
    f.devices = std::vector<PidDevice>{{2, 0}};  // GPU-x, as pid 2 sees it
    Database db = copy_trace(src, f);
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM gpu_metrics"), 2);
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM gpu_metrics WHERE device_id <> 0"), 0);
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM gpu_metrics_sessions"), 1);
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM gpu_metric_names"), 1);
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM v_gpu_metrics WHERE label = 'DRAM read'"), 2);
  }
  {
    TraceCopyFilter f;
    f.devices = std::vector<PidDevice>{{1, 1}};
    Database db = copy_trace(src, f);
    EXPECT_EQ(count(db, "SELECT device_id FROM gpu_metrics"), 1);
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM gpu_metrics"), 1);
  }
  {
    TraceCopyFilter f;
    f.from_ns = 300;
    f.to_ns = 900;
    Database db = copy_trace(src, f);
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM gpu_metrics"), 1);
    EXPECT_EQ(count(db, "SELECT start_ns FROM gpu_metrics"), 400);
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM gpu_metrics_sessions"), 3);
  }
  {
    TraceCopyFilter f;
    f.ranges = std::vector<PidInterval>{{2, 420, 430}};  // pid 2's interval: a GPU counts every process
    Database db = copy_trace(src, f);
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM gpu_metrics"), 1);
    EXPECT_EQ(count(db, "SELECT start_ns FROM gpu_metrics"), 400);
  }
  {
    TraceCopyFilter f;
    f.ranges = std::vector<PidInterval>{{1, 90, 105}, {2, 200, 210}};
    Database db = copy_trace(src, f);
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM gpu_metrics"), 3);  // the three [100,200] samples
    EXPECT_EQ(count(db, "SELECT COUNT(*) FROM sqlite_temp_master"), 0);
  }
}

}  // namespace
}  // namespace gpuscope::store
