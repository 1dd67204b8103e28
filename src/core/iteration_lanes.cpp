// A process's lanes for core/iteration_detector: idle times over the whole process, one search
// per lane, the lane with the most steady work, and the other lanes' work added to its
// iterations. The search of one lane is in iteration_detector.cpp.
#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "core/iteration_detector.hpp"  // declares what this file defines
#include "core/saturating.hpp"

namespace gpuscope::core {
namespace {

// Launches are ordered in time by their launch call's start, else their GPU start.
std::int64_t order_key(const LaunchToken& l) { return l.launch_ns > 0 ? l.launch_ns : l.start_ns; }

// Idle before each launch (by index into `launches`), over the whole process: GPU idle since
// every launch made before it ended, plus the CPU time since the launch call before it where
// both are known. Over the whole process, so that a thread waiting while another launches
// (PyTorch's autograd thread runs the backward pass) is not taken for a pause.
std::vector<std::int64_t> idle_before(std::span<const LaunchToken> launches, const std::vector<std::size_t>& by_time) {
  std::vector<std::int64_t> idle(launches.size(), 0);
  std::int64_t ended = 0, called = 0;
  for (std::size_t k = 0; k < by_time.size(); ++k) {
    const LaunchToken& l = launches[by_time[k]];
    if (k > 0) {
      // Saturating: a damaged or hostile trace may hold any timestamps.
      std::int64_t v = std::max<std::int64_t>(0, sat_sub(l.start_ns, ended));
      if (l.launch_ns > 0 && called > 0) v = sat_add(v, std::max<std::int64_t>(0, sat_sub(l.launch_ns, called)));
      idle[by_time[k]] = v;
    }
    ended = k == 0 ? l.end_ns : std::max(ended, l.end_ns);
    called = l.launch_ns;
  }
  return idle;
}

// Each iteration also holds the other lanes' work launched between its first launch and the
// next iteration's (the last one: up to its own last launch): its times span it too.
void add_other_lanes(IterationStructure& s, std::span<const LaunchToken> launches, std::span<const std::size_t> lane,
                     const std::vector<std::size_t>& by_time) {
  std::vector<std::int64_t> keys(by_time.size());
  for (std::size_t k = 0; k < by_time.size(); ++k) keys[k] = order_key(launches[by_time[k]]);
  std::vector<std::size_t> others;
  for (std::size_t i = 0; i < s.iterations.size(); ++i) {
    Iteration& it = s.iterations[i];
    const std::int64_t lo = order_key(launches[lane[it.first]]);
    const auto from = std::lower_bound(keys.begin(), keys.end(), lo) - keys.begin();
    const auto to =
        i + 1 < s.iterations.size()
            ? std::lower_bound(keys.begin(), keys.end(), order_key(launches[lane[s.iterations[i + 1].first]])) -
                  keys.begin()
            : std::upper_bound(keys.begin(), keys.end(), order_key(launches[lane[it.first + it.launches - 1]])) -
                  keys.begin();
    for (auto k = from; k < to; ++k) {
      const LaunchToken& l = launches[by_time[static_cast<std::size_t>(k)]];
      if (l.lane == s.lane) continue;
      ++it.other_launches;
      it.start_ns = std::min(it.start_ns, l.start_ns);
      it.end_ns = std::max(it.end_ns, l.end_ns);
    }
    if (it.kind == IterationKind::kSteady) others.push_back(it.other_launches);
  }
  if (!others.empty()) {
    std::nth_element(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(others.size() / 2), others.end());
    s.unit_other_launches = others[others.size() / 2];
  }
}

}  // namespace

IterationDetection detect_iterations(std::span<const LaunchToken> launches) {
  std::vector<std::size_t> by_time(launches.size());
  std::iota(by_time.begin(), by_time.end(), std::size_t{0});
  std::stable_sort(by_time.begin(), by_time.end(),
                   [&](std::size_t a, std::size_t b) { return order_key(launches[a]) < order_key(launches[b]); });
  const std::vector<std::int64_t> idle = idle_before(launches, by_time);
  std::vector<std::int64_t> order;  // lanes in order of first launch
  std::unordered_map<std::int64_t, std::vector<std::size_t>> by_lane;
  for (std::size_t i = 0; i < launches.size(); ++i) {
    auto [it, fresh] = by_lane.try_emplace(launches[i].lane);
    if (fresh) order.push_back(launches[i].lane);
    it->second.push_back(i);
  }
  IterationDetection best;
  best.launches = launches.size();
  best.why = NoIterations::kTooFewLaunches;
  std::size_t best_steady = 0;
  std::int64_t best_lane = 0;
  for (std::int64_t lane : order) {
    const std::vector<std::size_t>& idx = by_lane[lane];
    std::vector<LaunchToken> mine(idx.size());
    std::vector<std::int64_t> mine_idle(idx.size());
    for (std::size_t k = 0; k < idx.size(); ++k) {
      mine[k] = launches[idx[k]];
      mine_idle[k] = idle[idx[k]];
    }
    IterationDetection d = detail::detect_in_lane(std::move(mine), std::move(mine_idle));
    if (!d.found) {
      best.why = std::max(best.why, d.why);  // the furthest: too few launches < no repeat < too few repeats
      continue;
    }
    std::size_t steady = 0;
    for (const Iteration& it : d.found->iterations)
      if (it.kind == IterationKind::kSteady) steady += it.launches;
    if (!best.found || steady > best_steady) {
      best_steady = steady;
      best.found = std::move(d.found);
      best_lane = lane;
    }
  }
  if (best.found) {
    best.found->lane = best_lane;
    best.found->lanes = order.size();
    if (order.size() > 1) add_other_lanes(*best.found, launches, by_lane[best_lane], by_time);
  }
  return best;
}

IterationDetection detect_iterations_in_lane(std::span<const LaunchToken> launches) {
  std::vector<LaunchToken> one(launches.begin(), launches.end());
  for (LaunchToken& l : one) l.lane = 0;
  return detect_iterations(one);
}

std::optional<std::pair<std::int64_t, std::int64_t>> steady_iterations_window(const IterationStructure& s) {
  std::optional<std::pair<std::int64_t, std::int64_t>> w;
  std::size_t n = 0;
  for (const Iteration& it : s.iterations) {
    if (it.kind != IterationKind::kSteady) continue;
    ++n;
    if (!w) w.emplace(it.start_ns, it.end_ns);
    w->first = std::min(w->first, it.start_ns);
    w->second = std::max(w->second, it.end_ns);
  }
  if (n < 2) return std::nullopt;
  return w;
}

}  // namespace gpuscope::core
