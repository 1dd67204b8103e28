#include "analyze/nsys/nsys_reports.hpp"
#include "analyze/report_registry.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <gtest/gtest.h>

#include "../committed_traces.hpp"
#include "../store/log_builder.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"
#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using test::cell;
using test::col;
using test::has_note;
using test::TraceDb;
namespace rows = store::rows;

std::vector<std::string> headers(const Report& r) {
  std::vector<std::string> out;
  for (const Column& c : r.columns) out.push_back(c.unit.empty() ? c.name : c.name + " (" + c.unit + ")");
  return out;
}

// Kernels: "a" (short "a_s", mangled "_Z1a") 10, 20, 60 ns; "b" 30 ns.
// Copies: HtoD 2 MB in 100 ns and 1 MB in 300 ns, DtoH 0.5 MB in 50 ns; memset 4096 B in 40 ns.
// API: cudaLaunchKernel 5, 7 ns; cudaMalloc 100 ns.
// NVTX: "step" PushPop 100, 300 ns (default domain); "load" StartEnd 50 ns in domain "io";
//       a mark and an unclosed range (both excluded).
class NsysReportsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t.strings({{1, "a(float*)"},
               {2, "b(int)"},
               {3, "a_s"},
               {4, "_Z1a"},
               {10, "cudaLaunchKernel"},
               {11, "cudaMalloc"},
               {20, "step"},
               {21, "load"},
               {22, "io"},
               {23, "mark"},
               {24, "open"}});
    auto a = [&](int corr, long long start, long long end) {  // short name a_s, mangled _Z1a
      rows::Kernel k = TraceDb::kernel_row(1, 0, 7, corr, start, end, 1);
      k.short_name_id = 3;
      k.mangled_name_id = 4;
      t.add(k);
    };
    a(1, 0, 10);
    a(2, 100, 120);
    a(3, 200, 260);
    t.kernel(1, 0, 7, 4, 300, 330, 2);
    t.memcpy(1, "HtoD", 1000, 1100, 2000000);
    t.memcpy(1, "HtoD", 2000, 2300, 1000000);
    t.memcpy(1, "DtoH", 3000, 3050, 500000);
    t.add(rows::Memset{.pid = 1,
                       .device_id = 0,
                       .context_id = 1,
                       .stream_id = 7,
                       .correlation_id = 5,
                       .start_ns = 4000,
                       .end_ns = 4040,
                       .bytes = 4096,
                       .value = 0,
                       .memory_kind = "device"});
    t.add<rows::ApiCall>({{.pid = 1,
                           .tid = 1,
                           .domain = "runtime",
                           .cbid = 211,
                           .name_id = 10,
                           .start_ns = 0,
                           .end_ns = 5,
                           .correlation_id = 1,
                           .return_value = 0},
                          {.pid = 1,
                           .tid = 1,
                           .domain = "runtime",
                           .cbid = 211,
                           .name_id = 10,
                           .start_ns = 10,
                           .end_ns = 17,
                           .correlation_id = 2,
                           .return_value = 0},
                          {.pid = 1,
                           .tid = 1,
                           .domain = "runtime",
                           .cbid = 20,
                           .name_id = 11,
                           .start_ns = 20,
                           .end_ns = 120,
                           .correlation_id = 3,
                           .return_value = 0}});
    t.add<rows::NvtxEvent>(
        {{.id = 1, .pid = 1, .tid = 1, .end_tid = 1, .style = "PushPop", .text_id = 20, .start_ns = 0, .end_ns = 100},
         {.id = 2, .pid = 1, .tid = 1, .end_tid = 1, .style = "PushPop", .text_id = 20, .start_ns = 200, .end_ns = 500},
         {.id = 3,
          .pid = 1,
          .tid = 1,
          .end_tid = 1,
          .domain_id = 22,
          .style = "StartEnd",
          .text_id = 21,
          .start_ns = 0,
          .end_ns = 50},
         {.id = 4, .pid = 1, .tid = 1, .end_tid = 1, .style = "Mark", .text_id = 23, .start_ns = 10},
         {.id = 5, .pid = 1, .tid = 1, .end_tid = 1, .style = "PushPop", .text_id = 24, .start_ns = 600}});
  }
  TraceDb t;
};

TEST_F(NsysReportsTest, KernelSumColumnsAndStatistics) {
  const Report r = cuda_gpu_kern_sum(t.db());
  EXPECT_EQ(r.name, "cuda_gpu_kern_sum");
  EXPECT_EQ(headers(r), (std::vector<std::string>{"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)",
                                                  "Min (ns)", "Max (ns)", "StdDev (ns)", "Name"}));
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(cell<std::string>(r, 0, "Name"), "a(float*)");
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Time"), 75.0);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Total Time"), 90);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Instances"), 3);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Avg"), 30.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Med"), 20.0);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Min"), 10);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Max"), 60);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "StdDev"), std::sqrt(700.0));  // (400+100+900)/2
  EXPECT_EQ(cell<std::string>(r, 1, "Name"), "b(int)");
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "Time"), 25.0);
  // One instance: the spread is undefined → NULL, not 0.
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r.rows[1][col(r, "StdDev")]));
  EXPECT_TRUE(r.notes.empty());
}

TEST_F(NsysReportsTest, KernelSumBaseAndMangledNames) {
  EXPECT_EQ(cell<std::string>(cuda_gpu_kern_sum(t.db(), {.base = true}), 0, "Name"), "a_s");
  EXPECT_EQ(cell<std::string>(cuda_gpu_kern_sum(t.db(), {.mangled = true}), 0, "Name"), "_Z1a");
  // "b" has no short name: falls back to the demangled one.
  EXPECT_EQ(cell<std::string>(cuda_gpu_kern_sum(t.db(), {.base = true}), 1, "Name"), "b(int)");
}

TEST_F(NsysReportsTest, ApiSum) {
  const Report r = cuda_api_sum(t.db());
  EXPECT_EQ(headers(r), (std::vector<std::string>{"Time (%)", "Total Time (ns)", "Num Calls", "Avg (ns)", "Med (ns)",
                                                  "Min (ns)", "Max (ns)", "StdDev (ns)", "Name"}));
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(cell<std::string>(r, 0, "Name"), "cudaMalloc");
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Time"), 100.0 / 112.0 * 100.0);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Num Calls"), 2);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Total Time"), 12);
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "Med"), 6.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "StdDev"), std::sqrt(2.0));
}

TEST_F(NsysReportsTest, MemTimeSum) {
  const Report r = cuda_gpu_mem_time_sum(t.db());
  EXPECT_EQ(headers(r), (std::vector<std::string>{"Time (%)", "Total Time (ns)", "Count", "Avg (ns)", "Med (ns)",
                                                  "Min (ns)", "Max (ns)", "StdDev (ns)", "Operation"}));
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(cell<std::string>(r, 0, "Operation"), "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Total Time"), 400);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Time"), 400.0 / 490.0 * 100.0);
  EXPECT_EQ(cell<std::string>(r, 1, "Operation"), "[CUDA memcpy Device-to-Host]");
  EXPECT_EQ(cell<std::string>(r, 2, "Operation"), "[CUDA memset]");
  EXPECT_EQ(cell<std::int64_t>(r, 2, "Total Time"), 40);
}

TEST_F(NsysReportsTest, MemSizeSumInMegabytes) {
  const Report r = cuda_gpu_mem_size_sum(t.db());
  EXPECT_EQ(headers(r), (std::vector<std::string>{"Total (MB)", "Count", "Avg (MB)", "Med (MB)", "Min (MB)", "Max (MB)",
                                                  "StdDev (MB)", "Operation"}));
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(cell<std::string>(r, 0, "Operation"), "[CUDA memcpy Host-to-Device]");
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Total"), 3.0);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Count"), 2);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Avg"), 1.5);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Min"), 1.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Max"), 2.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "StdDev"), std::sqrt(0.5));
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "Total"), 0.5);
  EXPECT_EQ(cell<std::string>(r, 2, "Operation"), "[CUDA memset]");
  EXPECT_DOUBLE_EQ(cell<double>(r, 2, "Total"), 0.004096);
}

TEST_F(NsysReportsTest, NvtxSumClosedRangesWithDomainPrefix) {
  const Report r = nvtx_sum(t.db());
  EXPECT_EQ(headers(r), (std::vector<std::string>{"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)",
                                                  "Min (ns)", "Max (ns)", "StdDev (ns)", "Style", "Range"}));
  ASSERT_EQ(r.rows.size(), 2u);  // the mark and the unclosed range are left out
  EXPECT_EQ(cell<std::string>(r, 0, "Range"), "step");
  EXPECT_EQ(cell<std::string>(r, 0, "Style"), "PushPop");
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Instances"), 2);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Total Time"), 400);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Time"), 400.0 / 450.0 * 100.0);
  EXPECT_EQ(cell<std::string>(r, 1, "Range"), "io:load");
  EXPECT_EQ(cell<std::string>(r, 1, "Style"), "StartEnd");
}

// nvtx_sum lists the program's own ranges, never gpuscope's PyTorch operator ranges: also not an
// operator call the import merged into its parent of the same name (the only operator inside
// it, as torch.profiler counts them: aten::scaled_dot_product_attention redispatched under
// autocast), whose range stays in nvtx_events but not in torch_ops.
TEST(NsysReports, NvtxSumLeavesOutMergedOperatorRanges) {
  store::test::TempDir dir;
  const std::string log = dir.file("ops.gslog");
  {
    store::test::LogBuilder b(log, 7);
    b.process(0);
    b.push(1'000, 7, "train");
    b.push(2'000, 7, "aten::scaled_dot_product_attention, seq = 1, op_id = 1");
    b.push(3'000, 7, "aten::scaled_dot_product_attention, seq = 1, op_id = 2");  // merged into op_id 1
    b.pop(4'000, 7);
    b.pop(5'000, 7);
    b.pop(9'000, 7);
    b.end(10'000);
  }
  (void)store::import_logs({log}, dir.file("ops.sqlite"), store::ImportOptions{});
  store::Database db = store::open_trace(dir.file("ops.sqlite"));
  ASSERT_EQ(db.query_int("SELECT COUNT(*) FROM torch_ops"), 1);  // the merge this test is about
  const Report r = nvtx_sum(db);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(cell<std::string>(r, 0, "Range"), "train");
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Total Time"), 8'000);
}

TEST(NsysReports, EmptyDatabaseGivesNoRowsAndANote) {
  TraceDb t;
  for (std::string_view name : all_report_names()) {
    const std::vector<Report> reports = run_report(t.db(), name, {});
    ASSERT_FALSE(reports.empty()) << name;
    EXPECT_EQ(reports[0].name, name);
    for (const Report& r : reports) {
      EXPECT_FALSE(r.columns.empty()) << r.name;
      EXPECT_TRUE(r.rows.empty()) << r.name;
      ASSERT_EQ(r.notes.size(), 1u) << r.name;
      EXPECT_NE(r.notes[0].text.find("in the capture range"), std::string::npos) << r.notes[0].text;
      EXPECT_EQ(r.notes[0].text.rfind("no ", 0), 0u) << r.notes[0].text;
    }
  }
  // The reports added for the diagnoses say it the one way the issue asks for.
  for (std::string_view name : {"top", "memcpy_check", "nvtx_gpu_proj_sum"})
    for (const Report& r : run_report(t.db(), name, {}))
      EXPECT_EQ(r.notes[0].text, "no GPU activity in the capture range") << r.name;
}

TEST(NsysReports, RegistryNamesAndUnknownName) {
  EXPECT_EQ(report_names(), (std::vector<std::string_view>{"top"}));
  const std::vector<std::string_view> names{"top",
                                            "cuda_api_sum",
                                            "cuda_gpu_kern_sum",
                                            "cuda_gpu_mem_time_sum",
                                            "cuda_gpu_mem_size_sum",
                                            "nvtx_sum",
                                            "nvtx_gpu_proj_sum",
                                            "gpu_util",
                                            "launch_overhead",
                                            "sync_wait",
                                            "memcpy_check",
                                            "cuda_memory",
                                            "gpu_metrics_sum",
                                            "cuda_gpu_sum",
                                            "cuda_gpu_trace",
                                            "cuda_api_trace",
                                            "op_sum",
                                            "module_sum",
                                            "step_sum",
                                            "py_sum",
                                            "gpu_idle_py",
                                            "llm_sum",
                                            "llm_step_sum",
                                            "nccl_sum",
                                            "comm_overlap",
                                            "rank_sum",
                                            "stragglers",
                                            "collective_trace"};
  EXPECT_EQ(all_report_names(), names);
  TraceDb t;
  const std::vector<Report> top_reports = run_report(t.db(), "top", {});
  ASSERT_EQ(top_reports.size(), 2u);
  EXPECT_EQ(top_reports[1].name, "top_kernels");
  for (std::string_view n : all_report_names()) {
    if (n == "top") continue;
    EXPECT_EQ(run_report(t.db(), n, {}).size(), 1u) << n;
  }
  try {
    (void)run_report(t.db(), "cuda_gpu_kern_summ", {});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cuda_gpu_kern_summ"), std::string::npos) << msg;
    for (std::string_view n : all_report_names()) EXPECT_NE(msg.find(n), std::string::npos) << msg;
  }
}

bool is_null(const Report& r, std::size_t row, const std::string& column) {
  return std::holds_alternative<std::monostate>(r.rows.at(row).at(col(r, column)));
}

TEST_F(NsysReportsTest, GpuSumMixesKernelsAndMemoryOperations) {
  const Report r = cuda_gpu_sum(t.db());
  EXPECT_EQ(r.name, "cuda_gpu_sum");
  EXPECT_EQ(headers(r), (std::vector<std::string>{"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)",
                                                  "Min (ns)", "Max (ns)", "StdDev (ns)", "Category", "Operation"}));
  // Totals: HtoD 400, a 90, DtoH 50, memset 40, b 30 → 610 ns in all.
  ASSERT_EQ(r.rows.size(), 5u);
  const std::vector<std::pair<std::string, std::string>> keys = {{"MEMORY_OPER", "[CUDA memcpy Host-to-Device]"},
                                                                 {"CUDA_KERNEL", "a(float*)"},
                                                                 {"MEMORY_OPER", "[CUDA memcpy Device-to-Host]"},
                                                                 {"MEMORY_OPER", "[CUDA memset]"},
                                                                 {"CUDA_KERNEL", "b(int)"}};
  const std::vector<std::int64_t> totals = {400, 90, 50, 40, 30};
  const std::vector<std::int64_t> counts = {2, 3, 1, 1, 1};
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(cell<std::string>(r, i, "Category"), keys[i].first) << i;
    EXPECT_EQ(cell<std::string>(r, i, "Operation"), keys[i].second) << i;
    EXPECT_EQ(cell<std::int64_t>(r, i, "Total Time"), totals[i]) << i;
    EXPECT_EQ(cell<std::int64_t>(r, i, "Instances"), counts[i]) << i;
    EXPECT_DOUBLE_EQ(cell<double>(r, i, "Time"), static_cast<double>(totals[i]) / 610.0 * 100.0) << i;
  }
  EXPECT_DOUBLE_EQ(cell<double>(r, 1, "Med"), 20.0);
  EXPECT_EQ(cell<std::string>(cuda_gpu_sum(t.db(), {.base = true}), 1, "Operation"), "a_s");
}

TEST_F(NsysReportsTest, GpuTraceOneRowPerEventSortedByStart) {
  const Report r = cuda_gpu_trace(t.db());
  EXPECT_EQ(r.name, "cuda_gpu_trace");
  EXPECT_EQ(headers(r), (std::vector<std::string>{"Start (ns)",
                                                  "Duration (ns)",
                                                  "CorrId",
                                                  "GrdX",
                                                  "GrdY",
                                                  "GrdZ",
                                                  "BlkX",
                                                  "BlkY",
                                                  "BlkZ",
                                                  "Reg/Trd",
                                                  "StcSMem (bytes)",
                                                  "DymSMem (bytes)",
                                                  "Bytes (bytes)",
                                                  "Throughput (GB/s)",
                                                  "SrcMemKd",
                                                  "DstMemKd",
                                                  "Device",
                                                  "Ctx",
                                                  "Strm",
                                                  "Name"}));
  ASSERT_EQ(r.rows.size(), 8u);
  const std::vector<std::int64_t> starts = {0, 100, 200, 300, 1000, 2000, 3000, 4000};
  for (std::size_t i = 0; i < starts.size(); ++i) EXPECT_EQ(cell<std::int64_t>(r, i, "Start"), starts[i]) << i;
  // A kernel: launch facts, no memory cells.
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Duration"), 20);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "CorrId"), 2);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "GrdX"), 264);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "GrdY"), 1);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "BlkX"), 256);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Reg/Trd"), 32);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "StcSMem"), 1024);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "DymSMem"), 2048);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Strm"), 7);
  EXPECT_EQ(cell<std::string>(r, 1, "Name"), "a(float*)");
  EXPECT_EQ(cell<std::string>(r, 3, "Name"), "b(int)");
  for (const char* c : {"Bytes", "Throughput", "SrcMemKd", "DstMemKd"}) EXPECT_TRUE(is_null(r, 1, c)) << c;
  // A memcpy: 2e6 bytes in 100 ns = 20000 bytes/ns = 20000 GB/s; no launch facts.
  EXPECT_EQ(cell<std::int64_t>(r, 4, "Bytes"), 2000000);
  EXPECT_DOUBLE_EQ(cell<double>(r, 4, "Throughput"), 2000000.0 / 100.0);
  EXPECT_EQ(cell<std::string>(r, 4, "SrcMemKd"), "pageable");
  EXPECT_EQ(cell<std::string>(r, 4, "DstMemKd"), "device");
  EXPECT_EQ(cell<std::string>(r, 4, "Name"), "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(cell<std::string>(r, 6, "Name"), "[CUDA memcpy Device-to-Host]");
  for (const char* c : {"GrdX", "GrdY", "GrdZ", "BlkX", "BlkY", "BlkZ", "Reg/Trd", "StcSMem", "DymSMem"})
    EXPECT_TRUE(is_null(r, 4, c)) << c;
  // A memset: its memory kind in SrcMemKd (as nsys), DstMemKd NULL.
  EXPECT_EQ(cell<std::string>(r, 7, "Name"), "[CUDA memset]");
  EXPECT_EQ(cell<std::int64_t>(r, 7, "Bytes"), 4096);
  EXPECT_DOUBLE_EQ(cell<double>(r, 7, "Throughput"), 4096.0 / 40.0);
  EXPECT_EQ(cell<std::string>(r, 7, "SrcMemKd"), "device");
  EXPECT_TRUE(is_null(r, 7, "DstMemKd"));
  EXPECT_EQ(cell<std::int64_t>(r, 7, "CorrId"), 5);
  EXPECT_TRUE(r.notes.empty());
}

TEST_F(NsysReportsTest, ApiTraceOneRowPerCallSortedByStart) {
  t.add(rows::ApiCall{.pid = 2,
                      .tid = 9,
                      .domain = "runtime",
                      .cbid = 20,
                      .name_id = 11,
                      .start_ns = 15,
                      .end_ns = 16,
                      .correlation_id = 8,
                      .return_value = 2});
  const Report r = cuda_api_trace(t.db());
  EXPECT_EQ(r.name, "cuda_api_trace");
  EXPECT_EQ(headers(r),
            (std::vector<std::string>{"Start (ns)", "Duration (ns)", "Name", "Result", "CorrID", "Pid", "Tid"}));
  ASSERT_EQ(r.rows.size(), 4u);
  const std::vector<std::int64_t> starts = {0, 10, 15, 20};
  for (std::size_t i = 0; i < starts.size(); ++i) EXPECT_EQ(cell<std::int64_t>(r, i, "Start"), starts[i]) << i;
  EXPECT_EQ(cell<std::string>(r, 0, "Name"), "cudaLaunchKernel");
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Duration"), 5);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "CorrID"), 2);
  EXPECT_EQ(cell<std::string>(r, 2, "Name"), "cudaMalloc");
  EXPECT_EQ(cell<std::int64_t>(r, 2, "Result"), 2);
  EXPECT_EQ(cell<std::int64_t>(r, 2, "Pid"), 2);
  EXPECT_EQ(cell<std::int64_t>(r, 2, "Tid"), 9);
  EXPECT_EQ(cell<std::int64_t>(r, 3, "Duration"), 100);
  EXPECT_EQ(cell<std::int64_t>(r, 3, "Result"), 0);
}

TEST(NsysReports, OnRequestReportsRegisteredButNotDefault) {
  const auto all = all_report_names();
  const auto def = report_names();
  TraceDb t;
  for (std::string_view n : {"cuda_gpu_sum", "cuda_gpu_trace", "cuda_api_trace"}) {
    EXPECT_NE(std::find(all.begin(), all.end(), n), all.end()) << n;
    EXPECT_EQ(std::find(def.begin(), def.end(), n), def.end()) << n;
    const Report r = run_report(t.db(), n, {}).at(0);
    EXPECT_EQ(r.name, n);
    EXPECT_TRUE(r.rows.empty()) << n;
    ASSERT_EQ(r.notes.size(), 1u) << n;
    EXPECT_NE(r.notes[0].text.find("in the capture range"), std::string::npos) << r.notes[0].text;
  }
}

// The committed real trace (tests/data/cnn.logs, imported): 306 kernels of 36 names,
// 331 API calls, NVTX ranges "step 5" .. "step 10".
class CommittedTraceTest : public ::testing::Test {
 protected:
  store::Database db = store::open_trace(gpuscope::test::committed_trace("cnn"));
};

std::int64_t column_sum(const Report& r, const std::string& column) {
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < r.rows.size(); ++i) sum += cell<std::int64_t>(r, i, column);
  return sum;
}

TEST_F(CommittedTraceTest, KernelSum) {
  const Report r = cuda_gpu_kern_sum(db);
  EXPECT_EQ(r.rows.size(), 36u);
  EXPECT_EQ(column_sum(r, "Instances"), 306);
  double percent = 0;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    percent += cell<double>(r, i, "Time");
    if (i > 0) {
      EXPECT_GE(cell<std::int64_t>(r, i - 1, "Total Time"), cell<std::int64_t>(r, i, "Total Time"));
    }
  }
  EXPECT_NEAR(percent, 100.0, 1e-9);
}

TEST_F(CommittedTraceTest, ApiSumCountsEveryCall) {
  EXPECT_EQ(column_sum(cuda_api_sum(db), "Num Calls"), db.query_int("SELECT COUNT(*) FROM api_calls").value_or(-1));
  EXPECT_EQ(column_sum(cuda_api_sum(db), "Num Calls"), 331);
}

TEST_F(CommittedTraceTest, NvtxSumOneRowPerStep) {
  const Report r = nvtx_sum(db);
  ASSERT_EQ(r.rows.size(), 6u);
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    EXPECT_EQ(cell<std::string>(r, i, "Range").rfind("step ", 0), 0u);
    EXPECT_EQ(cell<std::int64_t>(r, i, "Instances"), 1);
  }
}

TEST_F(CommittedTraceTest, GpuSumCountsEveryGpuEvent) {
  const Report r = cuda_gpu_sum(db);
  EXPECT_EQ(column_sum(r, "Instances"), 306 + 6 + 12);
}

TEST_F(CommittedTraceTest, GpuTraceOneRowPerGpuEventSorted) {
  const Report r = cuda_gpu_trace(db);
  ASSERT_EQ(r.rows.size(), 306u + 6u + 12u);
  for (std::size_t i = 1; i < r.rows.size(); ++i)
    EXPECT_LE(cell<std::int64_t>(r, i - 1, "Start"), cell<std::int64_t>(r, i, "Start")) << i;
}

TEST_F(CommittedTraceTest, ApiTraceOneRowPerCallSorted) {
  const Report r = cuda_api_trace(db);
  ASSERT_EQ(r.rows.size(), 331u);
  for (std::size_t i = 1; i < r.rows.size(); ++i)
    EXPECT_LE(cell<std::int64_t>(r, i - 1, "Start"), cell<std::int64_t>(r, i, "Start")) << i;
}

}  // namespace
}  // namespace gpuscope::analyze
