// The PyTorch reports (analyze/pytorch/pytorch_reports.hpp): on the hand-built log of
// tests/unit/store/pytorch_log.hpp, where every number is computed by hand; on the committed
// CNN recording made with `gpuscope trace --pytorch=ops,modules` on an H100
// (tests/data/cnn-pytorch.logs, 6 steps), checked against SQL over the trace; and the
// steady-state classification on step times given directly.
#include "analyze/pytorch/pytorch_reports.hpp"
#include "analyze/report_registry.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../committed_traces.hpp"
#include "../store/pytorch_log.hpp"
#include "store/database.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"
#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using test::cell;

std::size_t row_of(const Report& r, const std::string& column, const std::string& value) {
  for (std::size_t i = 0; i < r.rows.size(); ++i)
    if (cell<std::string>(r, i, column) == value) return i;
  ADD_FAILURE() << "no row " << value << " in " << r.name;
  return 0;
}

class HandBuilt : public ::testing::Test {
 protected:
  void SetUp() override {
    store::test::write_pytorch_log(m_dir.file("p.gslog"));
    (void)store::import_logs({m_dir.file("p.gslog")}, m_dir.file("p.sqlite"), store::ImportOptions{});
  }
  store::test::TempDir m_dir;
};

TEST_F(HandBuilt, OpSumSplitsSelfTotalAndBackwardGpuTime) {
  store::Database db = store::open_trace(m_dir.file("p.sqlite"));
  const Report r = op_sum(db);
  const std::size_t conv2d = row_of(r, "Name", "aten::conv2d");
  EXPECT_EQ(cell<std::int64_t>(r, conv2d, "Calls"), 2);
  EXPECT_EQ(cell<std::int64_t>(r, conv2d, "Self GPU"), 0);                      // its kernels are aten::convolution's
  EXPECT_EQ(cell<std::int64_t>(r, conv2d, "GPU Total"), 2 * 20'000);            // 2 forwards x 20 µs
  EXPECT_EQ(cell<std::int64_t>(r, conv2d, "Bwd GPU"), 30'000);                  // ConvolutionBackward0 (seq 5)
  EXPECT_EQ(cell<std::int64_t>(r, conv2d, "CPU Total"), 2 * 18'000);            // 13..31 µs
  EXPECT_EQ(cell<std::int64_t>(r, conv2d, "CPU Self"), 2 * (18'000 - 16'000));  // minus aten::convolution 14..30
  const std::size_t conv = row_of(r, "Name", "aten::convolution");
  EXPECT_EQ(cell<std::int64_t>(r, conv, "Self GPU"), 40'000);
  EXPECT_EQ(cell<std::int64_t>(r, conv, "Kernels"), 2);
  const std::size_t linear = row_of(r, "Name", "aten::linear");
  EXPECT_EQ(cell<std::int64_t>(r, linear, "Self GPU"), 10'000);
  EXPECT_EQ(cell<std::int64_t>(r, linear, "Bwd GPU"), 7'000);  // aten::mm inside AddmmBackward0 (seq 6)
  EXPECT_EQ(cell<std::int64_t>(r, row_of(r, "Name", "ConvolutionBackward0"), "Self GPU"), 30'000);
  // Sorted by Self GPU: the convolution first.
  EXPECT_EQ(cell<std::string>(r, 0, "Name"), "aten::convolution");
  // 40 + 10 + 7 + 30 = 87 µs of kernels, all inside an operator.
  EXPECT_TRUE(test::has_note(r, "87 µs of 87 µs")) << r.notes.at(0).text;
}

TEST_F(HandBuilt, ModuleSumChargesForwardAndBackwardToTheLayer) {
  store::Database db = store::open_trace(m_dir.file("p.sqlite"));
  const Report r = module_sum(db);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(cell<std::string>(r, 0, "Module"), "Net");  // model order: Net, conv1, fc
  EXPECT_EQ(cell<std::string>(r, 1, "Module"), "conv1");
  EXPECT_EQ(cell<std::string>(r, 2, "Module"), "fc");
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Fwd GPU"), 40'000);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Bwd GPU"), 30'000);
  EXPECT_EQ(cell<std::int64_t>(r, 2, "Fwd GPU"), 10'000);
  EXPECT_EQ(cell<std::int64_t>(r, 2, "Bwd GPU"), 7'000);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Fwd GPU"), 50'000);  // submodules included
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Bwd GPU"), 37'000);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Calls"), 2);
  EXPECT_EQ(cell<std::string>(r, 1, "Top Kernel"), "conv_fwd_kernel");  // 40 µs forward > 30 µs backward
  EXPECT_EQ(cell<std::string>(r, 1, "Class"), "Conv2d");
}

TEST_F(HandBuilt, StepSumHasTheStepsAndTheirKernels) {
  store::Database db = store::open_trace(m_dir.file("p.sqlite"));
  const Report r = run_report(db, "step_sum").front();
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(cell<std::int64_t>(r, 0, "Kernels"), 4);  // conv, gemm, gemm_bwd, conv_bwd
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Kernels"), 2);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Wall"), 0.110);  // 10 .. 120 µs
  // No overlap; conv_bwd_kernel (93..123 µs) is cut at the step's end (120 µs).
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "GPU Busy"), (20 + 5 + 7 + 27) / 1e3);
  EXPECT_EQ(cell<std::string>(r, 0, "State"), "warm-up");
  EXPECT_TRUE(test::has_note(r, "no steady state")) << r.notes.at(0).text;
}

std::vector<StepFacts> steps_of(const std::vector<std::int64_t>& walls) {
  std::vector<StepFacts> s;
  std::int64_t t = 0;
  for (std::int64_t w : walls) {
    StepFacts f;
    f.step = static_cast<std::int64_t>(s.size());
    f.start_ns = t;
    f.end_ns = t += w;
    s.push_back(f);
  }
  classify_steps(s);
  return s;
}

std::string kinds(const std::vector<StepFacts>& s) {
  std::string k;
  for (const StepFacts& f : s)
    k += f.kind == StepFacts::Kind::kSteady ? 's' : f.kind == StepFacts::Kind::kWarmup ? 'w' : 'o';
  return k;
}

TEST(SteadyState, WarmupStepsThenSteady) {
  EXPECT_EQ(kinds(steps_of({6000, 33, 18, 11, 12, 12, 11, 10, 12})), "wwwssssss");
  EXPECT_EQ(kinds(steps_of({100, 10, 10, 10, 10})), "wssss");  // only the first
}

TEST(SteadyState, OutliersAfterWarmupAreLeftOutAndSaidSo) {
  EXPECT_EQ(kinds(steps_of({100, 10, 10, 32, 10, 4, 10})), "wssosos");
  const auto window = steady_window(steps_of({100, 10, 10, 32, 10}));
  ASSERT_TRUE(window);
  EXPECT_EQ(window->first, 100);
  EXPECT_EQ(window->second, 162);
}

TEST(SteadyState, OneStepOrNoneHasNoSteadyState) {
  EXPECT_EQ(kinds(steps_of({50})), "w");
  EXPECT_FALSE(steady_window(steps_of({50})));
  EXPECT_EQ(kinds(steps_of({})), "");
  EXPECT_FALSE(steady_window(steps_of({50, 10})));  // one steady step is not a steady state
}

// The committed recording: 6 steps of examples/pytorch/cnn_train.py on an H100.
class CommittedPytorch : public ::testing::Test {
 protected:
  store::Database db = store::open_trace(gpuscope::test::committed_trace("cnn-pytorch"));
};

TEST_F(CommittedPytorch, StepsAndSteadyState) {
  const Report r = run_report(db, "step_sum").front();
  ASSERT_EQ(r.rows.size(), 6u);
  EXPECT_EQ(cell<std::string>(r, 0, "State"), "warm-up");  // CUDA and cuDNN set-up: seconds
  int steady = 0;
  for (std::size_t i = 0; i < r.rows.size(); ++i) steady += cell<std::string>(r, i, "State") == "steady";
  EXPECT_GE(steady, 3);
  EXPECT_EQ(cell<std::string>(r, 5, "State"), "steady");  // every later step inside
}

// Every kernel, copy and set of the recording was launched inside an operator call: Self GPU
// sums to all of their time (as torch.profiler's self CUDA counts copies: item()'s
// device-to-host copy is aten::_local_scalar_dense's), Kernels to the kernel count.
TEST_F(CommittedPytorch, EveryKernelBelongsToAnOperatorAndCountsMatchSql) {
  const Report r = op_sum(db);
  std::int64_t self = 0, kernels = 0;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    self += cell<std::int64_t>(r, i, "Self GPU");
    kernels += cell<std::int64_t>(r, i, "Kernels");
  }
  EXPECT_EQ(self, db.query_int("SELECT (SELECT SUM(end_ns - start_ns) FROM kernels) + (SELECT SUM(end_ns - start_ns) "
                               "FROM memcpys) + (SELECT COALESCE(SUM(end_ns - start_ns), 0) FROM memsets)")
                      .value_or(-1));
  EXPECT_EQ(kernels, db.query_int("SELECT COUNT(*) FROM kernels").value_or(-1));
  const std::size_t scalar = row_of(r, "Name", "aten::_local_scalar_dense");
  EXPECT_EQ(cell<std::int64_t>(r, scalar, "Kernels"), 0);
  EXPECT_GT(cell<std::int64_t>(r, scalar, "Self GPU"), 0);  // the copy of loss.item()
  // Two convolutions per forward, 6 steps; their backward comes back to aten::conv2d.
  const std::size_t conv2d = row_of(r, "Name", "aten::conv2d");
  EXPECT_EQ(cell<std::int64_t>(r, conv2d, "Calls"), 12);
  EXPECT_EQ(cell<std::int64_t>(r, conv2d, "Bwd GPU"),
            db.query_int("SELECT SUM(k.end_ns - k.start_ns) FROM torch_op_activities t JOIN torch_ops o ON o.nvtx_id = "
                         "t.op_nvtx_id JOIN torch_ops f ON f.nvtx_id = o.forward_op JOIN strings n ON n.id = "
                         "f.name_id JOIN (SELECT pid, correlation_id, start_ns, end_ns FROM kernels UNION ALL SELECT "
                         "pid, correlation_id, start_ns, end_ns FROM memsets) k ON k.pid = t.pid AND k.correlation_id "
                         "= t.correlation_id WHERE n.value = 'aten::conv2d'")
                .value_or(-1));
  EXPECT_GT(cell<std::int64_t>(r, conv2d, "Bwd GPU"), 0);
}

TEST_F(CommittedPytorch, ModulesInModelOrder) {
  const Report r = module_sum(db);
  ASSERT_GE(r.rows.size(), 10u);
  EXPECT_EQ(cell<std::string>(r, 0, "Module"), "Sequential");
  EXPECT_EQ(cell<std::string>(r, 1, "Module"), "0");
  EXPECT_EQ(cell<std::string>(r, 1, "Class"), "Conv2d");
  EXPECT_GT(cell<std::int64_t>(r, 1, "Bwd GPU"), 0);
  EXPECT_EQ(cell<std::int64_t>(r, 1, "Calls"), 6);
}

}  // namespace
}  // namespace gpuscope::analyze
