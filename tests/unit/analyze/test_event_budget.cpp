// analyze/event_budget: reports that hold one entry per event count first and refuse with
// advice above the memory budget (GPUSCOPE_MEMORY_BUDGET); --top's rows are read alone.
#include "analyze/common/event_budget.hpp"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "analyze/nsys/launch_reports.hpp"
#include "analyze/nsys/nsys_reports.hpp"
#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using test::TraceDb;

// Sets GPUSCOPE_MEMORY_BUDGET for one test.
class Budget {
 public:
  explicit Budget(const char* value) { ::setenv("GPUSCOPE_MEMORY_BUDGET", value, 1); }
  ~Budget() { ::unsetenv("GPUSCOPE_MEMORY_BUDGET"); }
};

void ten_launches(TraceDb& t) {
  t.h100();
  t.strings({{1, "cudaLaunchKernel"}, {2, "k"}});
  for (int i = 0; i < 10; ++i) {
    t.api(100, 100, 1, 1000 * i, 1000 * i + 100, i + 1);
    t.kernel(100, 0, 7, i + 1, 1000 * i + 200, 1000 * i + 700, 2);
  }
}

TEST(EventBudget, DefaultIsOneGigabyteAndTheVariableIsParsedAsASize) {
  ::unsetenv("GPUSCOPE_MEMORY_BUDGET");
  EXPECT_EQ(memory_budget_bytes(), 1'000'000'000);
  {
    const Budget b("4GiB");
    EXPECT_EQ(memory_budget_bytes(), std::int64_t{4} << 30);
  }
  {
    const Budget b("lots");
    try {
      (void)memory_budget_bytes();
      FAIL() << "no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("GPUSCOPE_MEMORY_BUDGET"), std::string::npos) << e.what();
    }
  }
}

TEST(EventBudget, TraceReportAboveTheBudgetRefusesBeforeReadingWithAdvice) {
  TraceDb t;
  ten_launches(t);
  const Budget b("10000");  // 10 rows need 30 kB (cuda_gpu_trace), 12 kB (cuda_api_trace)
  try {
    (void)cuda_gpu_trace(t.db());
    FAIL() << "no error";
  } catch (const TraceTooLargeError& e) {
    const std::string m = e.what();
    for (const char* part : {"cuda_gpu_trace", "10 kernels, memcpys and memsets", "--top N", "gpuscope export",
                             "--from/--to", "GPUSCOPE_MEMORY_BUDGET=1GiB", "No rows were loaded"})
      EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
  }
  EXPECT_THROW((void)cuda_api_trace(t.db()), TraceTooLargeError);  // 10 rows × 1.2 kB
}

TEST(EventBudget, FirstRowsAreReadAloneAndSaidSo) {
  TraceDb t;
  ten_launches(t);
  const Budget b("10000");  // 3 rows: 9 kB
  ReportOptions o;
  o.first_rows = 3;
  const Report r = cuda_gpu_trace(t.db(), o);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(std::get<std::int64_t>(r.rows[0][0]), 200);  // the first kernels in time order
  EXPECT_EQ(std::get<std::int64_t>(r.rows[2][0]), 2200);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_EQ(r.notes.back().text, "the first 3 of 10 kernels, memcpys and memsets in time order (--top)");
  EXPECT_EQ(cuda_api_trace(t.db(), o).rows.size(), 3u);
}

TEST(EventBudget, UnderTheBudgetNothingChanges) {
  TraceDb t;
  ten_launches(t);
  const Report r = cuda_gpu_trace(t.db());
  EXPECT_EQ(r.rows.size(), 10u);
  for (const Note& n : r.notes) EXPECT_EQ(n.text.find("--top"), std::string::npos) << n.text;
}

TEST(EventBudget, LaunchAnalysisRefusesAboveTheBudget) {
  TraceDb t;
  ten_launches(t);
  const Budget b("1000");  // 10 kernels × 200 B
  try {
    (void)launch_overhead(t.db());
    FAIL() << "no error";
  } catch (const TraceTooLargeError& e) {
    EXPECT_NE(std::string(e.what()).find("launch_overhead (also top): the trace holds 10 kernels"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gpuscope::analyze
