// Each forward's times from its thread's events (llm_generations.hpp's "Times" and "CPU time
// by cause"): when its token is done on the GPU, its CPU window by cause, the GPU work in it;
// and each generation's request start (its generate() call).
#include "analyze/llm/llm_generations_parts.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>
#include <vector>

#include "core/saturating.hpp"
#include "core/stats.hpp"

namespace gpuscope::analyze::detail {
namespace {

constexpr std::int64_t kTailSlackNs = 50'000;  // past 2 x the longest tail, for the last forward

// The token reaches the host with the first device-to-host copy after the forward (a
// streamer's .cpu(), .item(), a stopping check); without one, with the last work of `w`.
std::int64_t token_end(std::span<const Launch> w, const ForwardPass& f) {
  std::int64_t last = 0, to_host = 0;
  for (const Launch& l : w) {
    last = std::max(last, l.gpu_end);
    if (l.to_host && to_host == 0 && l.api_ns > f.end_ns) to_host = l.gpu_end;
  }
  return to_host != 0 ? to_host : last;
}

// The CPU window's end of fw[i], generation [.., e): the next forward's call; the last one's
// its token's GPU end or its latest call's return (calls started before `to`), whichever is later.
std::int64_t cpu_window_end(std::span<const ForwardPass> fw, std::size_t i, std::size_t e,
                            std::span<const ApiSpan> calls_of, std::int64_t to) {
  if (i + 1 < e) return fw[i + 1].start_ns;
  std::int64_t cpu_end = std::max(fw[i].end_ns, fw[i].token_end_ns);  // the loop waits for its token
  for (auto a = std::lower_bound(calls_of.begin(), calls_of.end(), fw[i].start_ns,
                                 [](const ApiSpan&x, std::int64_t v) { return x.start_ns < v; });
       a != calls_of.end() && a->start_ns < to; ++a)
    cpu_end = std::max(cpu_end, a->end_ns);
  return cpu_end;
}

// The CPU window [f.start_ns, cpu_end) by cause. Both lists are in start order: what starts
// inside the window (one started before the forward's call belongs to the window before).
CpuCauses window_causes(const ForwardPass& f, std::int64_t cpu_end, std::span<const ApiSpan> calls_of,
                        std::span<const CpuRange> ops) {
  const auto a_lo = std::lower_bound(calls_of.begin(), calls_of.end(), f.start_ns,
                                     [](const ApiSpan& a, std::int64_t v) { return a.start_ns < v; });
  const auto a_hi =
      std::lower_bound(a_lo, calls_of.end(), cpu_end, [](const ApiSpan& a, std::int64_t v) { return a.start_ns < v; });
  const auto o_lo = std::lower_bound(ops.begin(), ops.end(), f.start_ns,
                                     [](const CpuRange& o, std::int64_t v) { return o.first < v; });
  const auto o_hi =
      std::lower_bound(o_lo, ops.end(), cpu_end, [](const CpuRange& o, std::int64_t v) { return o.first < v; });
  return cpu_split(f.start_ns, cpu_end, std::span<const ApiSpan>(a_lo, a_hi), std::span<const CpuRange>(o_lo, o_hi));
}

// The union of the GPU work of `w` clipped to [from, until).
std::int64_t busy_in(std::span<const Launch> w, std::int64_t from, std::int64_t until) {
  std::vector<stats::Interval> busy;
  for (const Launch& l : w)
    if (l.gpu_end > from && l.gpu_start < until)
      busy.push_back({std::max(l.gpu_start, from), std::min(l.gpu_end, until)});
  return stats::union_length(std::move(busy));
}

}  // namespace

void time_forwards(std::span<ForwardPass> fw, const ThreadEvents& events) {
  // Each forward's window: from its call to the next forward's call; tails first.
  const auto window_end = [&](std::size_t i) {
    return i + 1 < fw.size() ? fw[i + 1].start_ns : std::numeric_limits<std::int64_t>::max();
  };
  for (std::size_t i = 0; i < fw.size(); ++i) {
    const auto w = events.launches_in(fw[i].pid, fw[i].tid, fw[i].start_ns, window_end(i));
    fw[i].tail_ns = w.empty() ? 0 : std::max<std::int64_t>(0, w.back().api_ns - fw[i].end_ns);
  }
  for (std::size_t b = 0; b < fw.size();) {  // generation [b, e)
    std::size_t e = b + 1;
    while (e < fw.size() && fw[e].phase != ForwardPhase::kPrefill) ++e;
    for (std::size_t i = b; i < e; ++i) {
      ForwardPass& f = fw[i];
      std::int64_t to = window_end(i);
      if (i + 1 == e && e - b > 1) {  // the last: no further than the generation's other tails suggest
        std::int64_t longest = 0;
        for (std::size_t j = b; j + 1 < e; ++j) longest = std::max(longest, fw[j].tail_ns);
        to = std::min(to, core::sat_add(f.end_ns, core::sat_add(2 * longest, kTailSlackNs)) + 1);
      }
      const auto w = events.launches_in(f.pid, f.tid, f.start_ns, to);
      f.token_end_ns = token_end(w, f);
      const std::span<const ApiSpan> calls_of = events.api_of(f.pid, f.tid);
      const std::int64_t cpu_end = cpu_window_end(fw, i, e, calls_of, to);
      f.cpu = window_causes(f, cpu_end, calls_of, events.ops_of(f.pid, f.tid));
      std::vector<stats::Interval> work;
      for (const Launch& l : events.launches_in(f.pid, f.tid, f.start_ns, cpu_end))
        if (l.gpu_end > l.gpu_start) work.push_back({l.gpu_start, l.gpu_end});
      f.gpu_work_ns = stats::union_length(std::move(work));
      // Busy inside the token's interval: the previous token's end to this one's; the
      // generation's first forward from its call (the prefill: its TTFT).
      if (f.token_end_ns > 0 && (i == b || fw[i - 1].token_end_ns > 0))
        f.gpu_busy_ns = busy_in(w, i == b ? f.start_ns : fw[i - 1].token_end_ns, f.token_end_ns);
    }
    b = e;
  }
}

void set_request_starts(std::span<Generation> generations, std::span<const ForwardPass> forwards,
                        const ThreadEvents& events) {
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> claimed;  // (pid, tid, start) of a call
  for (Generation& g : generations) {
    if (!g.has_prefill) continue;
    const ForwardPass& prefill = forwards[g.first];
    // The innermost call holding the prefill's call: the latest started among those holding it.
    const CpuRange* inner = nullptr;
    for (const CpuRange& r : events.requests_of(prefill.pid, prefill.tid)) {
      if (r.first > prefill.start_ns) break;
      if (r.second >= prefill.end_ns) inner = &r;
    }
    if (inner != nullptr && claimed.emplace(prefill.pid, prefill.tid, inner->first).second) g.request_ns = inner->first;
  }
}

}  // namespace gpuscope::analyze::detail
