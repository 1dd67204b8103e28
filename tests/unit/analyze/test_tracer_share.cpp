// gpuscope's own tracing cost (analyze/common/tracer_share.hpp) and how launch_overhead, top and
// gpu_util take it out: the helpers, then hand-computed traces through the three reports.
#include "analyze/common/tracer_share.hpp"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analyze/nsys/gpu_util_report.hpp"
#include "analyze/nsys/launch_reports.hpp"
#include "analyze/nsys/top_report.hpp"
#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using stats::Interval;
using test::cell;
using test::col;
using test::has_note;
using test::TraceDb;
using test::warnings;

constexpr const char* kUnknownNote =
    "gpuscope's own cost per launch is unknown for this trace (recorded before calibration); launch times include it";

TEST(TracerShare, ParsesACostOnlyFromAFiniteNonNegativeNumber) {
  EXPECT_EQ(detail::parse_cost_ns("4000"), 4000.0);
  EXPECT_EQ(detail::parse_cost_ns(" 812.5\n"), 812.5);
  EXPECT_EQ(detail::parse_cost_ns("0"), 0.0);
  for (const char* bad : {"", "  ", "abc", "-1", "nan", "inf", "12ns", "1 2", "+5"})
    EXPECT_EQ(detail::parse_cost_ns(bad), std::nullopt) << bad;
  EXPECT_EQ(detail::whole_cost_ns(812.5), 813);
  EXPECT_EQ(detail::whole_cost_ns(std::nullopt), 0);
}

// [0,5000) loses 150 ns; [100,200) is shorter than the cost and becomes empty at its start.
TEST(TracerShare, ShortensCallsAndGaps) {
  const std::vector<Interval> calls = {{0, 5000}, {100, 200}};
  EXPECT_EQ(detail::without_tracer_cost(calls, 150), (std::vector<Interval>{{0, 4850}, {100, 100}}));
  EXPECT_EQ(detail::without_tracer_cost(calls, 0), calls);
  EXPECT_EQ(detail::gap_without_tracer_cost(9000, 4000), 5000);
  EXPECT_EQ(detail::gap_without_tracer_cost(3000, 4000), 0);
}

detail::TracerCost cost(std::optional<double> launch_ns, std::optional<double> api_ns) {
  detail::TracerCost c;
  c.launch_ns = launch_ns;
  c.api_ns = api_ns;
  return c;
}

TEST(TracerShare, TotalTracerTime) {
  EXPECT_EQ(detail::tracer_time_ns(cost(4000.0, 300.0), 10, 2), 40600.0);
  EXPECT_EQ(detail::tracer_time_ns(cost(4000.0, std::nullopt), 10, 2), 40000.0);  // API cost unknown: 0
  EXPECT_EQ(detail::tracer_time_ns(cost(std::nullopt, 300.0), 10, 2), std::nullopt);
  // gpuscope's PyTorch observer: 30 operators x 100 ns + 5 module calls x 200 ns on top.
  detail::TracerCost with_torch = cost(4000.0, 300.0);
  with_torch.torch_op_ns = 100.0;
  with_torch.torch_module_ns = 200.0;
  EXPECT_EQ(detail::tracer_time_ns(with_torch, 10, 2, 30, 5), 44600.0);
  with_torch.torch_module_ns.reset();  // unknown: counts as 0
  EXPECT_EQ(detail::tracer_time_ns(with_torch, 10, 2, 30, 5), 43600.0);
}

// Meta rows the launcher writes; nullopt leaves the trace as recorded before calibration.
void set_tracer_cost(TraceDb& t, std::optional<std::string> launch_cost_ns) {
  if (!launch_cost_ns) return;
  t.add<store::rows::Meta>({{.key = "tracer_launch_cost_ns", .value = *launch_cost_ns},
                            {.key = "tracer_api_cost_ns", .value = "300"},
                            {.key = "tracer_cost_method", .value = "calibrate-tracer: min of 20 blocks"}});
}

// A launch loop, wall [0,100000) (capture window): 10 launch calls of 5 µs, call i
// [10000 i, 10000 i + 5000), each enqueuing a 1 µs full-GPU kernel [10000 i + 5000,
// 10000 i + 6000) on stream 7 of the H100 (1056 blocks of 256 threads → 132 SMs); and
// 2 other API calls (cudaMalloc, cudaFree) at the end.
//   As traced: busy 10000, idle 90000 (90 %), launching while idle 10 × 5000 = 50000
//   → share 55.6 %: launch-bound. Graph saving: 9 gaps of 15000 + 10000 i − 6000 − 10000 i
//   = 9000 → 81000.
//   Without c ns per launch: L' = 10 × [10000 i, 10000 i + 5000 − c).
// n launch calls [period i, period i + call_ns), each launching a full-GPU kernel of kernel_ns
// right when the call returns, on stream 7 of an H100 (1056 blocks of 256 threads → 132 SMs);
// wall [0, 100000) from the capture window.
TraceDb launch_trace(int n, std::int64_t period, std::int64_t call_ns, std::int64_t kernel_ns) {
  TraceDb t;
  t.h100(1);
  t.strings({{1, "k"}, {10, "cudaLaunchKernel"}, {11, "cudaMalloc"}, {12, "cudaFree"}});
  t.add(store::rows::CaptureWindow{.pid = 1, .start_ns = 0, .end_ns = 100000, .reason = "all"});
  for (int i = 0; i < n; ++i) {
    t.api(1, 1, 10, period * i, period * i + call_ns, i + 1);
    store::rows::Kernel k =
        TraceDb::kernel_row(1, 0, 7, i + 1, period * i + call_ns, period * i + call_ns + kernel_ns, 1);
    k.grid_x = 1056;
    k.static_shared_memory = 0;
    k.dynamic_shared_memory = 0;
    t.add(k);
  }
  return t;
}

TraceDb launch_loop(std::optional<std::string> launch_cost_ns) {
  TraceDb t = launch_trace(10, 10000, 5000, 1000);
  t.api(1, 1, 11, 99000, 99500, 100);
  t.api(1, 1, 12, 99500, 99800, 101);
  set_tracer_cost(t, std::move(launch_cost_ns));
  return t;
}

// (a) c = 4000: L' = 10 × 1000 = 10000 → T = 50000 − 10000 = 40000 (80 % of launching while idle).
//   wall' = 60000, idle' = 50000 (83.3 %), launching' = 10000 → share' 20 %: not launch-bound.
//   Graph saving' = 9 × (9000 − 4000) = 45000.
TEST(TracerShare, LaunchLoopIsLaunchBoundOnlyBecauseOfTheTracer) {
  TraceDb t = launch_loop("4000");
  const detail::LaunchBound lb = detail::launch_bound(t.db());
  EXPECT_TRUE(lb.tracer_cost_known);
  EXPECT_EQ(lb.tracer_launch_cost_ns, 4000.0);
  EXPECT_EQ(lb.launch_calls, 10);
  EXPECT_EQ(lb.wall_ns, 100000);
  EXPECT_EQ(lb.idle_ns, 90000);
  EXPECT_EQ(lb.launching_idle_ns, 50000);
  EXPECT_DOUBLE_EQ(lb.launching_share, 50000.0 / 90000.0);
  EXPECT_EQ(lb.tracer_idle_ns, 40000);
  EXPECT_EQ(lb.wall_ns_untraced, 60000);
  EXPECT_EQ(lb.idle_ns_untraced, 50000);
  EXPECT_EQ(lb.launching_idle_ns_untraced, 10000);
  EXPECT_DOUBLE_EQ(lb.idle_share_untraced, 50000.0 / 60000.0);
  EXPECT_DOUBLE_EQ(lb.launching_share_untraced, 0.2);
  EXPECT_EQ(lb.graph_saving_ns, 81000);
  EXPECT_EQ(lb.graph_saving_ns_untraced, 45000);
  EXPECT_EQ(lb.graph_gaps, 9);
  EXPECT_FALSE(lb.launch_bound);
  EXPECT_TRUE(lb.launch_bound_only_with_tracer);

  const Report r = launch_overhead(t.db());
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "CPU Launch Time avg"), 5000.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Tracer Cost avg"), 4000.0);
  EXPECT_EQ(r.columns[col(r, "Tracer Cost avg")].unit, "ns");
  EXPECT_TRUE(warnings(r).empty());
  EXPECT_TRUE(has_note(r, NoteLevel::kInfo,
                       "of the 50 µs the CPU spent in launch calls while the GPU was idle, about 40 µs (80 %) "
                       "is gpuscope's own tracing cost: 4000 ns per launch, calibrate-tracer: min of 20 blocks"));
  EXPECT_TRUE(has_note(
      r, NoteLevel::kInfo,
      "would look launch-bound (share 56 % of the GPU's idle time) but only because of gpuscope's own cost; without it "
      "the share is 20 %: not launch-bound"));
  EXPECT_TRUE(has_note(r, "(81 µs in all); no CUDA graph saving is claimed: the run is not launch-bound"));
  EXPECT_FALSE(has_note(r, kUnknownNote));
}

// (a) with gpuscope's PyTorch observer: 1000 ns per operator call, 2000 ns per module call:
//   operators at 7000 + 10000 i (i = 0..5) and 5500 (while the kernel [5000, 6000) runs: the CPU
//   still reaches the next launch 1000 ns later), a module call at 8000. The loop is CPU-bound
//   and waits nowhere, so each idle gap takes what was paid before it (critical_overhead_ns):
//   gap [0, 5000) the launch at 0: 4000; [6000, 15000) 5500, 7000, 8000 and the launch at 10000:
//   8000; the gaps ending at 25000..65000 an operator and a launch: 5 × 5000; those ending at
//   75000..95000 a launch: 3 × 4000; the last gap [96000, 100000) the two other API calls at
//   99000 and 99500 (300 ns each, tracer_api_cost_ns): 600. Critical = 49600, of which
//   T = 40000 is the launch cost already taken out: P = 9600 (cap: idle − T − launching' =
//   90000 − 40000 − 10000 = 40000). wall' = 100000 − 40000 − 9600 = 50400, idle' = 40400;
//   launching' stays 10000.
TEST(TracerShare, ThePyTorchObserversCostOnTheCriticalPathIsTakenOut) {
  TraceDb t = launch_loop("4000");
  t.add<store::rows::Meta>(
      {{.key = "tracer_torch_op_cost_ns", .value = "1000"}, {.key = "tracer_torch_module_cost_ns", .value = "2000"}});
  t.strings({{20, "aten::add"}, {21, "nn.Module: Linear"}});
  std::int64_t id = 1;
  auto range = [&](std::int64_t text, std::int64_t start) {
    t.add(store::rows::NvtxEvent{.id = id,
                                 .pid = 1,
                                 .tid = 1,
                                 .end_tid = 1,
                                 .style = "PushPop",
                                 .text_id = text,
                                 .start_ns = start,
                                 .end_ns = start + 300});
    return id++;
  };
  for (std::int64_t start : {7000, 17000, 27000, 37000, 47000, 57000, 5500})
    t.add(store::rows::TorchOp{.nvtx_id = range(20, start), .pid = 1, .tid = 1, .name_id = 20});
  t.add(store::rows::TorchModule{.nvtx_id = range(21, 8000), .pid = 1, .path_id = 21});
  const detail::LaunchBound lb = detail::launch_bound(t.db());
  EXPECT_EQ(lb.tracer_idle_ns, 40000);
  EXPECT_EQ(lb.torch_tracer_idle_ns, 9600);
  EXPECT_EQ(lb.wall_ns_untraced, 50400);
  EXPECT_EQ(lb.idle_ns_untraced, 40400);
  EXPECT_EQ(lb.launching_idle_ns_untraced, 10000);
  EXPECT_DOUBLE_EQ(lb.idle_share_untraced, 40400.0 / 50400.0);
  EXPECT_NE(detail::untraced_lead(lb).find(
                "and the 9.6 µs more the GPU waited for while it recorded operator and module calls"),
            std::string::npos)
      << detail::untraced_lead(lb);

  // Without the observer's costs in meta nothing more is taken out.
  TraceDb u = launch_loop("4000");
  EXPECT_EQ(detail::launch_bound(u.db()).torch_tracer_idle_ns, 0);
}

// critical_overhead_ns alone. Wall [0, 100), GPU busy [10, 60) and [70, 100): gaps [0, 10) and
// [60, 70). A GPU-bound stretch: 30 ns paid at 20..40 while the GPU runs, then the CPU waits in a
// synchronize that ends at 55: none of it lengthened the run (dropped); 4 ns paid at 58 after the
// wait: the gap [60, 70) takes them. Without the wait the 30 ns would reach that gap: 10 (its length).
// A CPU-bound stretch: 12 ns paid at 2: the gap [0, 10) takes 10, the rest waits for the next
// gap (the CPU stays that much behind), [60, 70) takes 2: 12.
TEST(TracerShare, OnlyCostTheGpuWaitedForIsCritical) {
  const Interval wall{0, 100};
  const std::vector<Interval> busy = {{10, 60}, {70, 100}};
  const std::vector<detail::Overhead> gpu_bound = {{20, 10.0}, {30, 10.0}, {40, 10.0}, {58, 4.0}};
  EXPECT_EQ(detail::critical_overhead_ns(gpu_bound, wall, busy, {55}), 4);
  EXPECT_EQ(detail::critical_overhead_ns(gpu_bound, wall, busy, {}), 10);
  EXPECT_EQ(detail::critical_overhead_ns({{2, 12.0}}, wall, busy, {}), 12);
  EXPECT_EQ(detail::critical_overhead_ns({{2, 12.0}}, wall, busy, {55}), 10);  // the wait drops the rest
  EXPECT_EQ(detail::critical_overhead_ns({}, wall, busy, {55}), 0);
}

// (a) in top: launch-bound does not fire (an info note says why); with the cost out the
// CPU spends 80 % of the idle time elsewhere, so CPU-starved does: busy' = 10000 / 60000.
TEST(TracerShare, TopDoesNotCallTheLoopLaunchBoundBecauseOfTheTracer) {
  TraceDb t = launch_loop("4000");
  const Report r = top(t.db()).at(0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "GPU Busy"), 10.0);  // as traced
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Launch-Bound"), 20.0);
  EXPECT_EQ(warnings(r), std::vector<std::string>{"CPU-starved"});
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning,
                       "CPU-starved: without gpuscope's own cost of 4000 ns per launch, the GPU was idle 83 % of "
                       "the wall time, yet the CPU was inside launch calls during only 20 % of that idle time"));
  EXPECT_FALSE(has_note(r, "could save"));  // not launch-bound: no graph saving claimed
  EXPECT_TRUE(has_note(r, NoteLevel::kInfo,
                       "not launch-bound once gpuscope's own cost (4000 ns per launch) is taken out: as traced the "
                       "CPU was inside launch calls during 56 % of the GPU's idle time, without it 20 %"));
}

// (b) c = 500: L' = 10 × 4500 = 45000 → T = 5000; wall' = 95000, idle' = 85000 (89.5 %),
//   launching' = 45000 → share' 52.9 %: still launch-bound. Graph saving' = 9 × 8500 = 76500.
TEST(TracerShare, SmallTracerCostKeepsTheVerdict) {
  TraceDb t = launch_loop("500");
  const detail::LaunchBound lb = detail::launch_bound(t.db());
  EXPECT_EQ(lb.tracer_idle_ns, 5000);
  EXPECT_EQ(lb.wall_ns_untraced, 95000);
  EXPECT_EQ(lb.idle_ns_untraced, 85000);
  EXPECT_EQ(lb.launching_idle_ns_untraced, 45000);
  EXPECT_DOUBLE_EQ(lb.idle_share_untraced, 85000.0 / 95000.0);
  EXPECT_DOUBLE_EQ(lb.launching_share_untraced, 45000.0 / 85000.0);
  EXPECT_EQ(lb.graph_saving_ns_untraced, 76500);
  EXPECT_TRUE(lb.launch_bound);
  EXPECT_FALSE(lb.launch_bound_only_with_tracer);

  const Report lo = launch_overhead(t.db());
  EXPECT_DOUBLE_EQ(cell<double>(lo, 0, "Tracer Cost avg"), 500.0);
  EXPECT_TRUE(has_note(lo, NoteLevel::kWarning,
                       "launch-bound: without gpuscope's own cost of 500 ns per launch, the GPU was idle 89 % of "
                       "the wall time and the CPU was inside launch calls during 53 % of that idle time"));
  EXPECT_TRUE(has_note(lo,
                       "time a CUDA graph could save: about 76.5 µs without gpuscope's own cost (81 µs of "
                       "gaps as traced), at most the GPU's idle time"));
  EXPECT_TRUE(has_note(lo, "about 5 µs (10 %) is gpuscope's own tracing cost: 500 ns per launch"));
  EXPECT_FALSE(has_note(lo, "would look launch-bound"));

  const Report r = top(t.db()).at(0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Launch-Bound"), 45000.0 / 85000.0 * 100.0);
  EXPECT_EQ(warnings(r), std::vector<std::string>{"launch-bound"});
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning,
                       "launch-bound: without gpuscope's own cost of 500 ns per launch, the GPU was idle 89 % of "
                       "the wall time and the CPU was inside launch calls during 53 % of that idle time (45 µs); a "
                       "CUDA graph could save up to 76.5 µs"));
}

// (c) No meta keys: the traced numbers throughout, the verdict as before, one more note.
TEST(TracerShare, UnknownCostChangesNothingButANote) {
  TraceDb t = launch_loop(std::nullopt);
  const detail::LaunchBound lb = detail::launch_bound(t.db());
  EXPECT_FALSE(lb.tracer_cost_known);
  EXPECT_EQ(lb.tracer_launch_cost_ns, 0.0);
  EXPECT_EQ(lb.tracer_idle_ns, 0);
  EXPECT_EQ(lb.wall_ns_untraced, lb.wall_ns);
  EXPECT_EQ(lb.idle_ns_untraced, lb.idle_ns);
  EXPECT_EQ(lb.launching_idle_ns_untraced, lb.launching_idle_ns);
  EXPECT_EQ(lb.graph_saving_ns_untraced, lb.graph_saving_ns);
  EXPECT_EQ(lb.idle_share_untraced, lb.idle_share);
  EXPECT_EQ(lb.launching_share_untraced, lb.launching_share);
  EXPECT_TRUE(lb.launch_bound);
  EXPECT_FALSE(lb.launch_bound_only_with_tracer);

  const Report lo = launch_overhead(t.db());
  EXPECT_TRUE(std::holds_alternative<std::monostate>(lo.rows.at(0)[col(lo, "Tracer Cost avg")]));
  ASSERT_EQ(lo.notes.size(), 5u);
  EXPECT_EQ(lo.notes[0].text.rfind("wall 100 µs, GPU idle 90 µs, CPU launching while the GPU was idle "
                                   "50 µs (launch-bound share 56 %)",
                                   0),
            0u)
      << lo.notes[0].text;
  EXPECT_EQ(lo.notes[1].text, kUnknownNote);
  EXPECT_EQ(lo.notes[2].text.rfind("time a CUDA graph could save: about 81 µs, at most the GPU's idle time (9 gaps", 0),
            0u)
      << lo.notes[2].text;
  EXPECT_EQ(lo.notes[4].level, NoteLevel::kWarning);
  EXPECT_EQ(lo.notes[4].text.rfind("launch-bound: the GPU was idle 90 % of the wall time and the CPU was inside "
                                   "launch calls during 56 % of that idle time",
                                   0),
            0u)
      << lo.notes[4].text;

  const Report r = top(t.db()).at(0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Launch-Bound"), 50000.0 / 90000.0 * 100.0);
  EXPECT_EQ(warnings(r), std::vector<std::string>{"launch-bound"});
  EXPECT_TRUE(has_note(r, NoteLevel::kWarning,
                       "launch-bound: the GPU was idle 90 % of the wall time and the CPU was inside launch calls "
                       "during 56 % of that idle time (50 µs); a CUDA graph could save up to 81 µs"));
  EXPECT_FALSE(has_note(r, "gpuscope's own"));
  EXPECT_FALSE(has_note(gpu_util(t.db()), "gpuscope's own"));
}

// 10 launch calls × 4000 ns + 2 other API calls × 300 ns = 40600 ns, 40.6 % of the wall.
TEST(TracerShare, GpuUtilNotesTheTracerShareOfTheWallTime) {
  TraceDb t = launch_loop("4000");
  const Report r = gpu_util(t.db());
  EXPECT_TRUE(warnings(r).empty());
  EXPECT_TRUE(has_note(r, NoteLevel::kInfo,
                       "gpuscope's own tracing cost: about 40.6 µs (41 % of the wall time) = 10 launch calls x "
                       "4000 ns + 2 other API calls x 300 ns (calibrate-tracer: min of 20 blocks); the times above "
                       "include it"));
}

// Wall [0,100000). Calls of 9000 ns [33000 i, 33000 i + 9000) each launch a full-GPU kernel
// of 15000 ns right after, i = 0..2. As traced: busy 45000 (45 %: CPU-starved), idle 55000,
// launching while idle 27000 (49 %: not launch-bound). c = 4000 → T = 12000, wall' = 88000,
// busy' = 45000 / 88000 = 51 %: not CPU-starved, so nothing fires.
TEST(TracerShare, CpuStarvedOnlyBecauseOfTheTracerDoesNotFire) {
  TraceDb t = launch_trace(3, 33000, 9000, 15000);
  set_tracer_cost(t, "4000");

  const Report r = top(t.db()).at(0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "GPU Busy"), 45.0);
  EXPECT_DOUBLE_EQ(cell<double>(r, 0, "Launch-Bound"), 15000.0 / 43000.0 * 100.0);
  EXPECT_TRUE(warnings(r).empty());
  EXPECT_TRUE(
      has_note(r, NoteLevel::kInfo,
               "no diagnosis fired: GPU busy 45 % of the wall time, CPU in launch calls 35 % of the GPU's idle time"));
  EXPECT_TRUE(has_note(r, NoteLevel::kInfo,
                       "not CPU-starved once gpuscope's own cost (4000 ns per launch) is taken out: GPU busy 45 % "
                       "of the wall time as traced, 51 % without it"));
  EXPECT_FALSE(has_note(r, "not launch-bound once"));
}

}  // namespace
}  // namespace gpuscope::analyze
