#include "analyze/report/report_page.hpp"

#include <algorithm>
#include <cctype>
#include <exception>
#include <future>
#include <map>
#include <optional>
#include <utility>

#include "analyze/common/event_budget.hpp"
#include "analyze/common/gpu_busy.hpp"
#include "analyze/common/gpu_index.hpp"
#include "analyze/kernels/kernel_reports.hpp"
#include "analyze/llm/llm_token_timeline.hpp"
#include "analyze/python/gpu_idle_charge.hpp"
#include "analyze/pytorch/pytorch_reports.hpp"
#include "analyze/report_registry.hpp"
#include "analyze/timeline/judged_window.hpp"
#include "analyze/timeline/timeline.hpp"
#include "analyze/common/trace_filter.hpp"
#include "core/saturating.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "core/utf8.hpp"
#include "core/version.hpp"
#include "store/database.hpp"
#include "store/machine_profile_json.hpp"
#include "store/trace.hpp"

namespace gpuscope::analyze {
namespace {

using store::Database;
using store::Statement;

// The GPU operations of the trace, held once: per physical GPU by kind (the per-GPU split).
struct GpuOps {
  std::map<std::int64_t, std::array<std::vector<stats::Interval>, 3>> per_gpu;  // kernels, copies, memsets
};

GpuOps read_gpu_ops(Database& db, const detail::GpuIndexMap& gpus) {
  // Each operation's span once per GPU (bytes per operation measured as gpu_busy's, rounded up).
  constexpr std::int64_t kBytesPerOp = 40;
  check_event_budget({"report (per-GPU time, steps)", "kernels, memcpys and memsets",
                      db.query_int("SELECT (SELECT COUNT(*) FROM kernels) + (SELECT COUNT(*) FROM memcpys) + "
                                   "(SELECT COUNT(*) FROM memsets)")
                          .value_or(0),
                      kBytesPerOp, ""});
  GpuOps ops;
  Statement st = db.prepare(
      "SELECT pid, device_id, start_ns, end_ns, 0 FROM kernels UNION ALL "
      "SELECT pid, device_id, start_ns, end_ns, 1 FROM memcpys UNION ALL "
      "SELECT pid, device_id, start_ns, end_ns, 2 FROM memsets");
  while (st.step()) {
    const std::int64_t pid = st.column_int(0);
    const stats::Interval iv{st.column_int(2), st.column_int(3)};
    const auto kind = static_cast<std::size_t>(st.column_int(4));
    ops.per_gpu[gpus.index(pid, st.column_int(1))][kind].push_back(iv);
  }
  return ops;
}

std::int64_t length(const std::vector<stats::Interval>& disjoint) {
  std::int64_t n = 0;
  for (const stats::Interval& i : disjoint) core::add_span(n, i.end_ns, i.start_ns);
  return n;
}

// Clipped to `window` (absolute) when given, the wall then being the window's length.
std::vector<PageGpuTime> gpu_times(Database& db, GpuOps& ops, std::int64_t wall_ns, const detail::GpuIndexMap& gpus,
                                   const std::optional<std::pair<std::int64_t, std::int64_t>>& window) {
  std::vector<PageGpuTime> out;
  if (window) {
    wall_ns = std::max<std::int64_t>(0, window->second - window->first);
    for (auto& [gpu, kinds] : ops.per_gpu)
      for (auto& v : kinds) {
        std::vector<stats::Interval> in;
        for (const stats::Interval& i : v) {
          const stats::Interval c{std::max(i.start_ns, window->first), std::min(i.end_ns, window->second)};
          if (c.start_ns < c.end_ns) in.push_back(c);
        }
        v = std::move(in);
      }
  }
  for (auto& [gpu, kinds] : ops.per_gpu) {
    PageGpuTime g;
    g.gpu_index = gpu;
    g.wall_ns = wall_ns;
    // Kernels first, then what copies add to them, then what memsets add to both.
    std::vector<stats::Interval> k = stats::interval_union(kinds[0]);
    g.kernel_ns = length(k);
    std::vector<stats::Interval> kc = std::move(k);
    kc.insert(kc.end(), kinds[1].begin(), kinds[1].end());
    kc = stats::interval_union(std::move(kc));
    g.copy_ns = length(kc) - g.kernel_ns;
    kc.insert(kc.end(), kinds[2].begin(), kinds[2].end());
    const std::int64_t busy = length(stats::interval_union(std::move(kc)));
    g.memset_ns = busy - g.kernel_ns - g.copy_ns;
    g.idle_ns = std::max<std::int64_t>(0, wall_ns - busy);
    for (auto& v : kinds) std::vector<stats::Interval>().swap(v);  // freed as we go
    out.push_back(std::move(g));
  }
  Statement names = db.prepare("SELECT pid, device_id, name FROM devices WHERE name IS NOT NULL");
  while (names.step()) {
    const std::int64_t gpu = gpus.index(names.column_int(0), names.column_int(1));
    for (PageGpuTime& g : out)
      if (g.gpu_index == gpu) g.name = core::repair_utf8(names.column_text(2));
  }
  return out;
}

const char* state_name(StepFacts::Kind k) {
  switch (k) {
    case StepFacts::Kind::kWarmup:
      return "warm-up";
    case StepFacts::Kind::kOutlier:
      return "outlier";
    case StepFacts::Kind::kSteady:
      break;
  }
  return "steady";
}

PageStep page_step(const StepFacts& f, std::int64_t base_ns) {
  PageStep s;
  s.pid = f.pid;
  s.label = f.label;
  s.start_ns = core::sat_sub(f.start_ns, base_ns);
  s.wall_ns = std::max<std::int64_t>(0, core::sat_sub(f.end_ns, f.start_ns));
  s.gpu_busy_ns = f.gpu_busy_ns;
  s.idle_ns = std::max<std::int64_t>(0, s.wall_ns - f.gpu_busy_ns);
  s.state = state_name(f.kind);
  return s;
}

// "SM active % (device 0)" → "%": the word before " (device".
std::string metric_unit(std::string_view track) {
  std::string_view head = track.substr(0, track.find(" (device"));
  const std::size_t sp = head.rfind(' ');
  return std::string(sp == std::string_view::npos ? std::string_view() : head.substr(sp + 1));
}

}  // namespace

void downsample_min_max(std::vector<std::int64_t>& t, std::vector<double>& v, std::size_t max_points) {
  const std::size_t n = t.size();
  if (n <= max_points || max_points < 4) return;
  const std::size_t buckets = max_points / 2 - 1;  // leaves room for the first and last point
  std::vector<std::int64_t> ot{t.front()};
  std::vector<double> ov{v.front()};
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t lo = 1 + (n - 2) * b / buckets, hi = 1 + (n - 2) * (b + 1) / buckets;
    if (lo >= hi) continue;
    std::size_t mn = lo, mx = lo;
    for (std::size_t i = lo; i < hi; ++i) {
      if (v[i] < v[mn]) mn = i;
      if (v[i] > v[mx]) mx = i;
    }
    const std::size_t a = std::min(mn, mx), c = std::max(mn, mx);
    ot.push_back(t[a]);
    ov.push_back(v[a]);
    if (c != a) {
      ot.push_back(t[c]);
      ov.push_back(v[c]);
    }
  }
  ot.push_back(t.back());
  ov.push_back(v.back());
  t = std::move(ot);
  v = std::move(ov);
}

std::vector<PageStep> group_steps(std::span<const PageStep> steps, std::size_t max_bars) {
  if (max_bars == 0 || steps.size() <= max_bars) return {steps.begin(), steps.end()};
  const std::size_t run = (steps.size() + max_bars - 1) / max_bars;
  std::vector<PageStep> out;
  for (std::size_t b = 0; b < steps.size(); b += run) {
    const std::size_t e = std::min(steps.size(), b + run);
    std::size_t slow = b;
    for (std::size_t i = b; i < e; ++i)
      if (steps[i].wall_ns > steps[slow].wall_ns) slow = i;
    out.push_back(steps[slow]);
    out.back().steps = static_cast<std::int64_t>(e - b);
  }
  return out;
}

namespace {

// The headline (`stats -r top`) and the judged tables, on the judged window (judged_window.hpp),
// each with its note, as `gpuscope stats` gives them.
struct Judged {
  std::vector<Report> headline;
  std::map<std::string_view, std::vector<Report>> tables;
  std::vector<PageIdleStack> python_idle;
  double python_idle_ns = 0;
};

// The flame graph's stacks: each (thread, stack) sampled in a GPU idle gap with the idle time
// charged to it (gpu_idle_charge.hpp), frames outermost first under a "thread TID" root
// ("process PID, thread TID" when several processes were sampled).
void python_idle_stacks(Database& db, Judged& out) {
  if (detail::py_sample_count(db) == 0) return;
  detail::GpuIdleCharges c = detail::gpu_idle_charges(db);
  for (const auto& [pid, gaps] : c.gaps) out.python_idle_ns += static_cast<double>(gaps.idle_ns);
  const bool several = c.gaps.size() > 1;
  for (const auto& [key, ns] : c.stacks) {
    const auto& [thread, stack_id] = key;
    PageIdleStack s;
    s.idle_ns = ns;
    s.frames.push_back((several ? "process " + std::to_string(thread.first) + ", " : std::string()) + "thread " +
                       std::to_string(thread.second));
    const detail::SampleStack& stack = c.frames.stack(stack_id);
    if (stack.frames.empty()) s.frames.emplace_back("(no Python frame)");
    for (auto it = stack.frames.rbegin(); it != stack.frames.rend(); ++it)
      s.frames.push_back(core::repair_utf8(c.frames.site(*it).where()));
    out.python_idle.push_back(std::move(s));
  }
}

Judged judged_reports(Database& db, const JudgedWindow& window) {
  std::optional<FilteredTrace> scoped = judged_trace(db, window);
  Database& on = scoped ? scoped->db : db;
  auto noted = [&](std::vector<Report> rs) {
    if (!window.note.empty())
      for (Report& r : rs) r.add_note(NoteLevel::kInfo, window.note);
    return rs;
  };
  Judged out;
  out.headline = noted(run_report(on, "top"));
  for (std::string_view name : kTableReports)
    if (is_judged_report(name)) out.tables[name] = noted(run_report(on, name));
  python_idle_stacks(on, out);
  return out;
}

// The kernels of a `gpuscope kernels` trace on the roofline: the points `gpuscope kernels --svg`
// draws (analyze::roofline_points, tensor-core FLOPs counted with the default calibration as
// `gpuscope kernels` counts them), under the cached measured ceilings of their GPU.
void add_roofline(Database& db, ReportPage& page) {
  if (!db.has_table("kernel_profiles") || db.query_int("SELECT COUNT(*) FROM kernel_profiles").value_or(0) == 0) {
    page.notes.push_back(
        "no roofline: the trace holds no hardware counters (gpuscope kernels -o NAME -- CMD records them; then "
        "gpuscope report NAME.sqlite)");
    return;
  }
  std::optional<MachineProfile> profile;
  std::vector<std::string> warnings;
  if (const std::string uuid = profiled_gpu_uuid(db); !uuid.empty()) {
    try {
      profile = store::load_cached_profile(uuid, &warnings);
    } catch (const store::ProfileError&) {  // unreadable cache: theoretical ceilings instead
    }
  }
  KernelReportOptions ro;
  ro.profile = profile ? &*profile : nullptr;
  const KernelAnalysis a = analyze_kernels(db, ro);
  page.roofline_points = roofline_points(a, false);
  for (kernels::KernelPoint& p : page.roofline_points) p.label = core::repair_utf8(p.label);
  page.roofline_ceilings = a.ceilings;
  page.roofline_ceiling_source = a.ceiling_source;
  if (!profile)
    page.notes.push_back(
        "roofline under the GPU's theoretical ceilings: no machine profile of this GPU is cached (gpuscope peak "
        "measures and caches its real ceilings)");
}

// The tables in kTableReports' order, each kept when it has rows (cuda_gpu_kern_sum always).
void add_tables(ReportPage& page, std::map<std::string_view, std::vector<Report>>& tables) {
  for (std::string_view name : kTableReports)
    for (Report& r : tables[name])
      if (!r.rows.empty() || name == "cuda_gpu_kern_sum") page.tables.push_back(std::move(r));
}

// Everything but the headline and the timeline: where the time goes, the tables, the series.
void time_tables_series(Database& db, ReportPage& page, const JudgedWindow& judged,
                        std::map<std::string_view, std::vector<Report>>& tables) {
  // Where the time goes: per GPU (over the headline's window), then per step.
  const detail::GpuIndexMap gpus = detail::GpuIndexMap::load(db);
  GpuOps ops = read_gpu_ops(db, gpus);
  page.gpus = gpu_times(db, ops, page.wall_ns, gpus, judged.window);
  ops = {};
  std::vector<PageStep> steps;
  for (const StepFacts& f : judged.steps) steps.push_back(page_step(f, page.base_ns));
  if (!steps.empty())
    page.steps_source = judged.source == StepSource::kPytorch ? "pytorch"
                        : judged.source == StepSource::kNvtx  ? "nvtx"
                                                              : "iterations";
  page.steps_total = static_cast<std::int64_t>(steps.size());
  page.steps = group_steps(steps, core::kMaxStepBars);
  if (steps.empty())
    page.notes.push_back(
        "no steps: the trace has no PyTorch training steps, no NVTX range named like a step and no repeating GPU "
        "work (docs/steady-state.md)");

  // Tables: the stats reports, exactly (the judged ones on the judged window, as stats).
  for (std::string_view name : kTableReports)
    if (!is_judged_report(name)) tables[name] = run_report(db, name);

  // The generate loops' steps (the Tokens section), as llm_sum finds them.
  page.tokens = token_timeline(db);

  // Counters over time.
  TraceTimeline tl(db);
  std::map<std::int64_t, PageSeries> memory;
  tl.memory([&](const MemoryCounterEvent& e) {
    PageSeries& s = memory[e.gpu_index];
    s.t_ns.push_back(core::sat_sub(e.ts_ns, page.base_ns));
    s.values.push_back(static_cast<double>(e.in_use_bytes));
  });
  for (auto& [gpu, s] : memory) {
    s.name = "GPU " + std::to_string(gpu) + " memory in use";
    s.unit = "bytes";
    s.chart = "memory";
    s.points_total = static_cast<std::int64_t>(s.t_ns.size());
    downsample_min_max(s.t_ns, s.values, core::kMaxSeriesPoints);
    page.memory.push_back(std::move(s));
  }
  if (page.memory.empty())
    page.notes.push_back("no memory timeline: the trace was recorded without --cuda-memory-usage");
  std::map<std::string, PageSeries, std::less<>> metrics;
  tl.gpu_metric_counters([&](const GpuMetricCounterEvent& e) {
    auto it = metrics.find(e.track);
    if (it == metrics.end()) it = metrics.emplace(std::string(e.track), PageSeries{}).first;
    it->second.t_ns.push_back(core::sat_sub(e.ts_ns, page.base_ns));
    it->second.values.push_back(e.value);
  });
  for (auto& [track, s] : metrics) {
    s.name = track;
    s.unit = metric_unit(track);
    s.chart = s.unit.empty() ? std::string("value") : s.unit;
    s.points_total = static_cast<std::int64_t>(s.t_ns.size());
    downsample_min_max(s.t_ns, s.values, core::kMaxSeriesPoints);
    page.metrics.push_back(std::move(s));
  }
  if (page.metrics.empty())
    page.notes.push_back("no GPU metrics over time: the trace was recorded without --gpu-metrics");
  add_roofline(db, page);
}

}  // namespace

ReportPage report_page(Database& db, const ReportPageOptions& options) {
  ReportPage page;
  page.trace_name = core::repair_utf8(options.trace_name);
  page.generator = std::string("gpuscope ") + kVersion;
  const stats::Interval wall = detail::wall_span(db);
  page.base_ns = wall.start_ns;
  page.wall_ns = std::max<std::int64_t>(0, core::sat_sub(wall.end_ns, wall.start_ns));
  // The headline, the judged tables and the per-GPU split judge one window (judged_window.hpp).
  const JudgedWindow judged = judged_window(db, options.whole_run);
  page.gpus_scope = judged.note;

  // A trace file is read by three connections at once (the headline, the rest, the
  // timeline): the parts share nothing but the read-only file.
  const bool parallel = options.parallel && !db.path().empty() && db.path() != ":memory:";
  std::map<std::string_view, std::vector<Report>> tables;
  std::future<void> rest;
  std::future<core::TimelineOverview> timeline;
  if (parallel) {
    if (options.timeline)
      timeline = std::async(std::launch::async, [&] {
        store::Database conn = store::open_trace(db.path());
        return timeline_overview(conn, options.timeline_options);
      });
    rest = std::async(std::launch::async, [&] {
      store::Database conn = store::open_trace(db.path());
      time_tables_series(conn, page, judged, tables);
    });
  } else {
    time_tables_series(db, page, judged, tables);
    if (options.timeline) page.timeline = timeline_overview(db, options.timeline_options);
  }
  std::exception_ptr failed;
  Judged on_window;
  try {
    on_window = judged_reports(db, judged);
    page.headline = std::move(on_window.headline);
    page.python_idle = std::move(on_window.python_idle);
    page.python_idle_ns = on_window.python_idle_ns;
  } catch (...) {
    failed = std::current_exception();
  }
  // Every started part is waited for before anything is thrown (they refer to page and db).
  for (auto* f : {&rest}) {
    try {
      if (f->valid()) f->get();
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  }
  try {
    if (timeline.valid()) page.timeline = timeline.get();
  } catch (...) {
    if (!failed) failed = std::current_exception();
  }
  if (failed) std::rethrow_exception(failed);
  for (auto& [name, rs] : on_window.tables) tables[name] = std::move(rs);
  add_tables(page, tables);
  return page;
}

}  // namespace gpuscope::analyze
