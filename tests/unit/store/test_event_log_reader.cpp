#include "store/event_log_reader.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "log_builder.hpp"

namespace gpuscope::store {
namespace {

using test::LogBuilder;
using test::TempDir;

struct Collect final : EventLogVisitor {
  explicit Collect(const EventLogReader& r) : reader(r) {}
  void on_kernel(const log::KernelRecord& r) override { names.emplace_back(reader.string(r.name_string)); }
  void on_api(const log::ApiRecord& r) override { names.emplace_back(reader.string(r.name_string)); }
  void on_process_end(const log::ProcessEndRecord&) override { ended = true; }
  const EventLogReader& reader;
  std::vector<std::string> names;
  bool ended = false;
};

void patch_u32(const std::string& path, std::streamoff offset, std::uint32_t value) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(offset);
  f.write(reinterpret_cast<const char*>(&value), sizeof value);
}

TEST(EventLogReader, ReadsRecordsAndResolvesStrings) {
  TempDir dir;
  const std::string path = dir.file("p.gslog");
  {
    LogBuilder b(path, 42);
    b.api(100, 200, 7, 1, "cudaLaunchKernel");
    b.kernel(300, 400, 1, "_Z6kernelPfi");
    b.api(500, 600, 7, 2, "cudaLaunchKernel");  // string reused, not re-written
    b.end(700);
    b.close();
  }
  EventLogReader reader;
  const LogStatus st = reader.open(path);
  ASSERT_TRUE(st.ok()) << st.message;
  EXPECT_EQ(reader.pid(), 42u);
  Collect c(reader);
  const LogReadStats stats = reader.read(c);
  EXPECT_EQ(c.names, (std::vector<std::string>{"cudaLaunchKernel", "_Z6kernelPfi", "cudaLaunchKernel"}));
  EXPECT_TRUE(c.ended);
  EXPECT_EQ(stats.records, 6u);  // 2 strings + 4 records
  EXPECT_EQ(stats.truncated_bytes, 0u);
  EXPECT_EQ(stats.unknown_records, 0u);
  EXPECT_EQ(stats.file_bytes, std::filesystem::file_size(path));
}

TEST(EventLogReader, StopsAtTruncatedRecordAndCountsBytes) {
  TempDir dir;
  const std::string path = dir.file("p.gslog");
  {
    LogBuilder b(path, 1);
    b.api(100, 200, 7, 1, "cudaMalloc");
    b.api(300, 400, 7, 2, "cudaFree");
    b.close();
  }
  const auto size = std::filesystem::file_size(path);
  const std::uint64_t chop = 10;  // inside the last ApiRecord payload
  std::filesystem::resize_file(path, size - chop);
  EventLogReader reader;
  ASSERT_TRUE(reader.open(path).ok());
  Collect c(reader);
  const LogReadStats stats = reader.read(c);
  EXPECT_EQ(c.names, (std::vector<std::string>{"cudaMalloc"}));
  EXPECT_EQ(stats.truncated_bytes, sizeof(log::RecordHeader) + sizeof(log::ApiRecord) - chop);

  // Cut inside a RecordHeader: the partial header is the truncated part.
  std::filesystem::resize_file(path, size - sizeof(log::ApiRecord) - 3);
  ASSERT_TRUE(reader.open(path).ok());
  Collect c2(reader);
  EXPECT_EQ(reader.read(c2).truncated_bytes, sizeof(log::RecordHeader) - 3);
}

TEST(EventLogReader, SkipsAndCountsUnknownAndShortRecords) {
  TempDir dir;
  const std::string path = dir.file("p.gslog");
  {
    LogBuilder b(path, 1);
    b.raw(999, "future record");
    b.raw(static_cast<std::uint16_t>(log::RecordKind::kKernel), "short");
    b.api(100, 200, 7, 1, "cudaMalloc");
    b.close();
  }
  EventLogReader reader;
  ASSERT_TRUE(reader.open(path).ok());
  Collect c(reader);
  const LogReadStats stats = reader.read(c);
  EXPECT_EQ(stats.unknown_records, 1u);
  EXPECT_EQ(stats.malformed_records, 1u);
  EXPECT_EQ(c.names, (std::vector<std::string>{"cudaMalloc"}));
}

TEST(EventLogReader, RefusesOtherFormatVersionNamingBoth) {
  TempDir dir;
  const std::string path = dir.file("p.gslog");
  {
    LogBuilder b(path, 1);
    b.close();
  }
  patch_u32(path, offsetof(log::FileHeader, format_version), 2);
  EventLogReader reader;
  const LogStatus st = reader.open(path);
  EXPECT_EQ(st.kind, LogErrorKind::kVersionMismatch);
  EXPECT_EQ(st.found_version, 2u);
  EXPECT_NE(st.message.find("log format version 2, this gpuscope reads version 1: re-record with "
                            "this gpuscope or use a newer one"),
            std::string::npos)
      << st.message;
}

TEST(EventLogReader, RefusesNonLogs) {
  TempDir dir;
  EventLogReader reader;
  EXPECT_EQ(reader.open(dir.file("missing")).kind, LogErrorKind::kCannotOpen);

  const std::string junk = dir.file("junk");
  std::ofstream(junk) << "this is not an event log, just some text";
  const LogStatus st = reader.open(junk);
  EXPECT_EQ(st.kind, LogErrorKind::kNotALog);
  EXPECT_NE(st.message.find("not a gpuscope event log"), std::string::npos);

  const std::string tiny = dir.file("tiny");
  std::ofstream(tiny) << "GSC";
  EXPECT_EQ(reader.open(tiny).kind, LogErrorKind::kNotALog);
}

// Found by fuzz_event_log_import: a String record claiming id 2^24 - 1 in a log of a few
// hundred bytes made each pass allocate a 256 MB id table. Ids beyond what the file can
// number are kept aside, and still resolve.
TEST(EventLogReader, StringIdsBeyondWhatTheFileCanHoldAllocateNothing) {
  TempDir dir;
  const std::string path = dir.file("p.gslog");
  constexpr std::uint64_t kId = (1u << 24) - 1;
  {
    LogBuilder b(path, 42);
    std::string payload(sizeof(log::StringRecord), '\0');
    std::memcpy(payload.data(), &kId, sizeof kId);
    b.raw(static_cast<std::uint16_t>(log::RecordKind::kString), payload + "far_kernel");
    log::KernelRecord k{};
    k.start_ns = 1;
    k.end_ns = 2;
    k.name_string = kId;
    b.writer().add(log::RecordKind::kKernel, k);
    b.close();
  }
  EventLogReader reader;
  ASSERT_TRUE(reader.open(path).ok());
  Collect c(reader);
  const std::size_t before = ::mallinfo2().uordblks;  // 0 under ASan, which replaces malloc
  (void)reader.read(c);
  (void)reader.read(c);
  const std::size_t after = ::mallinfo2().uordblks;
  EXPECT_LT(after, before + (std::size_t{16} << 20));
  EXPECT_EQ(c.names, (std::vector<std::string>{"far_kernel", "far_kernel"}));
  EXPECT_EQ(reader.string(kId), "far_kernel");
  EXPECT_EQ(reader.string(kId - 1), "");
}

// GPU-metrics records carry an array after their struct: the visitor gets it whole and
// aligned; a record whose size is not struct + array (count too high or too low, or a
// partial element) is skipped as malformed.
TEST(EventLogReader, GpuMetricsRecordsCarryTheirArrays) {
  struct Metrics final : EventLogVisitor {
    explicit Metrics(const EventLogReader& r) : reader(r) {}
    void on_gpu_metrics_session(const log::GpuMetricsSessionRecord& r, std::span<const std::uint64_t> ids) override {
      device = r.device_id;
      for (std::uint64_t id : ids) names.emplace_back(reader.string(id));
    }
    void on_gpu_metric_sample(const log::GpuMetricSampleRecord& r, std::span<const double> v) override {
      starts.push_back(r.start_ns);
      values.emplace_back(v.begin(), v.end());
    }
    const EventLogReader& reader;
    std::uint32_t device = 0;
    std::vector<std::string> names;
    std::vector<std::uint64_t> starts;
    std::vector<std::vector<double>> values;
  };
  TempDir dir;
  const std::string path = dir.file("gm.gslog");
  const auto sample = static_cast<std::uint16_t>(log::RecordKind::kGpuMetricSample);
  {
    LogBuilder b(path, 1);
    b.gpu_metrics_session(2, 0xab, {"a.sum", "b.avg"});
    b.gpu_metric_sample(2, 10, 20, {1.5, -2.0});
    b.raw(sample, LogBuilder::gpu_metric_sample_payload(2, 30, 40, {1.0, 2.0}, 3));  // 3 announced, 2 there
    b.raw(sample, LogBuilder::gpu_metric_sample_payload(2, 30, 40, {1.0, 2.0}, 1));  // 1 announced, 2 there
    b.raw(sample, LogBuilder::gpu_metric_sample_payload(2, 30, 40, {1.0}) + "xyz");  // a partial element
    b.raw(static_cast<std::uint16_t>(log::RecordKind::kGpuMetricsSession), "short");
    b.gpu_metric_sample(2, 50, 60, {});  // no values: a valid empty sample
    b.close();
  }
  EventLogReader reader;
  ASSERT_TRUE(reader.open(path).ok());
  Metrics m(reader);
  const LogReadStats stats = reader.read(m);
  EXPECT_EQ(m.device, 2u);
  EXPECT_EQ(m.names, (std::vector<std::string>{"a.sum", "b.avg"}));
  EXPECT_EQ(m.starts, (std::vector<std::uint64_t>{10, 50}));
  ASSERT_EQ(m.values.size(), 2u);
  EXPECT_EQ(m.values[0], (std::vector<double>{1.5, -2.0}));
  EXPECT_TRUE(m.values[1].empty());
  EXPECT_EQ(stats.malformed_records, 4u);
  EXPECT_EQ(stats.truncated_bytes, 0u);
}

}  // namespace
}  // namespace gpuscope::store
