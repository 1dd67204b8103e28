// The PyTorch tables built at import (store/pytorch_tables.hpp) from a hand-built log of
// what `gpuscope trace --pytorch=ops,modules` records: a model's forward (module and
// operator ranges on the main thread), its backward on the autograd thread (nodes carrying
// the forward operators' sequence numbers), optimizer steps, and the kernels each launched.
#include "store/pytorch_tables.hpp"

#include <gtest/gtest.h>

#include <string>

#include "pytorch_log.hpp"
#include "store/database.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"

namespace gpuscope::store {
namespace {

using test::LogBuilder;
using test::TempDir;

constexpr std::uint32_t kPid = test::kTorchPid, kMain = test::kTorchMain;

class PytorchTables : public ::testing::Test {
 protected:
  // The log of pytorch_log.hpp, imported.
  void SetUp() override {
    const std::string log = m_dir.file("p.gslog");
    test::write_pytorch_log(log);
    ImportOptions opts;
    opts.command = "python3 train.py";
    (void)import_logs({log}, m_dir.file("p.sqlite"), opts);
  }
  std::int64_t count(const std::string& sql) {
    Database db = open_trace(m_dir.file("p.sqlite"));
    return db.query_int(sql).value_or(-1);
  }
  std::string text(const std::string& sql) {
    Database db = open_trace(m_dir.file("p.sqlite"));
    return db.query_text(sql).value_or("<null>");
  }
  TempDir m_dir;
};

TEST_F(PytorchTables, OperatorsModulesAndStepsAreRead) {
  EXPECT_EQ(count("SELECT COUNT(*) FROM torch_ops"), 2 * 3 + 5);  // 3 forward ops per step, 5 backward
  EXPECT_EQ(count("SELECT COUNT(*) FROM torch_ops WHERE is_backward = 1"), 5);
  EXPECT_EQ(count("SELECT COUNT(*) FROM torch_modules"), 6);
  EXPECT_EQ(text("SELECT group_concat(path, ',') FROM (SELECT path FROM v_torch_modules ORDER BY start_ns LIMIT 3)"),
            "Net,conv1,fc");
  EXPECT_EQ(count("SELECT COUNT(*) FROM v_torch_ops WHERE name = 'aten::conv2d' AND seq = 5"), 2);
  // The user's own range stays a plain NVTX range.
  EXPECT_EQ(count("SELECT COUNT(*) FROM v_torch_ops WHERE name LIKE 'step%'"), 0);
}

TEST_F(PytorchTables, StepsRunFromTheFirstRangeToEachOptimizerStep) {
  EXPECT_EQ(count("SELECT COUNT(*) FROM torch_steps"), 2);
  EXPECT_EQ(count("SELECT start_ns FROM torch_steps WHERE step = 0"), 10'000);  // the first module range
  EXPECT_EQ(count("SELECT end_ns FROM torch_steps WHERE step = 0"), 120'000);
  EXPECT_EQ(count("SELECT start_ns FROM torch_steps WHERE step = 1"), 120'000);
  EXPECT_EQ(count("SELECT end_ns FROM torch_steps WHERE step = 1"), 300'000);
}

TEST_F(PytorchTables, EachKernelGoesToTheInnermostOperatorAroundItsLaunch) {
  EXPECT_EQ(count("SELECT COUNT(*) FROM torch_op_activities"), 6);  // every kernel
  const std::string by_op =
      "SELECT group_concat(o.name || '=' || s.value, ';') FROM (SELECT * FROM torch_op_activities ORDER BY "
      "correlation_id) k JOIN v_torch_ops o ON o.nvtx_id = k.op_nvtx_id JOIN kernels kk ON kk.pid = k.pid AND "
      "kk.correlation_id = k.correlation_id JOIN strings s ON s.id = kk.name_id";
  EXPECT_EQ(text(by_op),
            "aten::convolution=conv_fwd_kernel;aten::linear=gemm_fwd;aten::convolution=conv_fwd_kernel;"
            "aten::linear=gemm_fwd;aten::mm=gemm_bwd;"
            "ConvolutionBackward0=conv_bwd_kernel");
}

TEST_F(PytorchTables, BackwardCallsBelongToTheForwardOperatorWithTheirSequenceNumber) {
  // The engine's range has no seq: no forward op of its own.
  EXPECT_EQ(count("SELECT COUNT(*) FROM v_torch_ops WHERE name LIKE 'autograd::engine%' AND forward_op IS NULL"), 2);
  // ConvolutionBackward0 (seq 5) -> the outermost forward op with seq 5 of step 0: aten::conv2d at 13 µs.
  EXPECT_EQ(text("SELECT f.name || '@' || f.start_ns FROM v_torch_ops b JOIN v_torch_ops f ON f.nvtx_id = "
                 "b.forward_op WHERE b.name = 'ConvolutionBackward0'"),
            "aten::conv2d@13000");
  // aten::mm inside AddmmBackward0 inherits its node's forward op (aten::linear) ...
  EXPECT_EQ(text("SELECT f.name FROM v_torch_ops b JOIN v_torch_ops f ON f.nvtx_id = b.forward_op "
                 "WHERE b.name = 'aten::mm'"),
            "aten::linear");
  // ... and the module of that forward op.
  EXPECT_EQ(text("SELECT m.path FROM v_torch_ops b JOIN v_torch_modules m ON m.nvtx_id = b.module_id "
                 "WHERE b.name = 'aten::mm'"),
            "fc");
}

// As torch.profiler's table counts them: a call that is the only operator inside a call of
// the same name is one call (aten::div.Scalar redispatching to aten::div.Tensor), its kernel
// charged to the outer call; same-name calls beside others stay separate.
TEST(PytorchTablesMerge, AnOnlyChildOfTheSameNameIsOneCall) {
  TempDir dir;
  const std::string log = dir.file("m.gslog");
  {
    LogBuilder b(log, kPid);
    b.process(0);
    b.push(1'000, kMain, "aten::div, seq = 1, op_id = 1");
    b.push(2'000, kMain, "aten::div, seq = 1, op_id = 2");
    b.push(3'000, kMain, "aten::div, seq = 1, op_id = 3");  // a chain of three: one call
    b.api(4'000, 4'500, kMain, 1, "cudaLaunchKernel");
    b.kernel(5'000, 6'000, 1, "div_kernel");
    b.pop(7'000, kMain);
    b.pop(8'000, kMain);
    b.pop(9'000, kMain);
    b.push(10'000, kMain, "aten::add, seq = 2, op_id = 4");
    b.push(11'000, kMain, "aten::add, seq = 2, op_id = 5");  // beside aten::mul: kept
    b.pop(12'000, kMain);
    b.push(13'000, kMain, "aten::mul, seq = 2, op_id = 6");
    b.pop(14'000, kMain);
    b.pop(15'000, kMain);
    b.end(20'000);
  }
  (void)import_logs({log}, dir.file("m.sqlite"), ImportOptions{});
  Database db = open_trace(dir.file("m.sqlite"));
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM v_torch_ops WHERE name = 'aten::div'"), 1);
  EXPECT_EQ(db.query_int("SELECT start_ns FROM v_torch_ops WHERE name = 'aten::div'"), 1'000);
  EXPECT_EQ(db.query_text("SELECT o.name || '@' || o.start_ns FROM torch_op_activities k JOIN v_torch_ops o "
                          "ON o.nvtx_id = k.op_nvtx_id"),
            "aten::div@1000");
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM v_torch_ops WHERE name = 'aten::add'"), 2);
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM v_torch_ops o JOIN v_torch_ops p ON p.nvtx_id = o.parent_op "
                         "WHERE p.name = 'aten::add'"),
            2);
}

TEST(PytorchTablesEmpty, ATraceWithoutThemHasEmptyTables) {
  TempDir dir;
  const std::string log = dir.file("q.gslog");
  {
    LogBuilder b(log, kPid);
    b.process(0);
    b.push(1000, kMain, "step 0");
    b.pop(2000, kMain);
    b.end(3000);
  }
  (void)import_logs({log}, dir.file("q.sqlite"), ImportOptions{});
  Database db = open_trace(dir.file("q.sqlite"));
  for (const char* t : {"torch_ops", "torch_modules", "torch_steps", "torch_op_activities"})
    EXPECT_EQ(db.query_int(std::string("SELECT COUNT(*) FROM ") + t).value_or(-1), 0) << t;
}

}  // namespace
}  // namespace gpuscope::store
