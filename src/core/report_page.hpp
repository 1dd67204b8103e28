// ReportPage: everything `gpuscope report` puts on its HTML page, as plain data (issue 19).
//
// Made by analyze::report_page (analyze/report/report_page.hpp) from a trace database; turned into
// one self-contained HTML file by render::write_html_report (render/html_report.hpp), which
// runs no SQL and computes nothing but layout. docs/report.md explains every picture.
//
// Shapes and units:
//   - headline: the Reports `gpuscope stats -r top` prints ("top", "top_kernels"), with the
//     same steady-state scoping and notes;
//   - gpus: per physical GPU, its time over the wall span split into parts that do not
//     overlap and sum to the wall time: kernels (the union of its kernel intervals), copies
//     (memcpys while no kernel ran), memsets (while neither ran), idle (the rest); kernels +
//     copies + memsets is gpu_util's Busy Time;
//   - steps: one per training step (PyTorch's torch_steps when the trace has them, else the
//     outermost NVTX ranges whose text holds "step"), in time order: wall time, the GPU busy
//     time inside it (its process's kernels, clipped to the step, as step_sum) and idle = wall
//     − busy; `steps` > 1 when the bar stands for that many consecutive steps (the slowest of
//     them is shown), so a long run keeps at most kMaxStepBars bars;
//   - tables: Reports exactly as `gpuscope stats -r NAME` makes them (cuda_gpu_kern_sum, ...);
//   - series: counters over time (memory in use, sampled GPU metrics), times in ns relative to
//     base_ns, at most kMaxSeriesPoints points each (min/max kept per bucket);
//   - timeline: the overview the timeline section draws (core/timeline_overview.hpp);
//   - tokens: the generate loops' forward steps (core/token_timeline.hpp), when there are any.
// All times are integer ns; base_ns is the start of the wall span (trace clock).
//
// Plain data (core/: no I/O).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/kernel_point.hpp"
#include "core/machine_profile.hpp"
#include "core/report.hpp"
#include "core/timeline_overview.hpp"
#include "core/token_timeline.hpp"

namespace gpuscope::core {

/// The most bars the step chart shows (more steps: each bar the slowest of a run of them).
inline constexpr std::size_t kMaxStepBars = 2000;
/// The most points a counter series keeps on the page.
inline constexpr std::size_t kMaxSeriesPoints = 2000;

/// One physical GPU's wall time in parts that do not overlap (ns; see the file comment).
struct PageGpuTime {
  std::int64_t gpu_index = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3", "" if unknown
  std::int64_t wall_ns = 0;
  std::int64_t kernel_ns = 0;
  std::int64_t copy_ns = 0;
  std::int64_t memset_ns = 0;
  std::int64_t idle_ns = 0;
};

/// One training step, or the slowest of `steps` consecutive ones.
struct PageStep {
  std::int64_t pid = 0;
  std::string label;          // "step 12", or the NVTX range's text
  std::int64_t start_ns = 0;  // relative to ReportPage::base_ns
  std::int64_t wall_ns = 0;
  std::int64_t gpu_busy_ns = 0;  // union of its process's kernels, clipped to the step
  std::int64_t idle_ns = 0;      // wall − busy
  std::string state;             // "steady", "warm-up" or "outlier" (step_sum's classification)
  std::int64_t steps = 1;        // steps this bar stands for
};

/// A counter over time, downsampled.
struct PageSeries {
  std::string name;                // "GPU 0 memory in use", "SM active % (device 0)"
  std::string unit;                // "bytes", "%", "GB/s", "MHz", ...
  std::string chart;               // which chart it goes on: series with the same chart share axes
  std::vector<std::int64_t> t_ns;  // relative to ReportPage::base_ns, ascending
  std::vector<double> values;      // same length as t_ns
  std::int64_t points_total = 0;   // points before downsampling
};

/// One Python stack sampled while the GPU idled (trace --python-sampling), with the GPU idle time
/// charged to it (gpu_idle_py's rule: each idle gap split among one thread's samples in it).
struct PageIdleStack {
  std::vector<std::string> frames;  // outermost first: "thread 1234", then "train.py:57 <module>", ...
  double idle_ns = 0;
};

struct ReportPage {
  /// "trace": a trace's page (gpuscope report); "diff": two traces compared (gpuscope diff
  /// --html): then `tables` holds the trace_diff Report, `trace_name` "A.sqlite vs B.sqlite",
  /// and the other parts are empty.
  std::string kind = "trace";
  std::string trace_name;    // the trace file's name, for the title
  std::string generator;     // "gpuscope 0.9.0"
  std::int64_t base_ns = 0;  // start of the wall span (absolute, trace clock)
  std::int64_t wall_ns = 0;  // the wall time (as top's Wall Time)

  std::vector<Report> headline;  // "top", "top_kernels"
  std::vector<PageGpuTime> gpus;
  /// "" when gpus cover the wall span; else what they cover ("the steady-state training steps
  /// only (...)": with PyTorch steps, as the headline, each interval clipped to that window).
  std::string gpus_scope;
  std::string steps_source;  // "pytorch", "nvtx" or "" when the trace has no steps
  std::vector<PageStep> steps;
  std::int64_t steps_total = 0;  // steps before grouping into bars
  std::vector<Report> tables;
  std::vector<PageSeries> memory;   // memory in use per GPU (trace --cuda-memory-usage)
  std::vector<PageSeries> metrics;  // sampled GPU metrics (trace --gpu-metrics)
  std::optional<TimelineOverview> timeline;
  /// The kernel names of a `gpuscope kernels` trace (kernel_profiles; each its mean launch),
  /// most time first, as roofline points (core/kernel_point.hpp: the points `gpuscope kernels
  /// --svg` draws), and the ceilings they are placed under: the cached machine profile of
  /// `gpuscope peak` for their GPU ("measured"), else the GPU's theoretical ceilings
  /// ("theoretical"). Empty otherwise.
  std::vector<kernels::KernelPoint> roofline_points;
  MachineProfile roofline_ceilings;
  std::string roofline_ceiling_source;
  /// The generate loops' forward steps (the Tokens section; core/token_timeline.hpp); empty
  /// (generations_total 0) when the trace holds no generate loop: then the page has no section.
  TokenTimeline tokens;
  /// The Python stacks sampled while the GPU idled, on the judged window (the page's flame graph;
  /// analyze/python/gpu_idle_charge.hpp), and that window's GPU idle time over every process;
  /// empty without --python-sampling.
  std::vector<PageIdleStack> python_idle;
  double python_idle_ns = 0;
  /// What the page leaves out and why, one sentence each ("no memory timeline: ...").
  std::vector<std::string> notes;
};

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
