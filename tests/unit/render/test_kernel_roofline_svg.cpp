// gpuscope kernels --svg: kernels on the roofline, or bandwidth when FLOPs are missing.
#include "render/kernel_roofline_svg.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include <fmt/format.h>

namespace gpuscope::render {
namespace {

std::size_t count(const std::string& s, std::string_view part) {
  std::size_t n = 0;
  for (auto p = s.find(part); p != std::string::npos; p = s.find(part, p + 1)) ++n;
  return n;
}

MachineProfile h100() {
  MachineProfile p;
  p.device.name = "NVIDIA H100";
  for (auto [name, v] : std::initializer_list<std::pair<const char*, double>>{{"dram_copy", 3.0e12},
                                                                              {"l2_read", 10e12},
                                                                              {"shared_memory", 30e12},
                                                                              {"fp32_fma", 60e12},
                                                                              {"tensor_bf16", 790e12}}) {
    Ceiling c;
    c.name = name;
    c.measured = v;
    p.ceilings.push_back(c);
  }
  return p;
}

kernels::KernelPoint marker(std::string label, kernels::MetricValues v, const MachineProfile& p) {
  return kernels::kernel_point(std::move(label), kernels::derive(v, {2112, 256, 32, 0}, {}, p, "measured"));
}

kernels::MetricValues sgemm() {
  return {{"gpu__time_duration.sum", 1e6},
          {"dram__bytes_read.sum", 1e9},
          {"dram__bytes_write.sum", 1e8},
          {"lts__t_bytes.sum", 4e9},
          {"l1tex__t_bytes.sum", 1e10},
          {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 2e10},
          {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 0},
          {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 0}};
}

kernels::MetricValues copy() {
  return {{"gpu__time_duration.sum", 0.72e6},
          {"dram__bytes_read.sum", 1.07e9},
          {"dram__bytes_write.sum", 1.07e9},
          {"lts__t_bytes.sum", 2.14e9},
          {"l1tex__t_bytes.sum", 1.07e9}};
}

TEST(KernelRooflineSvg, KernelsWithFlopsAreOnTheRoofline) {
  const MachineProfile p = h100();
  std::vector<kernels::KernelPoint> k{marker("sgemm", sgemm(), p), marker("copy_kernel", copy(), p)};
  std::ostringstream out;
  write_kernel_roofline_svg(p, k, "measured", out);
  const std::string svg = out.str();
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("Kernels on the roofline of NVIDIA H100"), std::string::npos);
  EXPECT_NE(svg.find("id=\"ceiling-dram_copy\""), std::string::npos);
  EXPECT_NE(svg.find("id=\"ceiling-fp32_fma\""), std::string::npos);
  EXPECT_EQ(count(svg, "class=\"point kernel\""), 1u);  // only sgemm has FLOPs
  EXPECT_NE(svg.find(">sgemm<"), std::string::npos);
  EXPECT_NE(svg.find("1 kernel not drawn (FLOPs or DRAM bytes not collected"), std::string::npos);
  EXPECT_GE(count(svg, "kernel-l2"), 1u);
  EXPECT_NE(svg.find("compute-bound (fp32)"), std::string::npos);  // legend by bound
  // The marker carries its point exactly (core/kernel_point.hpp), for scripts and tests.
  const kernels::KernelPoint& g = k[0];
  EXPECT_NE(svg.find("data-kernel=\"sgemm\" data-intensity=\"" + fmt::format("{:.17g}", g.intensity) +
                     "\" data-flop-rate=\"" + fmt::format("{:.17g}", g.flop_rate) +
                     "\" data-ceiling=\"fp32_fma\" data-bound=\"compute-bound (fp32)\""),
            std::string::npos)
      << svg;
  EXPECT_EQ(count(svg, "data-kernel="), 1u);  // the copy has no point, hence no data
}

// Tensor-core FLOPs (the calibrated wgmma counters) put a GEMM with no CUDA-core FLOPs on the
// roofline, compute-bound (tensor); without the calibration it has no FLOPs and no point.
TEST(KernelRooflineSvg, TensorGemmIsOnTheRooflineWithItsTensorFlops) {
  const MachineProfile p = h100();
  const kernels::MetricValues v{{"gpu__time_duration.sum", 176896},
                                {"dram__bytes_read.sum", 150925056},
                                {"dram__bytes_write.sum", 73081856},
                                {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 0},
                                {"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum", 137438953472.0}};
  const kernels::KernelPoint gemm = kernels::kernel_point(
      "gemm", kernels::derive(v, {132, 384, 168, 0}, {}, p, "measured", kernels::default_tensor_calibration()));
  ASSERT_TRUE(gemm.on_roofline);
  EXPECT_NEAR(gemm.flop_rate, 137438953472.0 / 176896e-9, 1.0);
  EXPECT_EQ(gemm.bound_label, "compute-bound (tensor)");
  EXPECT_EQ(gemm.ceiling, "tensor_bf16");
  std::ostringstream out;
  write_kernel_roofline_svg(p, std::vector<kernels::KernelPoint>{gemm}, "measured", out);
  EXPECT_NE(out.str().find("data-kernel=\"gemm\""), std::string::npos);
  EXPECT_NE(out.str().find("data-bound=\"compute-bound (tensor)\""), std::string::npos);

  const kernels::KernelPoint uncalibrated =
      kernels::kernel_point("gemm", kernels::derive(v, {132, 384, 168, 0}, {}, p, "measured"));
  EXPECT_FALSE(uncalibrated.on_roofline);
}

TEST(KernelRooflineSvg, QuickSetDrawsBandwidthAgainstMemoryCeilings) {
  const MachineProfile p = h100();
  std::vector<kernels::KernelPoint> k{marker("copy_kernel", copy(), p)};
  const Chart c = kernel_roofline_chart(p, k, "theoretical");
  EXPECT_NE(c.title.find("Kernel bandwidth"), std::string::npos);
  EXPECT_NE(c.subtitle.find("FLOPs were not collected"), std::string::npos);
  EXPECT_NE(c.subtitle.find("--set roofline"), std::string::npos);
  EXPECT_NE(c.subtitle.find("theoretical"), std::string::npos);
  std::ostringstream out;
  write_svg(c, out);
  const std::string svg = out.str();
  EXPECT_NE(svg.find("id=\"ceiling-dram_copy\""), std::string::npos);
  EXPECT_NE(svg.find("id=\"ceiling-l2_read\""), std::string::npos);
  EXPECT_EQ(count(svg, "class=\"point kernel\""), 1u);
  EXPECT_EQ(count(svg, "class=\"point kernel-l2\""), 1u);
  EXPECT_NE(svg.find("dram-bound"), std::string::npos);
}

TEST(KernelRooflineSvg, NothingToDrawIsAnError) {
  const MachineProfile p = h100();
  std::vector<kernels::KernelPoint> k{marker("x", {{"gpu__time_duration.sum", 1000}}, p)};
  EXPECT_THROW((void)kernel_roofline_chart(p, k, "measured"), std::invalid_argument);
  EXPECT_THROW((void)kernel_roofline_chart(MachineProfile{}, std::vector<kernels::KernelPoint>{marker("c", copy(), p)},
                                           "measured"),
               std::invalid_argument);
}

TEST(KernelRooflineSvg, BoundColoursDiffer) {
  EXPECT_NE(bound_color(kernels::Bound::kDram), bound_color(kernels::Bound::kCompute));
  EXPECT_NE(bound_color(kernels::Bound::kLaunch), bound_color(kernels::Bound::kLatency));
}

}  // namespace
}  // namespace gpuscope::render
