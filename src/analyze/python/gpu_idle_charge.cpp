// The GPU idle time charged to sampled Python frames (gpu_idle_charge.hpp).
#include "analyze/python/gpu_idle_charge.hpp"

#include <algorithm>
#include <iterator>
#include <tuple>

#include "analyze/common/gpu_busy.hpp"
#include "analyze/common/gpu_index.hpp"
#include "core/saturating.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze::detail {
namespace {

using store::Database;
using store::Statement;

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

}  // namespace

GpuIdleCharges gpu_idle_charges(Database& db) {
  GpuIdleCharges out(db);
  out.gaps = process_gaps(db);
  const std::map<std::int64_t, ProcessGaps>& gaps = out.gaps;
  // Pass 1: each thread's samples per gap. Pass 2: each sample's share of its gap.
  std::map<std::tuple<std::int64_t, std::int64_t, std::ptrdiff_t>, std::int64_t> in_gap;
  const char* sql = "SELECT pid, tid, ts_ns, COALESCE(py_stack_id, 0) FROM py_samples ORDER BY pid, tid, ts_ns";
  for (Statement st = db.prepare(sql); st.step();) {
    const auto p = gaps.find(st.column_int(0));
    if (p == gaps.end()) {
      out.without_gpu.insert(st.column_int(0));
      continue;
    }
    const std::ptrdiff_t g = gap_of(p->second.gaps, st.column_int(2));
    if (g >= 0) ++in_gap[{st.column_int(0), st.column_int(1), g}];
  }
  for (Statement st = db.prepare(sql); st.step();) {
    const std::int64_t pid = st.column_int(0), tid = st.column_int(1);
    const auto p = gaps.find(pid);
    if (p == gaps.end()) continue;
    const std::ptrdiff_t g = gap_of(p->second.gaps, st.column_int(2));
    if (g < 0) continue;
    const stats::Interval& gap = p->second.gaps[static_cast<std::size_t>(g)];
    const std::int64_t n = in_gap[{pid, tid, g}];
    const double share = static_cast<double>(core::sat_sub(gap.end_ns, gap.start_ns)) / static_cast<double>(n);
    ThreadCharge& t = out.threads[{pid, tid}];
    t.sampled_ns += share;
    out.stacks[{{pid, tid}, st.column_int(3)}] += share;
    const SampleStack& stack = out.frames.stack(st.column_int(3));
    if (stack.frames.empty()) {
      t.no_frame_ns += share;
      ++t.no_frame_samples;
      continue;
    }
    for (std::size_t at : stack.firsts) {
      FrameCharge& c = t.frames[stack.frames[at]];
      c.total_ns += share;
      c.callers[out.frames.chain(stack.frames, at + 1, kIdleCallerFrames)] += share;
    }
    FrameCharge& innermost = t.frames[stack.frames.front()];
    innermost.self_ns += share;
    ++innermost.samples;
  }
  return out;
}

// The caller chain text most charged for one frame ("" for an outermost frame).
std::string top_caller(const FrameCharge& c) {
  const auto it = std::max_element(c.callers.begin(), c.callers.end(),
                                   [](const auto& a, const auto& b) { return a.second < b.second; });
  return it == c.callers.end() ? std::string() : it->first;
}

std::optional<IdleLine> most_idle_line(const GpuIdleCharges& c, std::int64_t pid) {
  const auto p = c.gaps.find(pid);
  if (p == c.gaps.end() || p->second.idle_ns <= 0) return std::nullopt;
  std::optional<IdleLine> best;
  for (const auto& [key, t] : c.threads) {
    if (key.first != pid) continue;
    for (const auto& [f, charge] : t.frames) {
      if (charge.self_ns <= (best ? best->self_ns : 0.0)) continue;
      const std::string callers = top_caller(charge);
      best = IdleLine{key.second, c.frames.site(f).where() + (callers.empty() ? "" : " ← " + callers), charge.self_ns,
                      charge.self_ns / static_cast<double>(p->second.idle_ns)};
    }
  }
  return best;
}

std::optional<ProcessIdleLine> most_idle_line(Database& db) {
  if (py_sample_count(db) == 0) return std::nullopt;
  const GpuIdleCharges c = gpu_idle_charges(db);
  std::optional<ProcessIdleLine> best;
  for (const auto& [pid, p] : c.gaps) {
    const std::optional<IdleLine> line = most_idle_line(c, pid);
    if (line && (!best || line->share > best->line.share)) best = ProcessIdleLine{pid, c.gaps.size() > 1, *line};
  }
  return best;
}

}  // namespace gpuscope::analyze::detail
