// The reports on the committed real trace recorded with --gpu-metrics=2k and --cuda-memory-usage
// (tests/data/metrics.logs: examples/cuda/kernel_mix --only copy_f4,fma_loop,gemm_bf16 --repeat 3
// on an H100; the launcher's sampler log and the process's log, imported at test time).
// What must hold whatever the GPU: each kernel's counters tell what the kernel is (the copy moves
// the most DRAM bytes, the GEMM is the one on tensor cores, the FMA loop is the one on the FMA
// pipe), the copy's DRAM bytes per execution are the 2 x 2^28 x 4 bytes it reads and writes
// (within the 10 %), every sample is on the trace clock and of the interval asked for.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "analyze/report_registry.hpp"
#include "store/trace.hpp"
#include "trace_db.hpp"
#include "../committed_traces.hpp"

namespace gpuscope::analyze {
namespace {

using test::cell;

class CommittedMetricsTest : public ::testing::Test {
 protected:
  store::Database db = store::open_trace(gpuscope::test::committed_trace("metrics"));

  std::int64_t scalar(const std::string& sql) { return db.query_int(sql).value_or(-1); }
};

std::size_t row_of(const Report& r, const std::string& fragment) {
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    if (cell<std::string>(r, i, "Name").find(fragment) != std::string::npos) return i;
  }
  ADD_FAILURE() << "no row named like " << fragment << " in " << r.name;
  return 0;
}

TEST_F(CommittedMetricsTest, SamplesAreWholeAndOnTheTraceClock) {
  EXPECT_EQ(scalar("SELECT interval_ns FROM gpu_metrics_sessions"), 500'000);  // --gpu-metrics=2k
  EXPECT_GT(scalar("SELECT samples FROM gpu_metrics_sessions"), 1000);
  // No sample longer than 4 intervals (the first one after the start is dropped as an outlier).
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM gpu_metrics WHERE end_ns - start_ns > 2000000"), 0);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM data_loss WHERE what = 'gpu_metrics_overflow'"), 0);
  // Every kernel lies inside the sampled span: samples and kernels share the trace clock.
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM kernels k, gpu_metrics_sessions s WHERE k.start_ns < s.first_ns OR "
                   "k.end_ns > s.last_ns"),
            0);
  EXPECT_GT(scalar("SELECT COUNT(*) FROM memory_events WHERE operation = 'alloc'"), 0);
}

TEST_F(CommittedMetricsTest, EachKernelsCountersSayWhatItIs) {
  const Report r = run_report(db, "gpu_metrics_sum").at(0);
  ASSERT_EQ(r.rows.size(), 4u);  // copy_f4, evict_l2, the cuBLAS GEMM, fma_loop
  const std::size_t copy = row_of(r, "copy_f4"), fma = row_of(r, "fma_loop"), gemm = row_of(r, "nvjet");
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    EXPECT_GT(cell<double>(r, i, "Sampled"), 99.0) << i;  // 2 kHz covers every kernel of 40 us and more
    if (i != gemm) {
      EXPECT_GT(cell<double>(r, gemm, "Tensor Active"), 100 * cell<double>(r, i, "Tensor Active"));
    }
    if (i != fma) {
      EXPECT_GT(cell<double>(r, fma, "FMA Pipe"), 5 * cell<double>(r, i, "FMA Pipe"));
    }
    if (i != copy) {
      EXPECT_GT(cell<std::int64_t>(r, copy, "DRAM Bytes"), cell<std::int64_t>(r, i, "DRAM Bytes"));
    }
  }
  const double copy_bytes = 2.0 * (1 << 28) * 4;  // kernel_mix's --copy-n default, float4 loads and stores
  EXPECT_NEAR(static_cast<double>(cell<std::int64_t>(r, copy, "DRAM Bytes")) / copy_bytes, 1.0, 0.10);
  EXPECT_NEAR(cell<double>(r, copy, "DRAM"), cell<double>(r, copy, "DRAM Read") + cell<double>(r, copy, "DRAM Write"),
              1e-6);
}

TEST_F(CommittedMetricsTest, CudaMemoryOfACudaProgramSaysNothingOfPyTorch) {
  const Report r = run_report(db, "cuda_memory").at(0);
  ASSERT_FALSE(r.rows.empty());
  EXPECT_FALSE(test::has_note(r, "PyTorch's caching allocator"));  // kernel_mix's cudaMalloc calls are its own
}

TEST_F(CommittedMetricsTest, TopShowsTheSampledColumns) {
  const Report top = run_report(db, "top").at(0);
  const double sm = cell<double>(top, 0, "SM Active"), tensor = cell<double>(top, 0, "Tensor Active");
  EXPECT_GT(sm, 0.0);
  EXPECT_LE(sm, 100.0);
  EXPECT_GT(tensor, 0.0);
  EXPECT_LT(tensor, sm);
}

}  // namespace
}  // namespace gpuscope::analyze
