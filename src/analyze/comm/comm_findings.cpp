#include "analyze/comm/comm_findings.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "analyze/common/analysis_cache.hpp"
#include "analyze/comm/comm_data.hpp"
#include "core/comm_intervals.hpp"
#include "core/saturating.hpp"
#include "core/units.hpp"

namespace gpuscope::analyze::detail {
namespace {

// The index in r.steps of the step that holds `t`, if any.
std::optional<std::size_t> step_index_at(const RankFacts& r, std::int64_t t) {
  const auto it = std::upper_bound(r.steps.begin(), r.steps.end(), t,
                                   [](std::int64_t v, const StepSplit& s) { return v < s.start_ns; });
  if (it == r.steps.begin()) return std::nullopt;
  const auto i = static_cast<std::size_t>(it - 1 - r.steps.begin());
  return t < r.steps[i].end_ns ? std::optional<std::size_t>(i) : std::nullopt;
}

// Per NCCL call of `r` (as r.nccl): the time from the end of the previous NCCL kernel on the
// same stream to the call's own end when the call was back to back behind it: the same
// collective and bytes, launched (its API call ended, launch_end_ns) before that kernel
// ended and started after it (so the GPU, not the CPU, set its pace, as in nccl-tests'
// loop); -1 otherwise (or when the launch is unknown).
std::vector<std::int64_t> paced_intervals(const RankFacts& r) {
  std::vector<std::int64_t> out(r.nccl.size(), -1);
  std::map<std::int64_t, std::size_t> last;  // stream → index of its latest NCCL call
  for (std::size_t j = 0; j < r.nccl.size(); ++j) {
    const NcclCall& c = r.nccl[j];
    const auto it = last.find(c.stream_id);
    if (it != last.end()) {
      const NcclCall& p = r.nccl[it->second];
      if (p.kind == c.kind && p.bytes == c.bytes && c.launch_end_ns >= 0 && c.launch_end_ns < p.end_ns &&
          c.start_ns >= p.end_ns)
        out[j] = core::sat_sub(c.end_ns, p.end_ns);
    }
    last[c.stream_id] = j;
  }
  return out;
}

// Per step (torch_steps.step) with an instance: how long each rank held the job back in it.
using HeldPerStep = std::map<std::int64_t, std::vector<std::int64_t>>;

// Matches the kernels of one collective `kind` across the ranks that run it (`lists`: per
// rank, indices into its nccl in start order): one instance per k below the fewest any rank
// has, into `m` (per_rank, matched, order, instances, unmatched) and `held_per_step`.
void match_kind(const CommData& d, core::NcclCollective kind, const std::vector<std::vector<std::size_t>>& lists,
                const std::vector<std::vector<bool>>& warmup, StragglerMatch& m, HeldPerStep& held_per_step) {
  const std::vector<std::vector<std::int64_t>>& paced = m.paced;
  std::vector<std::size_t> ranks;
  std::size_t fewest = SIZE_MAX;
  std::size_t total = 0;
  for (std::size_t i = 0; i < lists.size(); ++i) {
    if (lists[i].empty()) continue;
    ranks.push_back(i);
    fewest = std::min(fewest, lists[i].size());
    total += lists[i].size();
  }
  if (ranks.size() < 2) {
    m.unmatched += static_cast<std::int64_t>(total);
    return;
  }
  m.unmatched += static_cast<std::int64_t>(total - fewest * ranks.size());
  std::vector<std::int64_t> t;
  for (std::size_t k = 0; k < fewest; ++k) {
    t.clear();
    for (std::size_t i : ranks) t.push_back(d.ranks[i].nccl[lists[i][k]].start_ns);
    const std::optional<core::Arrivals> a = core::arrivals(t);
    const std::size_t last = ranks[a->last];
    ++m.instances;
    for (std::size_t x = 0; x < ranks.size(); ++x) {
      RankStraggle& s = m.per_rank[ranks[x]];
      ++s.instances;
      s.waited_ns = core::sat_add(s.waited_ns, a->wait_ns[x]);
      s.delay_sum_ns += static_cast<double>(a->spread_ns - a->wait_ns[x]);
    }
    // Every step with an instance is in held_per_step, so that a step where no rank came
    // last breaks a run.
    std::vector<std::int64_t>* step_held = nullptr;
    const std::optional<std::size_t> step_index = step_index_at(d.ranks[last], t[a->last]);
    const std::optional<std::int64_t> step =
        step_index ? std::optional<std::int64_t>(d.ranks[last].steps[*step_index].step) : std::nullopt;
    // Counted in the share of step time when outside warm-up (or the rank has no steps:
    // the share is of its wall time then). An instance between steps counts too.
    const bool steady = !step_index || !warmup[last][*step_index];
    if (step) {
      step_held = &held_per_step[*step];
      step_held->resize(d.ranks.size());
    }
    if (a->lateness_ns > 0) {
      RankStraggle& s = m.per_rank[last];
      ++s.last;
      s.held_back_ns = core::sat_add(s.held_back_ns, a->lateness_ns);
      if (steady) s.held_back_steady_ns = core::sat_add(s.held_back_steady_ns, a->lateness_ns);
      for (std::int64_t w : a->wait_ns) s.others_waited_ns = core::sat_add(s.others_waited_ns, w);
      if (step_held != nullptr) (*step_held)[last] = core::sat_add((*step_held)[last], a->lateness_ns);
    }
    for (std::size_t i : ranks) m.matched[i][lists[i][k]] = true;
    const NcclCall& lk = d.ranks[last].nccl[lists[last][k]];
    std::int64_t waited = 0;
    for (const std::int64_t w : a->wait_ns) waited = core::sat_add(waited, w);
    bool all_paced = true;
    for (std::size_t i : ranks) all_paced = all_paced && paced[i][lists[i][k]] >= 0;
    m.order.push_back({kind, static_cast<std::int64_t>(k), last, a->lateness_ns, t[a->last],
                       core::sat_sub(lk.end_ns, lk.start_ns), lk.bytes, static_cast<std::int64_t>(ranks.size()),
                       a->spread_ns, waited, step, all_paced ? paced[last][lists[last][k]] : -1});
  }
}

// Onsets: per step, the rank that held the job back most in it, when by at least
// kStragglerShare of that step (its longest on any rank: a few µs of jitter in a step of
// milliseconds make no straggler); else per instance.
void find_onsets(const CommData& d, HeldPerStep& held_per_step, StragglerMatch& m) {
  std::map<std::int64_t, std::int64_t> step_ns;
  for (const RankFacts& r : d.ranks)
    for (const StepSplit& st : r.steps) {
      std::int64_t& ns = step_ns[st.step];
      ns = std::max(ns, core::sat_sub(st.end_ns, st.start_ns));
    }
  std::vector<std::int64_t> steps, step_straggler, instance_last;
  for (const auto& [step, held] : held_per_step) {
    const auto top = std::max_element(held.begin(), held.end());
    steps.push_back(step);
    const double least = kStragglerShare * static_cast<double>(step_ns[step]);
    step_straggler.push_back(*top > 0 && static_cast<double>(*top) >= least ? top - held.begin() : -1);
  }
  for (const StragglerMatch::Instance& i : m.order)
    instance_last.push_back(i.lateness_ns > 0 ? static_cast<std::int64_t>(i.last) : -1);
  for (std::size_t i = 0; i < m.per_rank.size(); ++i) {
    const auto who_i = static_cast<std::int64_t>(i);
    if (const auto s = core::longest_run_start(step_straggler, who_i, 2)) {
      // The run's first steps where it held the job back less than half its median in the run
      // are the lead-in, not the onset (2 H100s: 0.8 ms in step 4, then 21 ms a step from 5).
      std::size_t start = *s, end = start;
      while (end < step_straggler.size() && step_straggler[end] == who_i) ++end;
      std::vector<std::int64_t> held;
      for (std::size_t x = start; x < end; ++x) held.push_back(held_per_step[steps[x]][i]);
      std::nth_element(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(held.size() / 2), held.end());
      const std::int64_t median = held[held.size() / 2];
      while (end - start > 2 && 2 * held_per_step[steps[start]][i] < median) ++start;
      m.per_rank[i].onset_step = steps[start];
    }
    if (const auto s = core::longest_run_start(instance_last, who_i, 3))
      m.per_rank[i].onset_instance = static_cast<std::int64_t>(*s);
  }
}

}  // namespace

StragglerMatch match_collectives(const CommData& d) {
  StragglerMatch m;
  m.per_rank.resize(d.ranks.size());
  m.matched.resize(d.ranks.size());
  for (std::size_t i = 0; i < d.ranks.size(); ++i) m.matched[i].resize(d.ranks[i].nccl.size());
  // Per kind: each rank's kernels of that kind, in start order (indices into its nccl).
  std::map<core::NcclCollective, std::vector<std::vector<std::size_t>>> by_kind;
  std::vector<std::vector<bool>> warmup(d.ranks.size());
  for (std::size_t i = 0; i < d.ranks.size(); ++i) warmup[i] = d.ranks[i].warmup_steps();
  for (std::size_t i = 0; i < d.ranks.size(); ++i) {
    const RankFacts& r = d.ranks[i];
    if (r.nccl.empty()) continue;
    ++m.participants;
    m.step_time_ns += static_cast<double>(r.step_time_ns());
    for (std::size_t j = 0; j < r.nccl.size(); ++j) {
      auto& lists = by_kind[r.nccl[j].kind];
      lists.resize(d.ranks.size());
      lists[i].push_back(j);
    }
  }
  if (m.participants > 0) m.step_time_ns /= m.participants;
  m.paced.resize(d.ranks.size());
  for (std::size_t i = 0; i < d.ranks.size(); ++i) m.paced[i] = paced_intervals(d.ranks[i]);
  HeldPerStep held_per_step;
  for (const auto& [kind, lists] : by_kind) match_kind(d, kind, lists, warmup, m, held_per_step);
  std::sort(m.order.begin(), m.order.end(), [](const StragglerMatch::Instance& a, const StragglerMatch::Instance& b) {
    return a.last_arrival_ns < b.last_arrival_ns;
  });
  find_onsets(d, held_per_step, m);
  return m;
}

const StragglerMatch& straggler_match(store::Database& db) {
  return cached<StragglerMatch>(db, "straggler_match", [&] { return match_collectives(comm_data(db)); });
}

CommFindings comm_findings(store::Database& db) {
  if (!may_have_nccl(db)) return {};
  const CommData& d = comm_data(db);
  if (d.nccl_kernels == 0) return {};
  return comm_findings(d, straggler_match(db));
}

CommFindings comm_findings(const CommData& d, const StragglerMatch& m) {
  CommFindings f;
  if (d.nccl_kernels == 0) return f;
  std::int64_t worst = -1;
  for (std::size_t i = 0; i < d.ranks.size(); ++i) {
    core::OverlapSplit s;
    if (d.has_steps) {
      for (const StepSplit& step : d.ranks[i].steps) s += step.split;
    } else {
      s = d.ranks[i].whole;
    }
    f.comm_ns = core::sat_add(f.comm_ns, s.comm_ns);
    f.exposed_ns = core::sat_add(f.exposed_ns, s.exposed_ns);
    f.wall_ns = core::sat_add(f.wall_ns, s.window_ns);
    if (s.exposed_ns > worst) worst = s.exposed_ns, f.worst_exposed = i;
  }
  std::int64_t held = 0;
  for (std::size_t i = 0; i < m.per_rank.size(); ++i) {
    if (m.per_rank[i].held_back_steady_ns > held) held = m.per_rank[i].held_back_steady_ns, f.straggler = i;
  }
  if (f.straggler && m.step_time_ns > 0) f.straggler_share = static_cast<double>(held) / m.step_time_ns;
  return f;
}

std::string straggler_sentence(store::Database& db, const CommFindings& f) {
  return straggler_sentence(comm_data(db), straggler_match(db), f);
}

std::string straggler_sentence(const CommData& d, const StragglerMatch& m, const CommFindings& f) {
  if (!f.straggler) return {};
  const RankFacts& r = d.ranks[*f.straggler];
  const RankStraggle& s = m.per_rank[*f.straggler];
  std::string text = rank_label(r) + " holds the job back by " + units::percent_of(f.straggler_share) + " of " +
                     (d.has_steps ? "step time after warm-up" : "the wall time") + ": it arrived last at " +
                     std::to_string(s.last) + " of " + std::to_string(s.instances) + " collectives, " +
                     units::duration_ns(s.held_back_ns) +
                     " after the next-to-last rank in all, and the other ranks waited " +
                     units::duration_ns(s.others_waited_ns) + " inside those collectives for it";
  if (s.onset_step) {
    text += "; it is the step's straggler from step " + std::to_string(*s.onset_step) + " on";
  }
  if (s.onset_instance) {
    const StragglerMatch::Instance& i = m.order[static_cast<std::size_t>(*s.onset_instance)];
    text += std::string(s.onset_step ? " (" : "; ") + "last repeatedly from " +
            std::string(core::collective_name(i.kind)) + " #" + std::to_string(i.k) + ", collective " +
            std::to_string(*s.onset_instance) + " of " + std::to_string(m.instances) + " in time order" +
            (s.onset_step ? ")" : "");
  }
  return text;
}

std::string exposed_sentence(store::Database& db, const CommFindings& f) { return exposed_sentence(comm_data(db), f); }

std::string exposed_sentence(const CommData& d, const CommFindings& f) {
  std::string text =
      units::duration_ns(f.exposed_ns) + " of " + units::duration_ns(f.comm_ns) +
      " of NCCL communication ran with no compute kernel beside it on the same GPU, " +
      units::percent_of(f.wall_ns > 0 ? static_cast<double>(f.exposed_ns) / static_cast<double>(f.wall_ns) : 0.0) +
      " of the " + (d.has_steps ? "step time" : "wall time") + " of " + std::to_string(d.ranks.size()) + " rank(s); " +
      units::percent_of(f.comm_ns > 0 ? 1.0 - static_cast<double>(f.exposed_ns) / static_cast<double>(f.comm_ns)
                                      : 0.0) +
      " of it was hidden behind compute";
  if (f.worst_exposed) text += "; most on " + rank_label(d.ranks[*f.worst_exposed]);
  return text;
}

}  // namespace gpuscope::analyze::detail
