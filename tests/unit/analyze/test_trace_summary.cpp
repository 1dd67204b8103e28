#include "analyze/nsys/trace_summary.hpp"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using test::cell;
using test::col;
using test::has_note;
using test::TraceDb;
namespace rows = store::rows;

const Report* find(const std::vector<Report>& reports, const std::string& name) {
  const auto it = std::find_if(reports.begin(), reports.end(), [&](const Report& r) { return r.name == name; });
  return it == reports.end() ? nullptr : &*it;
}

// pid 100, wall [0, 100000) ns. Kernels: A on stream 7 [1000,5000) and [20000,21000),
// B on stream 8 [3000,9000) overlapping A. Copies: HtoD [10000,12000) 2 MB and
// [8000,8500) 1 MB (inside B: adds nothing to busy time), DtoH [30000,31000) 0.5 MB.
// Memset [40000,40500) 4096 bytes.
// Busy union = [1000,9000) + [10000,12000) + [20000,21000) + [30000,31000) + [40000,40500)
//            = 8000 + 2000 + 1000 + 1000 + 500 = 12500 ns.
class SummaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t.add(rows::Process{.pid = 100,
                        .cmdline = "python3 train.py",
                        .exe = "/usr/bin/python3",
                        .start_ns = 0,
                        .end_ns = 100000,
                        .ended_cleanly = 1});
    t.strings({{1, "kernel_a(float*)"}, {2, "kernel_b(int)"}});
    t.kernel(100, 0, 7, 11, 1000, 5000, 1);
    t.kernel(100, 0, 8, 12, 3000, 9000, 2);
    t.kernel(100, 0, 7, 13, 20000, 21000, 1);
    t.memcpy(100, "HtoD", 10000, 12000, 2000000);
    t.memcpy(100, "HtoD", 8000, 8500, 1000000);
    t.memcpy(100, "DtoH", 30000, 31000, 500000);
    t.add(rows::Memset{.pid = 100,
                       .device_id = 0,
                       .context_id = 1,
                       .stream_id = 7,
                       .start_ns = 40000,
                       .end_ns = 40500,
                       .bytes = 4096,
                       .value = 0,
                       .memory_kind = "device"});
  }
  TraceDb t;
};

TEST_F(SummaryTest, OverviewUsesUnionOfOverlappingIntervals) {
  // Nothing repeats here: by default the overview judges the run from its first GPU work on
  // (1 µs to the end: 99 µs); the whole process with whole_run.
  const Report judged = trace_summary(t.db()).front();
  EXPECT_DOUBLE_EQ(cell<double>(judged, 0, "Wall Time"), 0.099);
  EXPECT_DOUBLE_EQ(cell<double>(judged, 0, "Whole-Run Wall Time"), 0.1);
  EXPECT_TRUE(has_note(judged, "no repeating structure"));
  const auto reports = trace_summary(t.db(), 10, true);
  const Report* ov = find(reports, "trace_overview");
  ASSERT_NE(ov, nullptr);
  EXPECT_EQ(&reports.front(), ov);
  ASSERT_EQ(ov->rows.size(), 1u);
  EXPECT_DOUBLE_EQ(cell<double>(*ov, 0, "Wall Time"), 0.1);         // 100000 ns in ms
  EXPECT_DOUBLE_EQ(cell<double>(*ov, 0, "GPU Busy Time"), 0.0125);  // 12500 ns in ms
  EXPECT_DOUBLE_EQ(cell<double>(*ov, 0, "GPU Busy"), 12.5);         // %
  EXPECT_EQ(cell<std::int64_t>(*ov, 0, "Kernels"), 3);
  EXPECT_EQ(cell<std::int64_t>(*ov, 0, "Memcpys"), 3);
  EXPECT_EQ(cell<std::int64_t>(*ov, 0, "Memsets"), 1);
  EXPECT_EQ(cell<std::int64_t>(*ov, 0, "Processes"), 1);
  EXPECT_EQ(cell<std::int64_t>(*ov, 0, "GPUs"), 1);
  EXPECT_EQ(ov->columns[col(*ov, "Wall Time")].unit, "ms");
  EXPECT_EQ(ov->columns[col(*ov, "GPU Busy")].unit, "%");
  EXPECT_EQ(find(reports, "gpu_utilization"), nullptr);  // one GPU only
  for (const Note& n : ov->notes) EXPECT_EQ(n.level, NoteLevel::kInfo) << n.text;
}

TEST_F(SummaryTest, TopKernelsByTotalTime) {
  const auto reports = trace_summary(t.db());
  const Report* k = find(reports, "cuda_gpu_kern_sum");
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->rows.size(), 2u);
  // B: 1 call, 6000 ns; A: 2 calls, 4000 + 1000 ns. Kernel time total 11000 ns.
  EXPECT_EQ(cell<std::string>(*k, 0, "Name"), "kernel_b(int)");
  EXPECT_EQ(cell<std::int64_t>(*k, 0, "Instances"), 1);
  EXPECT_EQ(cell<std::int64_t>(*k, 0, "Total Time"), 6000);
  EXPECT_DOUBLE_EQ(cell<double>(*k, 0, "Avg"), 6000.0);
  EXPECT_DOUBLE_EQ(cell<double>(*k, 0, "Time"), 6000.0 / 11000.0 * 100.0);
  EXPECT_EQ(cell<std::string>(*k, 1, "Name"), "kernel_a(float*)");
  EXPECT_EQ(cell<std::int64_t>(*k, 1, "Instances"), 2);
  EXPECT_EQ(cell<std::int64_t>(*k, 1, "Total Time"), 5000);
  EXPECT_DOUBLE_EQ(cell<double>(*k, 1, "Avg"), 2500.0);
  EXPECT_EQ(k->columns[col(*k, "Total Time")].unit, "ns");
}

TEST_F(SummaryTest, TopNLimitsRowsAndSaysSo) {
  const auto reports = trace_summary(t.db(), 1);
  const Report* k = find(reports, "cuda_gpu_kern_sum");
  ASSERT_NE(k, nullptr);
  ASSERT_EQ(k->rows.size(), 1u);
  EXPECT_TRUE(has_note(*k, NoteLevel::kInfo, "top 1 of 2 kernel names"));
  EXPECT_TRUE(has_note(*k, NoteLevel::kInfo, "5 µs"));
}

TEST_F(SummaryTest, MemoryOperationsPerKind) {
  const auto reports = trace_summary(t.db());
  const Report* m = find(reports, "cuda_gpu_mem_sum");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->rows.size(), 3u);
  // Sorted by total time: HtoD 2500 ns, DtoH 1000 ns, memset 500 ns.
  EXPECT_EQ(cell<std::string>(*m, 0, "Operation"), "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(cell<std::int64_t>(*m, 0, "Count"), 2);
  EXPECT_DOUBLE_EQ(cell<double>(*m, 0, "Total"), 3.0);  // MB
  EXPECT_EQ(cell<std::int64_t>(*m, 0, "Total Time"), 2500);
  EXPECT_DOUBLE_EQ(cell<double>(*m, 0, "Throughput"), 3000000.0 / 2500.0);  // GB/s = bytes/ns
  EXPECT_EQ(cell<std::string>(*m, 1, "Operation"), "[CUDA memcpy Device-to-Host]");
  EXPECT_DOUBLE_EQ(cell<double>(*m, 1, "Total"), 0.5);
  EXPECT_EQ(cell<std::string>(*m, 2, "Operation"), "[CUDA memset]");
  EXPECT_EQ(cell<std::int64_t>(*m, 2, "Count"), 1);
  EXPECT_DOUBLE_EQ(cell<double>(*m, 2, "Throughput"), 4096.0 / 500.0);
  EXPECT_EQ(m->columns[col(*m, "Total")].unit, "MB");
  EXPECT_EQ(m->columns[col(*m, "Throughput")].unit, "GB/s");
}

TEST(MemcpyNames, NsysNaming) {
  EXPECT_EQ(memcpy_operation_name("DtoD"), "[CUDA memcpy Device-to-Device]");
  EXPECT_EQ(memcpy_operation_name("PtoP"), "[CUDA memcpy Peer-to-Peer]");
  EXPECT_EQ(memcpy_operation_name("unknown"), "[CUDA memcpy Unknown]");
  EXPECT_EQ(memcpy_operation_name("bogus"), "[CUDA memcpy Unknown]");
}

TEST_F(SummaryTest, DataLossAbnormalEndAndMessagesBecomeNotesLoudestFirst) {
  t.add<rows::DataLoss>(
      {{.pid = 100,
        .what = "cupti_dropped_records",
        .count = 42,
        .severity = "data_loss",
        .detail = "CUPTI dropped records; raise the buffer size"},
       {.pid = 100, .what = "unmatched_nvtx_pop", .count = 1, .severity = "warning", .detail = "a pop without a push"},
       {.pid = std::nullopt,
        .what = "unclosed_nvtx_range",
        .count = 2,
        .severity = "info",
        .detail = "ranges left open"}});
  t.add(rows::Process{.pid = 200, .start_ns = 0, .end_ns = 50000, .ended_cleanly = 0, .term_signal = 9});
  t.add(rows::Message{
      .pid = 100, .ts_ns = 5, .severity = "warning", .text = "another CUPTI client holds the subscription"});
  const auto reports = trace_summary(t.db());
  const Report& ov = reports.front();
  EXPECT_TRUE(has_note(ov, NoteLevel::kDataLoss, "pid 100: cupti_dropped_records (count 42): CUPTI dropped"));
  EXPECT_TRUE(has_note(ov, NoteLevel::kWarning, "unmatched_nvtx_pop"));
  EXPECT_TRUE(has_note(ov, NoteLevel::kInfo, "unclosed_nvtx_range (count 2)"));
  EXPECT_TRUE(has_note(ov, NoteLevel::kDataLoss,
                       "process 200 ended abnormally (killed by signal 9); events after its last flush are missing"));
  EXPECT_TRUE(has_note(ov, NoteLevel::kWarning, "pid 100: another CUPTI client holds the subscription"));
  // Loudest first: every data-loss note comes before every warning, warnings before info.
  auto rank = [](NoteLevel l) { return l == NoteLevel::kDataLoss ? 0 : l == NoteLevel::kWarning ? 1 : 2; };
  for (std::size_t i = 1; i < ov.notes.size(); ++i)
    EXPECT_LE(rank(ov.notes[i - 1].level), rank(ov.notes[i].level)) << ov.notes[i].text;
}

// A trace with no timed event at all (logs that end before the collector's first flush):
// no wall or GPU time is invented, and the warning says why.
TEST(Summary, EmptyCaptureSaysSoWithoutNaN) {
  TraceDb t;
  const auto reports = trace_summary(t.db());
  ASSERT_EQ(reports.size(), 1u);  // kernel and memory reports are left out when empty
  const Report& ov = reports.front();
  EXPECT_TRUE(has_note(ov, NoteLevel::kWarning, "no events were recorded before the program stopped"));
  ASSERT_EQ(ov.rows.size(), 1u);
  for (const Cell& c : ov.rows[0]) {
    if (const auto* d = std::get_if<double>(&c)) {
      EXPECT_TRUE(std::isfinite(*d));
    }
  }
  EXPECT_TRUE(std::holds_alternative<std::monostate>(ov.rows[0][col(ov, "GPU Busy")]));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(ov.rows[0][col(ov, "Wall Time")]));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(ov.rows[0][col(ov, "GPU Busy Time")]));
  EXPECT_EQ(cell<std::int64_t>(ov, 0, "Kernels"), 0);
}

TEST(Summary, ProcessWithoutGpuWorkStillReportsNoActivity) {
  TraceDb t;
  t.add(rows::Process{.pid = 1, .start_ns = 1000, .end_ns = 2000, .ended_cleanly = 1});
  const auto reports = trace_summary(t.db());
  const Report& ov = reports.front();
  EXPECT_DOUBLE_EQ(cell<double>(ov, 0, "Wall Time"), 0.001);
  // No GPU was used: busy % has no denominator and is NULL, not 0 or NaN.
  EXPECT_TRUE(std::holds_alternative<std::monostate>(ov.rows[0][col(ov, "GPU Busy")]));
  EXPECT_TRUE(has_note(ov, NoteLevel::kWarning, "no GPU activity"));
}

TEST(Summary, WallTimeFromCaptureWindows) {
  TraceDb t;
  t.add(rows::Process{.pid = 1, .start_ns = 0, .end_ns = 10000000, .ended_cleanly = 1});
  t.add(rows::CaptureWindow{.pid = 1, .start_ns = 2000000, .end_ns = 4000000, .reason = "cudaProfilerStart"});
  t.strings({{1, "k"}});
  t.kernel(1, 0, 7, 1, 2000000, 3000000, 1);
  const auto reports = trace_summary(t.db());
  const Report& ov = reports.front();
  EXPECT_DOUBLE_EQ(cell<double>(ov, 0, "Wall Time"), 2.0);
  EXPECT_DOUBLE_EQ(cell<double>(ov, 0, "GPU Busy"), 50.0);
}

// Two ranks, each calling its GPU "device 0" (CUDA_VISIBLE_DEVICES): two physical GPUs.
TEST(Summary, TwoProcessesOnDifferentGpusWithTheSameOrdinal) {
  TraceDb t;
  t.add<rows::Process>({{.pid = 1, .start_ns = 0, .end_ns = 10000, .ended_cleanly = 1},
                        {.pid = 2, .start_ns = 0, .end_ns = 10000, .ended_cleanly = 1}});
  t.add<rows::Device>({{.pid = 1, .device_id = 0, .name = "NVIDIA H100", .uuid = "GPU-aaaa"},
                       {.pid = 2, .device_id = 0, .name = "NVIDIA H100", .uuid = "GPU-bbbb"}});
  t.strings({{1, "k"}});
  t.kernel(1, 0, 7, 1, 0, 1000, 1);
  t.kernel(2, 0, 7, 1, 0, 3000, 1);  // same times: would overlap if wrongly merged
  const auto reports = trace_summary(t.db());
  const Report& ov = reports.front();
  EXPECT_EQ(cell<std::int64_t>(ov, 0, "GPUs"), 2);
  EXPECT_DOUBLE_EQ(cell<double>(ov, 0, "GPU Busy Time"), 0.004);
  EXPECT_DOUBLE_EQ(cell<double>(ov, 0, "GPU Busy"), 20.0);  // 4000 / (10000 * 2)
  const Report* util = find(reports, "gpu_utilization");
  ASSERT_NE(util, nullptr);
  ASSERT_EQ(util->rows.size(), 2u);
  EXPECT_EQ(cell<std::int64_t>(*util, 0, "GPU"), 0);
  EXPECT_EQ(cell<std::string>(*util, 0, "Name"), "NVIDIA H100");
  EXPECT_DOUBLE_EQ(cell<double>(*util, 0, "Busy"), 10.0);
  EXPECT_DOUBLE_EQ(cell<double>(*util, 1, "Busy"), 30.0);
}

// Two processes sharing one GPU (same UUID): one GPU, union across processes.
TEST(Summary, TwoProcessesSharingOneGpu) {
  TraceDb t;
  t.add<rows::Process>({{.pid = 1, .start_ns = 0, .end_ns = 10000, .ended_cleanly = 1},
                        {.pid = 2, .start_ns = 0, .end_ns = 10000, .ended_cleanly = 1}});
  t.add<rows::Device>({{.pid = 1, .device_id = 0, .name = "G", .uuid = "GPU-aaaa"},
                       {.pid = 2, .device_id = 1, .name = "G", .uuid = "GPU-aaaa"}});
  t.strings({{1, "k"}});
  t.kernel(1, 0, 7, 1, 0, 2000, 1);
  t.kernel(2, 1, 7, 1, 1000, 3000, 1);
  const auto reports = trace_summary(t.db());
  const Report& ov = reports.front();
  EXPECT_EQ(cell<std::int64_t>(ov, 0, "GPUs"), 1);
  EXPECT_DOUBLE_EQ(cell<double>(ov, 0, "GPU Busy Time"), 0.003);
}

}  // namespace
}  // namespace gpuscope::analyze
