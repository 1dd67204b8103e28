// gpu_idle_py: which Python line the GPU waited on (py_sample_reports.hpp).
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analyze/common/gpu_busy.hpp"
#include "analyze/common/gpu_index.hpp"
#include "analyze/common/report_text.hpp"
#include "analyze/python/py_sample_reports.hpp"
#include "analyze/python/py_samples_data.hpp"
#include "core/saturating.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using store::Database;
using store::Statement;

constexpr double kNsPerMs = 1e6;
constexpr std::size_t kCallerFrames = 2;  // frames of "Called From"
constexpr const char* kNoFrame = "(no Python frame)";

// One process's judged window and its GPU idle gaps.
struct ProcessGaps {
  stats::Interval window;
  std::int64_t idle_ns = 0;
  std::vector<stats::Interval> gaps;  // sorted, disjoint, inside the window
};

// The rest of `window` after the busy union `busy` (sorted, disjoint).
std::vector<stats::Interval> idle_gaps_in(const stats::Interval& window, const std::vector<stats::Interval>& busy) {
  std::vector<stats::Interval> gaps;
  std::int64_t at = window.start_ns;
  for (const stats::Interval& b : busy) {
    if (b.end_ns <= at) continue;
    if (b.start_ns >= window.end_ns) break;
    if (b.start_ns > at) gaps.push_back({at, b.start_ns});
    at = std::max(at, b.end_ns);
  }
  if (at < window.end_ns) gaps.push_back({at, window.end_ns});
  return gaps;
}

// Per process with GPU work: the idle gaps of the GPUs it used, inside the wall span.
std::map<std::int64_t, ProcessGaps> process_gaps(Database& db) {
  const detail::GpuIndexMap gpus = detail::GpuIndexMap::load(db);
  const std::map<std::int64_t, detail::GpuBusy> busy = detail::busy_per_gpu(db, gpus);
  const stats::Interval window = detail::wall_span(db);
  std::map<std::int64_t, std::set<std::int64_t>> used;  // pid → GPU indexes
  Statement st = db.prepare(
      "SELECT DISTINCT pid, device_id FROM kernels UNION SELECT DISTINCT pid, device_id FROM memcpys "
      "UNION SELECT DISTINCT pid, device_id FROM memsets");
  while (st.step()) used[st.column_int(0)].insert(gpus.index(st.column_int(0), st.column_int(1)));
  std::map<std::int64_t, ProcessGaps> out;
  for (const auto& [pid, indexes] : used) {
    std::vector<stats::Interval> all;
    for (std::int64_t gpu : indexes)
      if (const auto it = busy.find(gpu); it != busy.end())
        all.insert(all.end(), it->second.busy.begin(), it->second.busy.end());
    ProcessGaps& p = out[pid];
    p.window = window;
    p.gaps = idle_gaps_in(window, indexes.size() == 1 ? all : stats::interval_union(std::move(all)));
    for (const stats::Interval& g : p.gaps) core::add_span(p.idle_ns, g.end_ns, g.start_ns);
  }
  return out;
}

// The gap holding `ts` (start ≤ ts < end), or -1.
std::ptrdiff_t gap_of(const std::vector<stats::Interval>& gaps, std::int64_t ts) {
  const auto it = std::upper_bound(gaps.begin(), gaps.end(), ts,
                                   [](std::int64_t t, const stats::Interval& g) { return t < g.start_ns; });
  if (it == gaps.begin()) return -1;
  const auto g = std::prev(it);
  return ts < g->end_ns ? g - gaps.begin() : -1;
}

struct FrameCharge {
  double self_ns = 0;
  double total_ns = 0;
  std::int64_t samples = 0;               // self samples
  std::map<std::string, double> callers;  // caller chain → ns charged with this frame in the stack
};

struct ThreadCharge {
  double sampled_ns = 0;  // Σ of the gaps this thread was sampled in
  double no_frame_ns = 0;
  std::int64_t no_frame_samples = 0;
  std::map<std::size_t, FrameCharge> frames;  // SampleFrames index → charge
};

using ThreadKey = std::pair<std::int64_t, std::int64_t>;  // pid, tid

// The caller chain text most charged for one frame ("" for an outermost frame).
std::string top_caller(const FrameCharge& c) {
  const auto it = std::max_element(c.callers.begin(), c.callers.end(),
                                   [](const auto& a, const auto& b) { return a.second < b.second; });
  return it == c.callers.end() ? std::string() : it->first;
}

void add_rows(Report& r, const ThreadKey& key, const ThreadCharge& t, const ProcessGaps& p,
              const detail::SampleFrames& frames, std::string& cut) {
  struct Line {
    std::string frame, caller;
    double self_ns, total_ns;
    std::int64_t samples;
  };
  std::vector<Line> lines;
  for (const auto& [f, c] : t.frames)
    lines.push_back({frames.site(f).where(), top_caller(c), c.self_ns, c.total_ns, c.samples});
  if (t.no_frame_samples > 0) lines.push_back({kNoFrame, "", t.no_frame_ns, t.no_frame_ns, t.no_frame_samples});
  std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    return detail::frame_row_before(a.total_ns, a.self_ns, a.frame, b.total_ns, b.self_ns, b.frame);
  });
  if (lines.size() > kPySumFramesPerThread) {
    cut += (cut.empty() ? "" : "; ") + std::string("thread ") + std::to_string(key.second) + ": " +
           std::to_string(lines.size() - kPySumFramesPerThread) + " more frames";
    lines.resize(kPySumFramesPerThread);
  }
  const auto pct = [&](double ns) -> Cell {
    return p.idle_ns > 0 ? Cell{ns / static_cast<double>(p.idle_ns) * 100.0} : Cell{std::monostate{}};
  };
  for (const Line& l : lines) {
    r.rows.push_back(Row{key.first, key.second, l.frame, l.caller, l.self_ns / kNsPerMs, pct(l.self_ns), l.samples,
                         l.total_ns / kNsPerMs, pct(l.total_ns)});
  }
}

// "GPU idle 33 % of the wall time (10 ms of 30 ms); 100 % of that idle time was sampled in ..."
std::string headline(std::int64_t pid, bool several, const ProcessGaps& p,
                     const std::map<ThreadKey, ThreadCharge>& threads, const detail::SampleFrames& frames) {
  const std::int64_t wall = core::sat_sub(p.window.end_ns, p.window.start_ns);
  std::string text = several ? "process " + std::to_string(pid) + ": " : "";
  text += "GPU idle " +
          (wall > 0 ? units::percent(static_cast<double>(p.idle_ns) / static_cast<double>(wall) * 100.0)
                    : std::string("-")) +
          " of the wall time (" + units::duration_ns(p.idle_ns) + " of " + units::duration_ns(wall) + " in " +
          std::to_string(p.gaps.size()) + (p.gaps.size() == 1 ? " gap)" : " gaps)");
  if (p.idle_ns == 0) return text + ": the GPU was busy the whole window, no idle time to charge to Python lines";
  // The most charged innermost frame of any thread, with its callers.
  double best = 0;
  std::string where;
  for (const auto& [key, t] : threads) {
    if (key.first != pid) continue;
    for (const auto& [f, c] : t.frames) {
      if (c.self_ns <= best) continue;
      best = c.self_ns;
      const std::string callers = top_caller(c);
      where = frames.site(f).where() + (callers.empty() ? "" : " ← " + callers) + " (thread " +
              std::to_string(key.second) + ")";
    }
  }
  if (where.empty()) {
    bool sampled = false;
    for (const auto& [key, t] : threads) sampled = sampled || (key.first == pid && t.no_frame_samples > 0);
    return text + (sampled ? "; only samples with no Python frame fell in it (the threads were in C code)"
                           : "; no Python sample fell in it (sample more often: --python-sampling=RATE)");
  }
  return text + "; " + units::percent(best / static_cast<double>(p.idle_ns) * 100.0) +
         " of that idle time was sampled in " + where;
}

}  // namespace

Report gpu_idle_py(Database& db) {
  Report r = detail::frame_report("gpu_idle_py", "GPU Idle Time by Python Line (sampled stacks)");
  r.add_column("Called From", "", ColumnType::kText)
      .add_column("Self Idle Time", "ms", ColumnType::kReal)
      .add_column("Self Idle", "%", ColumnType::kReal)
      .add_column("Samples", "samples", ColumnType::kInteger)
      .add_column("Total Idle Time", "ms", ColumnType::kReal)
      .add_column("Total Idle", "%", ColumnType::kReal);
  if (detail::noted_without_samples(db, r)) return r;
  const std::map<std::int64_t, ProcessGaps> gaps = process_gaps(db);
  if (gaps.empty()) {
    r.add_note(NoteLevel::kInfo, "no GPU work in the capture range: no GPU idle time to charge to Python lines");
    return r;
  }

  // Pass 1: each thread's samples per gap. Pass 2: each sample's share of its gap.
  std::map<std::tuple<std::int64_t, std::int64_t, std::ptrdiff_t>, std::int64_t> in_gap;
  const char* sql = "SELECT pid, tid, ts_ns, COALESCE(py_stack_id, 0) FROM py_samples ORDER BY pid, tid, ts_ns";
  std::set<std::int64_t> without_gpu;
  for (Statement st = db.prepare(sql); st.step();) {
    const auto p = gaps.find(st.column_int(0));
    if (p == gaps.end()) {
      without_gpu.insert(st.column_int(0));
      continue;
    }
    const std::ptrdiff_t g = gap_of(p->second.gaps, st.column_int(2));
    if (g >= 0) ++in_gap[{st.column_int(0), st.column_int(1), g}];
  }
  detail::SampleFrames frames(db);
  std::map<ThreadKey, ThreadCharge> threads;
  for (Statement st = db.prepare(sql); st.step();) {
    const std::int64_t pid = st.column_int(0), tid = st.column_int(1);
    const auto p = gaps.find(pid);
    if (p == gaps.end()) continue;
    const std::ptrdiff_t g = gap_of(p->second.gaps, st.column_int(2));
    if (g < 0) continue;
    const stats::Interval& gap = p->second.gaps[static_cast<std::size_t>(g)];
    const std::int64_t n = in_gap[{pid, tid, g}];
    const double share = static_cast<double>(core::sat_sub(gap.end_ns, gap.start_ns)) / static_cast<double>(n);
    ThreadCharge& t = threads[{pid, tid}];
    t.sampled_ns += share;
    const detail::SampleStack& stack = frames.stack(st.column_int(3));
    if (stack.frames.empty()) {
      t.no_frame_ns += share;
      ++t.no_frame_samples;
      continue;
    }
    for (std::size_t at : stack.firsts) {
      FrameCharge& c = t.frames[stack.frames[at]];
      c.total_ns += share;
      c.callers[frames.chain(stack.frames, at + 1, kCallerFrames)] += share;
    }
    FrameCharge& innermost = t.frames[stack.frames.front()];
    innermost.self_ns += share;
    ++innermost.samples;
  }

  std::string cut, coverage;
  for (const auto& [pid, p] : gaps) {
    r.add_note(NoteLevel::kInfo, headline(pid, gaps.size() > 1, p, threads, frames));
    for (const auto& [key, t] : threads) {
      if (key.first != pid) continue;
      add_rows(r, key, t, p, frames, cut);
      coverage += (coverage.empty() ? "" : "; ") + std::string("thread ") + std::to_string(key.second) + " in " +
                  units::duration(t.sampled_ns * 1e-9) + " (" +
                  units::percent(p.idle_ns > 0 ? t.sampled_ns / static_cast<double>(p.idle_ns) * 100.0 : 0.0) + ")";
    }
  }
  r.add_note(
      NoteLevel::kInfo,
      "each idle gap's length is charged to the samples one thread took in it (gap / that thread's samples in "
      "the gap); Self Idle Time counts samples whose innermost frame is the row's, Total Idle Time those with "
      "it anywhere in the stack (once per sample); % of the process's GPU idle time (wall time - the union of its "
      "GPUs' busy intervals)" +
          (coverage.empty() ? std::string(": no thread was sampled in an idle gap")
                            : "; idle time each thread was sampled in: " + coverage));
  if (!cut.empty())
    r.add_note(NoteLevel::kInfo,
               "only the first " + std::to_string(kPySumFramesPerThread) + " frames of each thread are shown: " + cut);
  if (!without_gpu.empty()) {
    std::string pids;
    for (std::int64_t pid : without_gpu) pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
    r.add_note(NoteLevel::kInfo, "process " + pids + " did no GPU work: its samples are not charged");
  }
  return r;
}

}  // namespace gpuscope::analyze
