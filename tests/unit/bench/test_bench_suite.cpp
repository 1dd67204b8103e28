// The operator suite's host-side definitions (bench/ops/operator.hpp) and the runner's
// planning (bench/bench_runner.hpp), which touch no GPU: every operator's default sizes
// parse and map to shapes, its declared work is sane, its parameters are a unique key per
// size, and bad variants, dtypes and shapes are refused with a message naming what is valid.
#include <cmath>
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>

#include "bench/bench_runner.hpp"
#include "bench/ops/operator.hpp"
#include "core/bench_sizes.hpp"
#include "core/machine_profile.hpp"

namespace gpuscope::bench {
namespace {

TEST(BenchSuite, EveryOperatorIsWellFormed) {
  const auto& ops = ops::registry();
  ASSERT_EQ(ops.size(), 9u);
  std::set<std::string> names;
  for (const ops::Operator& op : ops) {
    SCOPED_TRACE(op.name);
    EXPECT_TRUE(names.insert(op.name).second) << "duplicate operator name";
    EXPECT_FALSE(op.summary.empty());
    EXPECT_FALSE(op.teaches.empty());
    EXPECT_FALSE(op.reference.empty());
    EXPECT_FALSE(op.variants.empty());
    EXPECT_FALSE(op.dtypes.empty());
    EXPECT_EQ(ops::find_operator(op.name), &op);
    RunOptions o;
    o.dtype = op.dtypes.front();
    o.sizes = core::parse_sizes(op.default_sizes);
    const std::vector<ops::CaseSpec> specs = plan_cases(op, o);
    EXPECT_EQ(specs.size(), op.variants.size() * o.sizes.size());
    std::set<std::string> params;
    double last_x = 0;
    for (std::size_t i = 0; i < o.sizes.size(); ++i) {
      const ops::CaseSpec& spec = specs[i];  // the first variant's sizes, in order
      const BenchWork w = op.work(spec);
      EXPECT_GE(w.bytes_read, 0);
      EXPECT_GT(w.bytes_read + w.bytes_written, 0) << op.params(spec);
      EXPECT_GE(w.flops, 0);
      EXPECT_NE(find_ceiling_info(w.compute_ceiling), nullptr) << w.compute_ceiling;
      EXPECT_GE(op.device_bytes(spec), w.bytes_read) << op.params(spec);  // at least the inputs
      EXPECT_TRUE(params.insert(op.params(spec)).second) << op.params(spec);
      EXPECT_GT(op.sweep_x(spec), last_x) << "sweep x must grow with the default sizes";
      last_x = op.sweep_x(spec);
    }
  }
}

TEST(BenchSuite, PlanRefusesBadInput) {
  const ops::Operator& copy = *ops::find_operator("copy");
  RunOptions o;
  o.sizes = core::parse_sizes("1024");
  o.variant = "warp_speed";
  try {
    (void)plan_cases(copy, o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("grid_stride_vec4"), std::string::npos) << e.what();
  }
  o.variant = "memcpy";
  EXPECT_EQ(plan_cases(copy, o).size(), 1u);
  o.dtype = ops::DType::kTF32;  // gemm only
  try {
    (void)plan_cases(copy, o);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos) << e.what();
  }
  o.dtype = ops::DType::kF32;
  o.sizes = core::parse_sizes("4x4");  // copy takes one number
  EXPECT_THROW((void)plan_cases(copy, o), std::invalid_argument);
  o.sizes.clear();
  EXPECT_THROW((void)plan_cases(copy, o), std::invalid_argument);
}

TEST(BenchSuite, GemmWorkAndShapes) {
  const ops::Operator& gemm = *ops::find_operator("gemm");
  RunOptions o;
  o.dtype = ops::DType::kBF16;
  o.sizes = core::parse_sizes("8192,128x256x512");
  const auto specs = plan_cases(gemm, o);
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(gemm.params(specs[0]), "m=8192,n=8192,k=8192");
  EXPECT_DOUBLE_EQ(gemm.work(specs[0]).flops, 2.0 * 8192.0 * 8192.0 * 8192.0);
  EXPECT_EQ(gemm.params(specs[1]), "m=128,n=256,k=512");
  EXPECT_DOUBLE_EQ(gemm.work(specs[1]).flops, 2.0 * 128 * 256 * 512);
  EXPECT_EQ(gemm.work(specs[0]).compute_ceiling, "tensor_bf16");
}

}  // namespace
}  // namespace gpuscope::bench
