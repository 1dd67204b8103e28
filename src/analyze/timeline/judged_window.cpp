#include "analyze/timeline/judged_window.hpp"

#include <algorithm>
#include <regex>
#include <tuple>

#include "analyze/common/gpu_busy.hpp"
#include "analyze/timeline/iterations.hpp"
#include "core/saturating.hpp"
#include "core/units.hpp"
#include "core/utf8.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using store::Database;
using store::Statement;
using Window = std::optional<std::pair<std::int64_t, std::int64_t>>;

// The iterations of every process as steps: each from its first GPU start to the next one's.
std::vector<StepFacts> iteration_steps(const std::vector<ProcessIterations>& found) {
  std::vector<StepFacts> out;
  for (const ProcessIterations& p : found) {
    if (!p.detection.found) continue;
    const auto& its = p.detection.found->iterations;
    for (std::size_t i = 0; i < its.size(); ++i) {
      StepFacts f;
      f.pid = p.pid;
      f.step = its[i].index;
      f.start_ns = its[i].start_ns;
      const bool next = i + 1 < its.size() && its[i + 1].start_ns > its[i].start_ns;
      f.end_ns = next ? its[i + 1].start_ns : its[i].end_ns;
      f.label = "iteration " + std::to_string(its[i].index);
      f.kind = its[i].kind == core::IterationKind::kSteady   ? StepFacts::Kind::kSteady
               : its[i].kind == core::IterationKind::kWarmup ? StepFacts::Kind::kWarmup
                                                             : StepFacts::Kind::kOutlier;
      out.push_back(std::move(f));
    }
  }
  return out;
}

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "(47 launches each, thread 1234)" of the process whose iterations hold the most steady steps.
std::string iterations_detail(const std::vector<ProcessIterations>& found) {
  const core::IterationStructure* best = nullptr;
  for (const ProcessIterations& p : found)
    if (p.detection.found && (!best || p.detection.found->steady > best->steady)) best = &*p.detection.found;
  if (!best) return {};
  return " (" + plural(best->unit_launches, "launch", "launches") + " each, " +
         (best->lane >= 0 ? "thread " + std::to_string(best->lane) : "stream " + std::to_string(-1 - best->lane)) + ")";
}

// Why no iterations were found, from the process with the most launches.
std::string no_repeat_reason(const std::vector<ProcessIterations>& found) {
  const ProcessIterations* most = nullptr;
  for (const ProcessIterations& p : found)
    if (!most || p.detection.launches > most->detection.launches) most = &p;
  if (!most) return "no GPU work";
  const std::string n = plural(most->detection.launches, "launch", "launches");
  switch (most->detection.why) {
    case core::NoIterations::kTooFewLaunches:
      return "too few launches to repeat (" + n + ")";
    case core::NoIterations::kNoRepeat:
      return "no kernel recurs at a regular distance in " + n;
    case core::NoIterations::kTooFewRepeats:
      return "the GPU work repeats fewer than 3 times alike in " + n;
  }
  return {};
}

std::string since_start(const std::pair<std::int64_t, std::int64_t>& w, std::int64_t base) {
  return units::duration_ns(core::sat_sub(w.first, base)) + " to " + units::duration_ns(core::sat_sub(w.second, base)) +
         " since the start";
}

std::string steps_note(const JudgedWindow& j, std::int64_t base, const std::string& what) {
  std::size_t steady = 0, warmup = 0, outliers = 0;
  for (const StepFacts& f : j.steps) {
    steady += f.kind == StepFacts::Kind::kSteady;
    warmup += f.kind == StepFacts::Kind::kWarmup;
    outliers += f.kind == StepFacts::Kind::kOutlier;
  }
  std::string left;
  if (warmup > 0) left = std::to_string(warmup) + " warm-up";
  if (outliers > 0) left += (left.empty() ? "" : " and ") + plural(outliers, "outlier", "outliers");
  return "judged the steady state: " + std::to_string(steady) + " of " + std::to_string(j.steps.size()) + " " + what +
         ", " + since_start(*j.window, base) + (left.empty() ? "" : "; " + left + " left out") +
         " (step_sum lists them; --whole-run for the whole process)";
}

}  // namespace

bool is_judged_report(std::string_view report) {
  return std::find(kJudgedReports.begin(), kJudgedReports.end(), report) != kJudgedReports.end();
}

bool is_step_range_name(std::string_view text) {
  static const std::regex re(kStepRangePattern, std::regex::ECMAScript | std::regex::icase);
  return std::regex_match(text.begin(), text.end(), re);
}

const char* step_source_name(StepSource s) {
  switch (s) {
    case StepSource::kPytorch:
      return "PyTorch training steps";
    case StepSource::kNvtx:
      return "NVTX step ranges";
    case StepSource::kIterations:
      return "iterations found in the GPU work";
    case StepSource::kNone:
      break;
  }
  return "none";
}

std::vector<StepFacts> nvtx_step_facts(Database& db) {
  std::string sql =
      "SELECT n.pid, n.tid, s.value, n.start_ns, n.end_ns FROM nvtx_events n JOIN strings s ON s.id = n.text_id "
      "WHERE n.end_ns IS NOT NULL AND n.style != 'Mark'";
  if (db.has_table("torch_ops")) sql += " AND n.id NOT IN (SELECT nvtx_id FROM torch_ops)";
  if (db.has_table("torch_modules")) sql += " AND n.id NOT IN (SELECT nvtx_id FROM torch_modules)";
  sql += " ORDER BY n.pid, n.tid, n.start_ns, n.end_ns DESC";
  std::vector<StepFacts> out;
  Statement st = db.prepare(sql);
  std::int64_t pid = -1, tid = 0, outer_end = 0;
  while (st.step()) {
    const std::string text = st.column_text(2);
    if (!is_step_range_name(text)) continue;
    StepFacts f;
    f.pid = st.column_int(0);
    const std::int64_t t = st.column_int(1);
    f.start_ns = st.column_int(3);
    f.end_ns = st.column_int(4);
    if (pid == f.pid && tid == t && f.start_ns < outer_end) continue;  // inside the thread's last outermost one
    pid = f.pid;
    tid = t;
    outer_end = f.end_ns;
    f.label = core::repair_utf8(text);
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(), [](const StepFacts& a, const StepFacts& b) {
    return std::tie(a.pid, a.start_ns) < std::tie(b.pid, b.start_ns);
  });
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i].step = i > 0 && out[i - 1].pid == out[i].pid ? out[i - 1].step + 1 : 1;
  measure_steps(db, out);
  classify_steps_per_process(out);
  return out;
}

JudgedWindow judged_window(Database& db, bool whole_run) {
  JudgedWindow j;
  const std::int64_t base = detail::wall_span(db).start_ns;
  // (a), (b): step marks; the first with a steady state wins.
  std::vector<StepFacts> first_found;
  StepSource first_source = StepSource::kNone;
  for (StepSource s : {StepSource::kPytorch, StepSource::kNvtx}) {
    std::vector<StepFacts> steps = s == StepSource::kPytorch ? step_facts(db) : nvtx_step_facts(db);
    if (steps.empty()) continue;
    const Window w = steady_window(steps);
    if (w) {
      j.source = s;
      j.steps = std::move(steps);
      j.window = w;
      if (!whole_run)
        j.note = steps_note(j, base,
                            s == StepSource::kPytorch ? "PyTorch training steps (optimizer.step() marks)"
                                                      : "NVTX ranges named like steps");
      if (whole_run) j.window.reset();
      return j;
    }
    if (first_found.empty()) first_found = std::move(steps), first_source = s;
  }
  // (c) the iterations of the GPU work.
  const std::vector<ProcessIterations> found = trace_iterations(db);
  std::vector<StepFacts> its = iteration_steps(found);
  measure_steps(db, its);
  if (Window w = its.empty() ? std::nullopt : steady_window(its)) {
    j.source = StepSource::kIterations;
    j.steps = std::move(its);
    j.window = w;
    if (!whole_run) j.note = steps_note(j, base, "iterations found in the GPU work" + iterations_detail(found));
    if (whole_run) j.window.reset();
    return j;
  }
  // (d) none: from the first GPU work on. Steps without a steady state are still listed.
  j.source = first_source;
  j.steps = std::move(first_found);
  if (whole_run) return j;
  const std::optional<std::int64_t> first_gpu = db.query_int(
      "SELECT MIN(t) FROM (SELECT MIN(start_ns) AS t FROM kernels UNION ALL SELECT MIN(start_ns) FROM memcpys "
      "UNION ALL SELECT MIN(start_ns) FROM memsets)");
  if (!first_gpu) return j;  // no GPU work: the reports say so
  j.window = std::make_pair(*first_gpu, std::max(*first_gpu, detail::wall_span(db).end_ns));
  std::string marks = j.steps.empty() ? "no step marks or NVTX step ranges"
                                      : "too few steady " + std::string(step_source_name(j.source));
  j.note = "no repeating structure (" + marks + ", and " + no_repeat_reason(found) +
           "): judged from the first GPU work on, " + since_start(*j.window, base) +
           " (--whole-run for the whole process)";
  return j;
}

std::optional<FilteredTrace> judged_trace(Database& db, const JudgedWindow& w) {
  if (!w.window) return std::nullopt;
  const stats::Interval wall = detail::wall_span(db);
  if (w.window->first <= wall.start_ns && w.window->second >= wall.end_ns) return std::nullopt;
  TraceFilter f;
  f.from_ns = std::max<std::int64_t>(0, core::sat_sub(w.window->first, wall.start_ns));
  f.to_ns = std::max(*f.from_ns, core::sat_sub(w.window->second, wall.start_ns));
  return filter_trace(db, f);
}

}  // namespace gpuscope::analyze
