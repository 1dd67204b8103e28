// Every report of `gpuscope stats` on the committed real trace (tests/data/cnn.logs, imported: the
// examples' CNN, steps 5-10 on an H100; 306 kernels of 36 names, 6 memcpys, 12 memsets).
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "analyze/nsys/gpu_util_report.hpp"
#include "analyze/nsys/launch_reports.hpp"
#include "analyze/nsys/memcpy_check.hpp"
#include "analyze/nsys/nsys_reports.hpp"
#include "analyze/nsys/nvtx_gpu_proj.hpp"
#include "analyze/nsys/top_report.hpp"
#include "analyze/report_registry.hpp"
#include "store/trace.hpp"
#include "trace_db.hpp"
#include "../committed_traces.hpp"

namespace gpuscope::analyze {
namespace {

using test::cell;
using test::col;
using test::has_note;

class CommittedReportsTest : public ::testing::Test {
 protected:
  store::Database db = store::open_trace(gpuscope::test::committed_trace("cnn"));
};

std::int64_t column_sum(const Report& r, const std::string& column) {
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < r.rows.size(); ++i) sum += cell<std::int64_t>(r, i, column);
  return sum;
}

// Every report runs; cells match their column types; no NaN or infinity; every
// "Time (%)" column of a complete table sums to 100 ± 0.01.
TEST_F(CommittedReportsTest, EveryReportIsWellFormedAndPercentagesSumTo100) {
  for (std::string_view name : all_report_names()) {
    for (const Report& r : run_report(db, name)) {
      // The PyTorch reports need a trace recorded with --pytorch (test_pytorch_reports),
      // cuda_memory one recorded with --cuda-memory-usage (test_cuda_memory_report),
      // gpu_metrics_sum one recorded with --gpu-metrics (test_gpu_metrics_report), the NCCL
      // reports one with NCCL kernels (test_nccl_reports; rank_sum has this one process).
      // step_sum lists this trace's NVTX "step N" ranges. The Python sample reports need a trace
      // recorded with --python-sampling (test_py_sample_reports).
      const bool pytorch = name == "op_sum" || name == "module_sum" || name == "llm_sum" || name == "llm_step_sum" ||
                           name == "py_sum" || name == "gpu_idle_py";
      const bool nccl =
          name == "nccl_sum" || name == "comm_overlap" || name == "stragglers" || name == "collective_trace";
      EXPECT_EQ(r.rows.empty(), pytorch || nccl || name == "cuda_memory" || name == "gpu_metrics_sum") << r.name;
      for (const Row& row : r.rows) {
        ASSERT_EQ(row.size(), r.columns.size()) << r.name;
        for (std::size_t c = 0; c < row.size(); ++c) {
          if (std::holds_alternative<std::monostate>(row[c])) continue;
          switch (r.columns[c].type) {
            case ColumnType::kInteger:
              EXPECT_TRUE(std::holds_alternative<std::int64_t>(row[c])) << r.name;
              break;
            case ColumnType::kReal:
              ASSERT_TRUE(std::holds_alternative<double>(row[c])) << r.name << " " << r.columns[c].name;
              EXPECT_TRUE(std::isfinite(std::get<double>(row[c]))) << r.name << " " << r.columns[c].name;
              break;
            case ColumnType::kText:
              EXPECT_TRUE(std::holds_alternative<std::string>(row[c])) << r.name;
              break;
          }
        }
      }
      if (r.name == "top_kernels") continue;  // the first 10 rows of cuda_gpu_kern_sum: checked below
      for (std::size_t c = 0; c < r.columns.size(); ++c) {
        if (r.columns[c].name != "Time" || r.columns[c].unit != "%") continue;
        double sum = 0;
        for (const Row& row : r.rows) sum += std::get<double>(row[c]);
        EXPECT_NEAR(sum, 100.0, 0.01) << r.name;
      }
    }
  }
}

TEST_F(CommittedReportsTest, TopKernelsAreTheFirstRowsOfKernSum) {
  const Report all = cuda_gpu_kern_sum(db);
  const std::vector<Report> t = top(db);
  ASSERT_EQ(t.size(), 2u);
  const Report& k = t[1];
  ASSERT_EQ(k.rows.size(), 10u);
  double percent = 0;
  for (std::size_t i = 0; i < k.rows.size(); ++i) {
    for (const char* c : {"Total Time", "Instances"})
      EXPECT_EQ(cell<std::int64_t>(k, i, c), cell<std::int64_t>(all, i, c)) << i << " " << c;
    EXPECT_EQ(cell<double>(k, i, "Time"), cell<double>(all, i, "Time")) << i;
    EXPECT_EQ(cell<double>(k, i, "Avg"), cell<double>(all, i, "Avg")) << i;
    EXPECT_EQ(cell<std::string>(k, i, "Name"), cell<std::string>(all, i, "Name")) << i;
    percent += cell<double>(k, i, "Time");
  }
  EXPECT_LT(percent, 100.0);
  EXPECT_TRUE(has_note(k, "showing the top 10 of 36 kernel names; the other 26 take"));
}

// The five numbers are the detailed reports' numbers.
TEST_F(CommittedReportsTest, TopNumbersMatchTheDetailedReports) {
  const Report r = top(db).at(0);
  ASSERT_EQ(r.rows.size(), 1u);
  const Report util = gpu_util(db);
  ASSERT_EQ(util.rows.size(), 1u);  // one H100
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Wall Time"), cell<double>(util, 0, "Wall Time"));
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "GPU Busy"), cell<double>(util, 0, "Busy"));
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "SM Coverage"), cell<double>(util, 0, "SM Coverage"));
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Launch-Bound"), detail::launch_bound(db).launching_share_untraced * 100.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Sync-Blocked"), detail::sync_blocked(db).share * 100.0);
  EXPECT_NEAR(cell<double>(r, 0, "Wall Time"), 24.303609, 1e-9);  // trace_overview's, cnn.summary.csv
  EXPECT_NEAR(cell<double>(r, 0, "GPU Busy"), 8.7203509569298934, 1e-9);
  // An eager-mode PyTorch step on a small CNN: idle GPU, CPU outside launch calls.
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning, "CPU-starved"));
  EXPECT_FALSE(has_note(r, "launch-bound:"));
  EXPECT_FALSE(has_note(r, "sync-blocked:"));
}

// Independent check of nvtx_gpu_proj_sum's op attribution, in SQL.
TEST_F(CommittedReportsTest, NvtxGpuProjCountsOpsLaunchedInsideEachStep) {
  const Report r = nvtx_gpu_proj_sum(db);
  ASSERT_EQ(r.rows.size(), 6u);
  const Report nvtx = nvtx_sum(db);
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const std::string range = cell<std::string>(r, i, "Range");
    store::Statement st = db.prepare(
        "SELECT COUNT(*), SUM(o.k * (o.e - o.s)), MAX(n.end_ns - n.start_ns) FROM v_nvtx n "
        "JOIN api_calls a ON a.pid = n.pid AND a.tid = n.tid AND a.start_ns >= n.start_ns "
        "AND a.start_ns < n.end_ns JOIN (SELECT pid, correlation_id AS c, start_ns AS s, end_ns AS e, 1 AS k "
        "FROM kernels UNION ALL SELECT pid, correlation_id, start_ns, end_ns, 0 FROM memcpys UNION ALL "
        "SELECT pid, correlation_id, start_ns, end_ns, 0 FROM memsets) o ON o.pid = a.pid AND o.c = a.correlation_id "
        "WHERE n.text = ?1");
    st.bind(1, range);
    ASSERT_TRUE(st.step());
    EXPECT_EQ(cell<std::int64_t>(r, i, "Total GPU Ops"), st.column_int(0)) << range;
    EXPECT_EQ(cell<std::int64_t>(r, i, "Total Kernel Time"), st.column_int(1)) << range;
    EXPECT_EQ(cell<std::int64_t>(r, i, "Total Range Time"), st.column_int(2)) << range;
    EXPECT_EQ(cell<std::int64_t>(r, i, "Range Instances"), 1);
    EXPECT_LE(cell<std::int64_t>(r, i, "Total Proj Time"), cell<std::int64_t>(r, i, "Total Range Time"));
    EXPECT_GE(cell<std::int64_t>(r, i, "Total Proj Time"), cell<std::int64_t>(r, i, "Total Kernel Time"));
    EXPECT_GT(cell<std::int64_t>(r, i, "Total GPU Ops"), 0);
  }
  // The backward pass runs on PyTorch's autograd thread, outside the steps' thread.
  EXPECT_TRUE(has_note(r, "GPU operations were launched from threads without NVTX ranges"));
}

TEST_F(CommittedReportsTest, MemcpyCheckCountsEveryCopy) {
  const Report r = memcpy_check(db);
  EXPECT_EQ(column_sum(r, "Count"), 6);
  EXPECT_EQ(column_sum(r, "Total"), 24);  // six 4-byte loss.item() copies
  EXPECT_EQ(column_sum(r, "Small"), 6);
  EXPECT_EQ(column_sum(r, "Sync"), 0);
  EXPECT_FALSE(has_note(r, "pageable host memory"));
  for (const Note& n : r.notes) EXPECT_NE(n.level, NoteLevel::kWarning) << n.text;
}

}  // namespace
}  // namespace gpuscope::analyze
