// Damaged event logs, built with the event-log builder and then corrupted by hand: a record
// header damaged in the middle (corruption, reported as such, the records after it read), a
// log cut short (a crash), and a cut log that lost its capture records (window rebuilt from
// its cudaProfilerStart call, or marked unknown) -- each with the case where the rule must not fire.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "log_builder.hpp"
#include "store/database.hpp"
#include "store/event_log_reader.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"

namespace gpuscope::store {
namespace {

using test::LogBuilder;
using test::TempDir;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// The file offset of the `nth` (0-based) record of `kind` in the log at `path`.
std::size_t record_offset(const std::string& bytes, log::RecordKind kind, int nth) {
  std::uint32_t header_size = 0;
  std::memcpy(&header_size, bytes.data() + offsetof(log::FileHeader, header_size), sizeof header_size);
  for (std::size_t off = header_size; off + sizeof(log::RecordHeader) <= bytes.size();) {
    log::RecordHeader rh{};
    std::memcpy(&rh, bytes.data() + off, sizeof rh);
    if (rh.kind == static_cast<std::uint16_t>(kind) && nth-- == 0) return off;
    off += sizeof rh + rh.size;
  }
  ADD_FAILURE() << "no such record";
  return 0;
}

void patch_header(const std::string& path, log::RecordKind kind, int nth, std::uint32_t size, std::uint16_t flags) {
  std::string bytes = read_bytes(path);
  const std::size_t off = record_offset(bytes, kind, nth);
  log::RecordHeader rh{};
  std::memcpy(&rh, bytes.data() + off, sizeof rh);
  rh.size = size;
  rh.flags = flags;
  std::memcpy(bytes.data() + off, &rh, sizeof rh);
  write_bytes(path, bytes);
}

class DamagedLogTest : public ::testing::Test {
 protected:
  std::string log(std::string_view name) { return m_dir.file(name); }
  // A process that launched `kernels` kernels (1 us apart from t = 10 us), each by a
  // cudaLaunchKernel call; with `profiler`, a cudaProfilerStart call at 50 us and the
  // collector's capture records of a window [50 us, 80 us) written last, as the collector
  // writes its host events.
  void write_log(const std::string& path, int kernels, bool profiler = false, bool capture_records = false) {
    LogBuilder b(path, 100);
    b.process(1'000);
    b.device(0, "NVIDIA H100");
    for (int i = 0; i < kernels; ++i) {
      const std::uint64_t t = 10'000 + static_cast<std::uint64_t>(i) * 1'000;
      const auto corr = static_cast<std::uint32_t>(i + 1);
      if (profiler && t == 50'000) b.api(t - 200, t - 100, 7, 10'000, "cudaProfilerStart_v4000");
      // The collector records API calls inside the window only.
      if (!profiler || (t >= 50'000 && t < 80'000)) b.api(t, t + 100, 7, corr, "cudaLaunchKernel");
      b.kernel(t + 200, t + 600, corr, "k");
    }
    if (capture_records) {
      b.capture(49'850, true);
      b.capture(80'000, false, "cudaProfilerStop");
    }
    b.end(10'000'000);
    b.close();
  }
  ImportResult import(const std::vector<std::string>& logs, const std::string& capture_range = "none") {
    ImportOptions opts;
    opts.overwrite = true;
    opts.command = "python train.py";
    opts.capture_range = capture_range;
    return import_logs(logs, m_db_path, opts);
  }
  Database db() { return open_trace(m_db_path); }
  std::int64_t q_int(const std::string& sql) {
    Database d = db();
    return d.query_int(sql).value_or(-1);
  }
  std::string q_text(const std::string& sql) {
    Database d = db();
    return d.query_text(sql).value_or("<NULL>");
  }

  TempDir m_dir;
  std::string m_db_path = m_dir.file("trace.sqlite");
};

// One kernel record's size overwritten with a huge value, 300 kernels after it: before, the
// reader stopped there and blamed a crash ("at most ~200 ms missing") for 298 lost kernels.
// Now the damage is skipped and reported as corruption with its bytes, the rest is read.
TEST_F(DamagedLogTest, ADamagedRecordLengthIsCorruptionAndTheRestIsRead) {
  write_log(log("a.gslog"), 306);
  patch_header(log("a.gslog"), log::RecordKind::kKernel, 5, 0xFFFFFF00u, 0);

  EventLogReader reader;
  ASSERT_TRUE(reader.open(log("a.gslog")).ok());
  EventLogVisitor ignore;
  const LogReadStats stats = reader.read(ignore);
  EXPECT_EQ(stats.corrupt_regions, 1u);
  EXPECT_EQ(stats.corrupt_bytes, sizeof(log::RecordHeader) + sizeof(log::KernelRecord));  // that record, exactly
  EXPECT_EQ(stats.truncated_bytes, 0u);

  const ImportResult r = import({log("a.gslog")});
  EXPECT_EQ(r.rows.kernels, 305);  // one lost, not 300
  EXPECT_EQ(q_int("SELECT COUNT(*) FROM data_loss WHERE what = 'truncated_log'"), 0);
  EXPECT_EQ(q_int("SELECT count FROM data_loss WHERE what = 'corrupt_log' AND pid = 100"),
            static_cast<std::int64_t>(sizeof(log::RecordHeader) + sizeof(log::KernelRecord)));
  const std::string detail = q_text("SELECT detail FROM data_loss WHERE what = 'corrupt_log'");
  EXPECT_NE(detail.find("is damaged (not cut short by a crash"), std::string::npos) << detail;
  EXPECT_NE(detail.find("at least 1 record(s) lost"), std::string::npos) << detail;
  EXPECT_EQ(detail.find("crash or kill"), std::string::npos) << detail;
  EXPECT_EQ(q_text("SELECT severity FROM data_loss WHERE what = 'corrupt_log'"), "data_loss");
}

// Reserved flags set on a record header: the same (the writer always writes 0).
TEST_F(DamagedLogTest, ReservedFlagsSetAreCorruption) {
  write_log(log("a.gslog"), 40);
  patch_header(log("a.gslog"), log::RecordKind::kApi, 3, sizeof(log::ApiRecord), 0x5a5a);
  const ImportResult r = import({log("a.gslog")});
  EXPECT_EQ(r.rows.kernels, 40);
  EXPECT_EQ(r.rows.api_calls, 39);
  EXPECT_EQ(q_int("SELECT COUNT(*) FROM data_loss WHERE what = 'corrupt_log'"), 1);
}

// Must not fire: a log cut mid-record by a crash is a truncated log, not corruption.
TEST_F(DamagedLogTest, ALogCutShortIsACrashNotCorruption) {
  write_log(log("a.gslog"), 50);
  const std::string bytes = read_bytes(log("a.gslog"));
  const std::size_t cut = record_offset(bytes, log::RecordKind::kKernel, 30) + 20;
  write_bytes(log("a.gslog"), bytes.substr(0, cut));
  const ImportResult r = import({log("a.gslog")});
  EXPECT_EQ(r.rows.kernels, 30);
  EXPECT_EQ(q_int("SELECT COUNT(*) FROM data_loss WHERE what = 'corrupt_log'"), 0);
  EXPECT_EQ(q_int("SELECT count FROM data_loss WHERE what = 'truncated_log'"), 20);
  // And a clean log: no loss row at all.
  write_log(log("b.gslog"), 50);
  (void)import({log("b.gslog")});
  EXPECT_EQ(q_int("SELECT COUNT(*) FROM data_loss"), 0);
}

// A cudaProfilerApi run whose log was cut before the capture records (written last): before,
// every kernel of the process was kept under a window 'all' while meta said cudaProfilerApi.
// Now the window is rebuilt from the cudaProfilerStart call and the API calls after it.
TEST_F(DamagedLogTest, ACutLogThatLostItsCaptureRecordsGetsItsWindowBack) {
  write_log(log("whole.gslog"), 100, /*profiler=*/true, /*capture_records=*/true);
  (void)import({log("whole.gslog")}, "cudaProfilerApi");
  const std::int64_t in_window = q_int("SELECT COUNT(*) FROM kernels");
  EXPECT_EQ(in_window, 30);  // launched at 50 .. 79 us

  write_log(log("cut.gslog"), 100, true, true);
  const std::string bytes = read_bytes(log("cut.gslog"));
  write_bytes(log("cut.gslog"), bytes.substr(0, record_offset(bytes, log::RecordKind::kCapture, 0) + 5));
  const ImportResult r = import({log("cut.gslog")}, "cudaProfilerApi");
  EXPECT_EQ(r.rows.kernels, in_window);
  EXPECT_EQ(q_text("SELECT reason FROM capture_windows"), "cudaProfilerStart");
  EXPECT_EQ(q_text("SELECT value FROM meta WHERE key = 'capture_window'"), "recovered");
  EXPECT_EQ(q_int("SELECT count FROM data_loss WHERE what = 'capture_window_recovered'"), 1);
}

// The same with nothing to rebuild the window from: marked unknown (meta, the window's
// reason, a data_loss row the summary shows), never a silent 'all'.
TEST_F(DamagedLogTest, ACutLogWithNothingToPlaceTheWindowIsMarkedUnknown) {
  write_log(log("cut.gslog"), 60);
  const std::string bytes = read_bytes(log("cut.gslog"));
  write_bytes(log("cut.gslog"), bytes.substr(0, record_offset(bytes, log::RecordKind::kProcessEnd, 0) + 3));
  const ImportResult r = import({log("cut.gslog")}, "cudaProfilerApi");
  EXPECT_EQ(r.rows.kernels, 60);
  EXPECT_EQ(q_text("SELECT reason FROM capture_windows"), "unknown");
  EXPECT_EQ(q_text("SELECT value FROM meta WHERE key = 'capture_window'"), "unknown");
  const std::string detail = q_text("SELECT detail FROM data_loss WHERE what = 'capture_window_unknown'");
  EXPECT_EQ(detail.rfind("capture window unknown:", 0), 0u) << detail;
  EXPECT_NE(detail.find("all of its 60 kernel records were kept"), std::string::npos) << detail;
  EXPECT_EQ(q_text("SELECT severity FROM data_loss WHERE what = 'capture_window_unknown'"), "data_loss");

  // Must not fire: the same cut log of a run without a capture range keeps its window 'all',
  // and no meta.capture_window is written.
  (void)import({log("cut.gslog")});
  EXPECT_EQ(q_text("SELECT reason FROM capture_windows"), "all");
  EXPECT_EQ(q_int("SELECT COUNT(*) FROM meta WHERE key = 'capture_window'"), 0);
  EXPECT_EQ(q_int("SELECT COUNT(*) FROM data_loss WHERE what LIKE 'capture_window%'"), 0);
}

}  // namespace
}  // namespace gpuscope::store
