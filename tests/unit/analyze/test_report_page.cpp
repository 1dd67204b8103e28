// analyze/report_page: the data of gpuscope report's page, on a small trace built here (the
// per-GPU split and the NVTX steps computed by hand) and on the committed recordings (the
// headline and tables are the stats reports, exactly).
#include "analyze/report/report_page.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include <nlohmann/json.hpp>

#include "../committed_traces.hpp"
#include "analyze/kernels/kernel_reports.hpp"
#include "analyze/pytorch/pytorch_reports.hpp"
#include "analyze/report_registry.hpp"
#include "render/html_report.hpp"
#include "render/report_render.hpp"
#include "store/machine_profile_json.hpp"
#include "store/trace.hpp"
#include "trace_db.hpp"

namespace gpuscope::test {
namespace {

using analyze::downsample_min_max;
using analyze::group_steps;
using analyze::report_page;

// One GPU over a 1000 ns wall: kernels [0,100) and [50,150), a copy [140,200) (50 ns not
// under a kernel), a memset [300,320) → kernels 150, copies 50, memsets 20, idle 780.
// NVTX: "step 1" [0,500) holding "inner step" [10,20) and "forward" [0,100); "Step 2"
// [500,900); a mark "step" (not a range).
class ReportPageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t.strings({{1, "gemm<float>"}, {2, "step 1"}, {3, "inner step"}, {4, "forward"}, {5, "Step 2"}, {6, "step"}});
    t.h100(100);
    t.add(rows::CaptureWindow{.pid = 100, .start_ns = 0, .end_ns = 1000, .reason = "all"});
    t.kernel(100, 0, 7, 1, 0, 100, 1);
    t.kernel(100, 0, 8, 2, 50, 150, 1);
    t.kernel(100, 0, 7, 3, 600, 700, 1);
    t.copy({.pid = 100, .start = 140, .end = 200, .bytes = 4096});
    t.add(rows::Memset{.pid = 100,
                       .device_id = 0,
                       .context_id = 1,
                       .stream_id = 7,
                       .start_ns = 300,
                       .end_ns = 320,
                       .bytes = 64,
                       .memory_kind = "device"});
    auto range = [](std::int64_t id, std::string_view style, std::int64_t text, long long start,
                    std::optional<std::int64_t> end) {
      return rows::NvtxEvent{.id = id,
                             .pid = 100,
                             .tid = 100,
                             .end_tid = 100,
                             .style = style,
                             .text_id = text,
                             .start_ns = start,
                             .end_ns = end};
    };
    t.add<rows::NvtxEvent>({range(1, "PushPop", 2, 0, 500), range(2, "PushPop", 3, 10, 20),
                            range(3, "PushPop", 4, 0, 100), range(4, "PushPop", 5, 500, 900),
                            range(5, "Mark", 6, 950, std::nullopt)});
  }
  TraceDb t;
};

TEST_F(ReportPageTest, GpuTimeSplitsTheWallWithoutOverlap) {
  const ReportPage page = report_page(t.db(), {.trace_name = "x.sqlite", .timeline = false});
  EXPECT_EQ(page.wall_ns, 1000);
  ASSERT_EQ(page.gpus.size(), 1u);
  const PageGpuTime& g = page.gpus[0];
  EXPECT_EQ(g.name, "NVIDIA H100");
  EXPECT_EQ(g.kernel_ns, 250);  // [0,150) and [600,700)
  EXPECT_EQ(g.copy_ns, 50);     // [150,200)
  EXPECT_EQ(g.memset_ns, 20);
  EXPECT_EQ(g.idle_ns, 1000 - 320);
  EXPECT_EQ(g.kernel_ns + g.copy_ns + g.memset_ns + g.idle_ns, g.wall_ns);
}

TEST_F(ReportPageTest, NvtxStepsAreTheOutermostStepRanges) {
  const ReportPage page = report_page(t.db(), {.timeline = false});
  EXPECT_EQ(page.steps_source, "nvtx");
  ASSERT_EQ(page.steps.size(), 2u);  // "inner step" is nested, "forward" holds no "step", the mark is no range
  EXPECT_EQ(page.steps[0].label, "step 1");
  EXPECT_EQ(page.steps[0].wall_ns, 500);
  EXPECT_EQ(page.steps[0].gpu_busy_ns, 150);
  EXPECT_EQ(page.steps[0].idle_ns, 350);
  EXPECT_EQ(page.steps[1].label, "Step 2");
  EXPECT_EQ(page.steps[1].start_ns, 500);
  EXPECT_EQ(page.steps[1].gpu_busy_ns, 100);
  EXPECT_EQ(page.steps[0].state, "warm-up");  // classify_steps: the first step is warm-up
}

TEST_F(ReportPageTest, HeadlineAndTablesAreTheStatsReports) {
  // The whole process (as stats --whole-run); the judged window: PyTorchStepsAndSteadyHeadline.
  const ReportPage page = report_page(t.db(), {.whole_run = true, .timeline = false});
  const std::vector<Report> top = analyze::run_report(t.db(), "top");
  ASSERT_EQ(page.headline.size(), top.size());
  for (std::size_t i = 0; i < top.size(); ++i)
    EXPECT_EQ(render::report_json(page.headline[i]).dump(), render::report_json(top[i]).dump());
  ASSERT_FALSE(page.tables.empty());
  EXPECT_EQ(page.tables[0].name, "cuda_gpu_kern_sum");
  EXPECT_EQ(render::report_json(page.tables[0]).dump(),
            render::report_json(analyze::run_report(t.db(), "cuda_gpu_kern_sum").at(0)).dump());
  for (const Report& r : page.tables) EXPECT_TRUE(r.name == "cuda_gpu_kern_sum" || !r.rows.empty()) << r.name;
  // Neither memory nor metrics: the page says so.
  EXPECT_TRUE(page.memory.empty());
  EXPECT_TRUE(page.metrics.empty());
  EXPECT_TRUE(std::any_of(page.notes.begin(), page.notes.end(),
                          [](const std::string& n) { return n.find("--cuda-memory-usage") != std::string::npos; }));
}

TEST(ReportPageCommitted, PyTorchStepsAndSteadyHeadline) {
  store::Database db = store::open_trace(committed_trace("cnn-pytorch"));
  const ReportPage page = report_page(db, {.timeline = false});
  EXPECT_EQ(page.steps_source, "pytorch");
  const Report steps = analyze::run_report(db, "step_sum").at(0);
  ASSERT_EQ(page.steps.size(), steps.rows.size());
  ASSERT_GT(page.steps.size(), 2u);
  for (std::size_t i = 0; i < page.steps.size(); ++i) {
    // step_sum's Wall (ms) and GPU Busy (ms) are the same ns / 1e6.
    EXPECT_DOUBLE_EQ(static_cast<double>(page.steps[i].wall_ns) / 1e6, cell<double>(steps, i, "Wall"));
    EXPECT_DOUBLE_EQ(static_cast<double>(page.steps[i].gpu_busy_ns) / 1e6, cell<double>(steps, i, "GPU Busy"));
    EXPECT_EQ(page.steps[i].state, cell<std::string>(steps, i, "State"));
  }
  // The headline judges the steady-state steps, with the note stats adds.
  ASSERT_FALSE(page.headline.empty());
  EXPECT_TRUE(has_note(page.headline[0], "judged the steady state: 4 of 6 PyTorch training steps"));
  const ReportPage whole = report_page(db, {.whole_run = true, .timeline = false});
  EXPECT_FALSE(has_note(whole.headline[0], "judged the steady state"));
  // The per-GPU split covers the same span as the headline: the steady steps' window.
  const auto window = analyze::steady_window(analyze::step_facts(db));
  ASSERT_TRUE(window.has_value());
  EXPECT_NE(page.gpus_scope.find("judged the steady state"), std::string::npos);
  ASSERT_FALSE(page.gpus.empty());
  EXPECT_EQ(page.gpus[0].wall_ns, window->second - window->first);
  EXPECT_TRUE(whole.gpus_scope.empty());
  EXPECT_EQ(whole.gpus[0].wall_ns, whole.wall_ns);
  for (const ReportPage* p : {&page, &whole}) {
    const PageGpuTime& g = p->gpus[0];
    EXPECT_EQ(g.kernel_ns + g.copy_ns + g.memset_ns + g.idle_ns, g.wall_ns);
  }
  for (const char* name : {"op_sum", "module_sum", "step_sum"})
    EXPECT_TRUE(std::any_of(page.tables.begin(), page.tables.end(), [&](const Report& r) { return r.name == name; }))
        << name;
  // nvtx_sum, op_sum and module_sum judge the headline's window, as stats; step_sum lists every step.
  for (const Report& r : page.tables)
    EXPECT_EQ(has_note(r, "judged the steady state"),
              r.name == "nvtx_sum" || r.name == "op_sum" || r.name == "module_sum")
        << r.name;
}

TEST(ReportPageCommitted, CnnGpuPartsSumToTheWall) {
  store::Database db = store::open_trace(committed_trace("cnn"));
  const ReportPage page = report_page(db, {.whole_run = true, .timeline = false});
  ASSERT_FALSE(page.gpus.empty());
  const Report util = analyze::run_report(db, "gpu_util").at(0);
  for (std::size_t i = 0; i < page.gpus.size(); ++i) {
    const PageGpuTime& g = page.gpus[i];
    EXPECT_EQ(g.kernel_ns + g.copy_ns + g.memset_ns + g.idle_ns, g.wall_ns);
    // Busy = kernels + copies + memsets = gpu_util's Busy Time (ms).
    EXPECT_NEAR(static_cast<double>(g.kernel_ns + g.copy_ns + g.memset_ns) / 1e6, cell<double>(util, i, "Busy Time"),
                1e-9);
  }
}

// A `gpuscope kernels` trace: each profiled kernel name goes on the page's roofline at the
// point `gpuscope kernels` derives for it (tensor-core FLOPs included: the GEMMs are there,
// compute-bound (tensor)), and the page's data embed those points; a plain trace has none and
// says so.
TEST(ReportPageCommitted, KernelsTracePlacesItsKernelsOnTheRoofline) {
  store::Database db = store::open_trace(committed_trace("kernels-h100"));
  const ReportPage page = report_page(db, {.timeline = false});
  // The same ceilings as the page: the cached profile of the GPU when there is one.
  std::optional<MachineProfile> profile;
  try {
    profile = store::load_cached_profile(analyze::profiled_gpu_uuid(db));
  } catch (const store::ProfileError&) {
  }
  analyze::KernelReportOptions o;
  o.profile = profile ? &*profile : nullptr;
  const analyze::KernelAnalysis a = analyze::analyze_kernels(db, o);
  ASSERT_FALSE(a.names.empty());
  ASSERT_EQ(page.roofline_points.size(), a.names.size());
  const nlohmann::json page_data = render::report_page_json(page);
  const nlohmann::json& data = page_data.at("roofline").at("points");
  const nlohmann::json& strings = page_data.at("strings");  // a point's kernel: its index there
  ASSERT_EQ(data.size(), a.names.size());
  int gemms = 0, off_chart = 0;
  for (std::size_t i = 0; i < a.names.size(); ++i) {
    const kernels::KernelPoint& p = page.roofline_points[i];
    const kernels::KernelDerived& d = a.names[i].derived;
    EXPECT_EQ(p.label, a.names[i].name);
    EXPECT_EQ(p.bound_label, d.bound_label) << p.label;
    EXPECT_EQ(strings.at(data[i].at("kernel").get<std::size_t>()), p.label);
    EXPECT_EQ(data[i].at("bound"), p.bound_label);
    EXPECT_EQ(data[i].at("on_roofline"), p.on_roofline);
    if (!p.on_roofline) {  // copies, transposes, tiny: no FLOPs
      ++off_chart;
      EXPECT_FALSE(d.flop_rate > 0) << p.label;
      continue;
    }
    EXPECT_EQ(p.intensity, d.intensity_dram) << p.label;
    EXPECT_EQ(p.flop_rate, d.flop_rate) << p.label;
    EXPECT_EQ(data[i].at("intensity").get<double>(), p.intensity) << p.label;
    EXPECT_EQ(data[i].at("flop_rate").get<double>(), p.flop_rate) << p.label;
    if (p.label.starts_with("nvjet") || p.label.find("xmma_gemm") != std::string::npos) {
      ++gemms;
      EXPECT_EQ(p.bound_label, "compute-bound (tensor)") << p.label;
      EXPECT_GT(p.flop_rate, 100e12) << p.label;  // hundreds of TFLOP/s, not the epilogue's GFLOP/s
      EXPECT_EQ(p.ceiling.rfind("tensor_", 0), 0u) << p.label;
    }
  }
  EXPECT_EQ(gemms, 3);  // the BF16, FP16 and TF32 GEMMs
  EXPECT_EQ(off_chart, 4);
  EXPECT_FALSE(page.roofline_ceiling_source.empty());

  store::Database cnn = store::open_trace(committed_trace("cnn"));
  const ReportPage plain = report_page(cnn, {.timeline = false});
  EXPECT_TRUE(plain.roofline_points.empty());
  EXPECT_TRUE(render::report_page_json(plain).at("roofline").at("points").empty());
  EXPECT_TRUE(std::any_of(plain.notes.begin(), plain.notes.end(),
                          [](const std::string& n) { return n.rfind("no roofline", 0) == 0; }));
}

TEST(DownsampleMinMax, KeepsPeaksDipsAndEnds) {
  std::vector<std::int64_t> t;
  std::vector<double> v;
  for (int i = 0; i < 100'000; ++i) {
    t.push_back(i);
    v.push_back(i % 7);
  }
  v[54'321] = 1000;  // a peak
  v[77'777] = -5;    // a dip
  v.back() = 3.5;
  downsample_min_max(t, v, 2000);
  EXPECT_LE(t.size(), 2000u);
  ASSERT_EQ(t.size(), v.size());
  EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
  EXPECT_EQ(t.front(), 0);
  EXPECT_EQ(t.back(), 99'999);
  EXPECT_EQ(v.back(), 3.5);
  EXPECT_EQ(*std::max_element(v.begin(), v.end()), 1000);
  EXPECT_EQ(*std::min_element(v.begin(), v.end()), -5);
  EXPECT_NE(std::find(t.begin(), t.end(), 54'321), t.end());

  std::vector<std::int64_t> few{1, 2, 3};
  std::vector<double> fv{3, 2, 1};
  downsample_min_max(few, fv, 2000);
  EXPECT_EQ(few.size(), 3u);  // few enough: unchanged
}

TEST(GroupSteps, EachBarIsTheSlowestOfItsRun) {
  std::vector<PageStep> steps(5001);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    steps[i].label = "step " + std::to_string(i);
    steps[i].wall_ns = 100 + static_cast<std::int64_t>(i % 3);
  }
  steps[4000].wall_ns = 999;
  const std::vector<PageStep> bars = group_steps(steps, 2000);
  EXPECT_LE(bars.size(), 2000u);
  std::int64_t n = 0;
  bool slow_kept = false;
  for (const PageStep& b : bars) {
    n += b.steps;
    slow_kept = slow_kept || b.label == "step 4000";
  }
  EXPECT_EQ(n, 5001);
  EXPECT_TRUE(slow_kept);
  EXPECT_EQ(group_steps(std::span<const PageStep>(steps).first(10), 2000).size(), 10u);
}

}  // namespace
}  // namespace gpuscope::test
