// Text diff tests of every report: a small trace built in the test (the event-log builder
// writes what the collector would, the importer turns it into a trace), every report of
// the registry rendered as csv and as a table, compared with
// tests/expected/reports/NAME.{csv,txt}. GPUSCOPE_REWRITE_EXPECTED=1 rewrites the files
// after a deliberate change (review `git diff tests/expected`). A few figures are also
// checked against hand arithmetic, so a rewrite cannot bless a wrong number unnoticed.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "../expect_file.hpp"
#include "../store/log_builder.hpp"
#include "analyze/report_registry.hpp"
#include "analyze/nsys/trace_summary.hpp"
#include "render/report_render.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"

namespace gpuscope::analyze {
namespace {

using store::test::LogBuilder;
using store::test::TempDir;

constexpr std::uint32_t kPid = 100;
constexpr std::uint64_t kT0 = 1'000'000;

// pid 100 on one GPU; NVTX "step 1" [1.0 ms, 1.2 ms) and "step 2" [1.2 ms, 1.4 ms) on the
// main thread. Step 1: 3 gemm (20 µs each) and 2 relu (4 µs each) launched from thread 100,
// a pageable 1 MiB HtoD copy of 30 µs inside a 50 µs cudaMemcpy, a 4 KiB memset, and a 40 µs
// cudaDeviceSynchronize. Step 2: 2 gemm launched from thread 101 (an autograd-like thread).
std::string build_trace(const TempDir& dir) {
  const std::string log = dir.file("a.gslog");
  {
    LogBuilder b(log, kPid);
    b.process(kT0 - 100'000);
    b.device(0, "NVIDIA H100 80GB HBM3");
    b.thread_name(101, "autograd");
    b.push(kT0, 100, "step 1");
    std::uint32_t corr = 0;
    std::uint64_t t = kT0 + 1'000;
    for (int i = 0; i < 3; ++i, t += 30'000) {
      b.api(t, t + 5'000, 100, ++corr, "cudaLaunchKernel");
      b.kernel(t + 8'000, t + 28'000, corr, "gemm");
    }
    for (int i = 0; i < 2; ++i, t += 10'000) {
      b.api(t, t + 3'000, 100, ++corr, "cudaLaunchKernel");
      b.kernel(t + 4'000, t + 8'000, corr, "relu");
    }
    b.api(kT0 + 110'000, kT0 + 160'000, 100, ++corr, "cudaMemcpy");
    b.memcpy(kT0 + 120'000, kT0 + 150'000, corr, 1 << 20, log::MemcpyKind::kHtoD, log::MemoryKind::kPageable,
             log::MemoryKind::kDevice);
    b.api(kT0 + 160'000, kT0 + 161'000, 100, ++corr, "cudaMemsetAsync");
    b.memset(kT0 + 162'000, kT0 + 163'000, corr, 4096);
    b.api(kT0 + 150'000, kT0 + 190'000, 100, ++corr, "cudaDeviceSynchronize");
    b.sync(kT0 + 150'000, kT0 + 190'000, corr, log::SyncType::kContextSynchronize, 0, 0);
    b.pop(kT0 + 200'000, 100);
    b.push(kT0 + 200'000, 100, "step 2");
    t = kT0 + 210'000;
    for (int i = 0; i < 2; ++i, t += 50'000) {
      b.api(t, t + 6'000, 101, ++corr, "cudaLaunchKernel");
      b.kernel(t + 10'000, t + 30'000, corr, "gemm");
    }
    b.pop(kT0 + 400'000, 100);
    b.end(kT0 + 500'000);
    b.flush();
  }
  const std::string db = dir.file("t.sqlite");
  store::ImportOptions opts;
  opts.command = "python3 train.py";
  opts.launched_pid = kPid;
  opts.exit_status = 0;
  opts.start_time = "2026-11-25T08:00:00+0000";
  opts.gpuscope_version = "0.1.0";
  (void)store::import_logs({log}, db, opts);
  return db;
}

std::string rendered(const std::vector<Report>& reports, render::Format format) {
  std::ostringstream out;
  render::render(reports, format, out);
  return out.str();
}

class ReportDiffs : public ::testing::Test {
 protected:
  TempDir m_dir;
  store::Database m_db = store::open_trace(build_trace(m_dir));
};

TEST_F(ReportDiffs, EveryReportMatchesItsExpectedCsvAndTable) {
  int n = 0;
  for (const ReportEntry& e : report_registry()) {
    const std::vector<Report> r = e.run(m_db, ReportOptions{});
    const std::string name(e.name);
    test::expect_matches_file(rendered(r, render::Format::kCsv), "reports/" + name + ".csv");
    test::expect_matches_file(rendered(r, render::Format::kTable), "reports/" + name + ".txt");
    ++n;
  }
  EXPECT_EQ(n, static_cast<int>(all_report_names().size()));
}

// Hand arithmetic on the trace above, independent of the expected files.
TEST_F(ReportDiffs, KernelSumIsTheHandComputedOne) {
  const std::string csv = rendered(run_report(m_db, "cuda_gpu_kern_sum"), render::Format::kCsv);
  // gemm: 5 x 20 µs = 100 µs of 108 µs (92.6 %); relu: 2 x 4 µs = 8 µs.
  EXPECT_NE(csv.find(",100000,5,20000,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",8000,2,4000,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("92.59"), std::string::npos) << csv;
}

TEST_F(ReportDiffs, MemSizeSumIsTheHandComputedOne) {
  const std::string csv = rendered(run_report(m_db, "cuda_gpu_mem_size_sum"), render::Format::kCsv);
  // 1 MiB HtoD = 1.048576 MB; 4 KiB memset = 0.004096 MB.
  EXPECT_NE(csv.find("1.048576"), std::string::npos) << csv;
  EXPECT_NE(csv.find("0.004096"), std::string::npos) << csv;
}

// A log cut before its first flush (header only): the summary reports no wall time and
// says why, instead of a 0.000 ms nobody measured.
TEST(NoInventedNumbers, HeaderOnlyLogHasNoWallTime) {
  TempDir dir;
  const std::string log = dir.file("h.gslog");
  {
    LogBuilder b(log, kPid);
    b.close();
  }
  const std::string path = dir.file("h.sqlite");
  (void)store::import_logs({log}, path, store::ImportOptions{});
  store::Database db = store::open_trace(path);
  const std::vector<Report> r = trace_summary(db, 10);
  ASSERT_FALSE(r.empty());
  ASSERT_EQ(r[0].rows.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r[0].rows[0][0]));  // Wall Time
  EXPECT_TRUE(std::holds_alternative<std::monostate>(r[0].rows[0][1]));  // GPU Busy Time
  bool said = false;
  for (const Note& n : r[0].notes) said = said || n.text.find("no events were recorded") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace gpuscope::analyze
