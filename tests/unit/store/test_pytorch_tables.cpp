// The PyTorch tables built at import (store/pytorch_tables.hpp) from a hand-built log of
// what `gpuscope trace --pytorch=ops,modules` records: a model's forward (module and
// operator ranges on the main thread), its backward on the autograd thread (nodes carrying
// the forward operators' sequence numbers), optimizer steps, and the kernels each launched.
#include "store/pytorch_tables.hpp"

#include <gtest/gtest.h>

#include <limits>
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

// gpuscope's own observer (log::TorchOpRecord) and PyTorch's NVTX observer record the same
// calls: the importer must give the same nvtx_events, torch_ops, torch_modules, torch_steps and
// torch_op_activities rows (op_sum and module_sum read nothing else).
TEST(PytorchObserverRoute, GivesTheRowsOfTheNvtxRoute) {
  TempDir dir;
  const auto import = [&](test::TorchRoute route, const std::string& name) {
    const std::string log = dir.file(name + ".gslog");
    test::write_pytorch_log(log, route);
    (void)import_logs({log}, dir.file(name + ".sqlite"), ImportOptions{});
    return open_trace(dir.file(name + ".sqlite"));
  };
  Database nvtx = import(test::TorchRoute::kNvtx, "nvtx");
  Database observer = import(test::TorchRoute::kObserver, "observer");
  const char* queries[] = {
      "SELECT group_concat(r, '|') FROM (SELECT e.id || ',' || s.value || ',' || e.tid || ',' || e.start_ns || ',' || "
      "ifnull(e.end_ns, '') || ',' || ifnull(e.depth, '') || ',' || ifnull(e.parent_id, '') || ',' || e.style AS r "
      "FROM nvtx_events e LEFT JOIN strings s ON s.id = e.text_id ORDER BY e.id)",
      "SELECT group_concat(r, '|') FROM (SELECT nvtx_id || ',' || name || ',' || ifnull(seq, '') || ',' || "
      "ifnull(op_id, '') || ',' || ifnull(sizes, '') || ',' || is_backward || ',' || ifnull(parent_op, '') || ',' || "
      "ifnull(forward_op, '') || ',' || ifnull(module_id, '') || ',' || duration_ns AS r FROM v_torch_ops "
      "ORDER BY nvtx_id)",
      "SELECT group_concat(r, '|') FROM (SELECT nvtx_id || ',' || path || ',' || class_name || ',' || "
      "ifnull(parent_module, '') AS r FROM v_torch_modules ORDER BY nvtx_id)",
      "SELECT group_concat(r, '|') FROM (SELECT step || ',' || start_ns || ',' || end_ns AS r FROM torch_steps "
      "ORDER BY step)",
      "SELECT group_concat(r, '|') FROM (SELECT correlation_id || ',' || op_nvtx_id AS r FROM torch_op_activities "
      "ORDER BY correlation_id)",
      "SELECT COUNT(*) FROM data_loss",
  };
  for (const char* q : queries) {
    const auto want = nvtx.query_text(q);
    ASSERT_TRUE(want.has_value()) << q;
    EXPECT_EQ(observer.query_text(q), want) << q;
  }
  EXPECT_EQ(observer.query_int("SELECT COUNT(*) FROM torch_ops"), 11);
  EXPECT_EQ(observer.query_int("SELECT COUNT(*) FROM torch_modules"), 6);
  // The user's range was recorded through NVTX in both: it is no operator.
  EXPECT_EQ(observer.query_int("SELECT COUNT(*) FROM v_torch_ops WHERE name LIKE 'step%'"), 0);
  EXPECT_EQ(observer.query_int("SELECT COUNT(*) FROM nvtx_events e JOIN strings s ON s.id = e.text_id "
                               "WHERE s.value = 'step 0'"),
            1);
}

// Shapes come as one interned text per call; the importer writes them as PyTorch's NVTX observer
// does, and torch_ops.sizes keeps them. An edge type the importer does not know is left out.
TEST(PytorchObserverRoute, ShapesAndUnknownEdges) {
  TempDir dir;
  const std::string log = dir.file("s.gslog");
  {
    LogBuilder b(log, kPid);
    b.process(0);
    b.torch_op(log::TorchOpEventType::kOpBegin, 1000, kMain, "aten::add", -1, 346, "[[32, 64], [32, 64], []]");
    b.torch_op(static_cast<log::TorchOpEventType>(9), 1500, kMain, "later");
    b.torch_op(log::TorchOpEventType::kEnd, 2000, kMain);
    b.end(3000);
  }
  (void)import_logs({log}, dir.file("s.sqlite"), ImportOptions{});
  Database db = open_trace(dir.file("s.sqlite"));
  EXPECT_EQ(db.query_text("SELECT s.value FROM nvtx_events e JOIN strings s ON s.id = e.text_id"),
            "aten::add, op_id = 346, sizes = [[32, 64], [32, 64], []]");
  EXPECT_EQ(db.query_text("SELECT name || ' ' || op_id || ' ' || sizes || ' ' || duration_ns FROM v_torch_ops"),
            "aten::add 346 [[32, 64], [32, 64], []] 1000");
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM nvtx_events"), 1);
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM data_loss"), 0);
}

// The observer's measured cost per operator and module call goes into meta, as the launch cost
// does; a cost it could not measure (NaN) is left out; a trace without the observer has none.
TEST(PytorchObserverRoute, CostGoesIntoMeta) {
  TempDir dir;
  const auto import = [&](const std::string& name, bool cost) {
    const std::string log = dir.file(name + ".gslog");
    {
      LogBuilder b(log, kPid);
      b.process(0);
      if (cost) b.torch_op_cost(212.5, std::numeric_limits<double>::quiet_NaN(), "in-process at start");
      b.end(3000);
    }
    const ImportResult r = import_logs({log}, dir.file(name + ".sqlite"), ImportOptions{});
    EXPECT_EQ(r.data_loss_total, 0) << name;  // the cost record is read as itself, nothing after it
    Database db = open_trace(dir.file(name + ".sqlite"));
    EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM data_loss"), 0) << name;
    return db;
  };
  Database with = import("with", true);
  EXPECT_EQ(with.query_text("SELECT value FROM meta WHERE key = 'tracer_torch_op_cost_ns'"), "212.500000");
  EXPECT_EQ(with.query_text("SELECT value FROM meta WHERE key = 'tracer_torch_cost_method'"), "in-process at start");
  EXPECT_EQ(with.query_int("SELECT COUNT(*) FROM meta WHERE key = 'tracer_torch_module_cost_ns'"), 0);
  Database without = import("without", false);
  EXPECT_EQ(without.query_int("SELECT COUNT(*) FROM meta WHERE key LIKE 'tracer_torch%'"), 0);
}

}  // namespace
}  // namespace gpuscope::store
