#include "core/iteration_detector.hpp"
#include "core/saturating.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace gpuscope::core {
namespace {

constexpr std::size_t kMinRepeats = 3;      // an iteration must repeat at least this often
constexpr std::size_t kMaxCandidates = 16;  // candidate periods scored (the best supported)
constexpr double kOuterCoverage = 0.8;      // an outer period must cover this share of the best
constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// Polynomial hashes of the token sequence modulo the Mersenne prime 2^61 - 1: any segment's
// hash in O(1), so segments compare in O(1).
constexpr std::uint64_t kMod = (std::uint64_t{1} << 61) - 1;
constexpr std::uint64_t kBase = 1'000'003;

std::uint64_t mul_mod(std::uint64_t a, std::uint64_t b) {
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  std::uint64_t r = static_cast<std::uint64_t>(p & kMod) + static_cast<std::uint64_t>(p >> 61);
  return r >= kMod ? r - kMod : r;
}

// Launches within this many of a period still count as that period (a kernel added or left out).
std::size_t period_tolerance(std::size_t p) { return std::max<std::size_t>(1, p / 20); }
// A segment within this many launches (as a multiset) of the unit repeats it, with noise.
std::size_t near_limit(std::size_t unit) {
  return std::max<std::size_t>(1, std::min(unit / 5, std::max<std::size_t>(2, unit / 50)));
}
// An outer period with fewer launches than this per iteration outside an inner period's
// repeats is that inner period plus an occasional extra launch.
std::size_t noise_limit(std::size_t inner) { return std::max<std::size_t>(2, inner / 20); }

std::int64_t median_of(std::vector<std::int64_t> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

struct Segment {
  std::size_t first = 0, len = 0;  // len: cut to the unit when it starts with the unit
  std::size_t diff = 0;            // multiset distance to the unit (a lower bound when far off)
  bool repeats = false;            // the unit, or near it
};

struct Scored {
  std::size_t period = 0;
  std::uint32_t anchor = 0;
  std::size_t unit_first = 0, unit_len = 0;  // one exact copy of the unit
  std::vector<Segment> segments;
  std::size_t repeats = 0, exact = 0, covered = 0;
  [[nodiscard]] bool valid() const { return repeats >= kMinRepeats && exact >= 2; }
};

class Lane {
 public:
  Lane(std::vector<LaunchToken> launches, std::vector<std::int64_t> idle)
      : m_l(std::move(launches)), m_idle(std::move(idle)) {
    const std::size_t n = m_l.size();
    std::vector<std::int64_t> ids(n);
    for (std::size_t i = 0; i < n; ++i) ids[i] = m_l[i].token;
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    m_vocab = ids.size();
    m_tok.resize(n);
    for (std::size_t i = 0; i < n; ++i)
      m_tok[i] = static_cast<std::uint32_t>(std::lower_bound(ids.begin(), ids.end(), m_l[i].token) - ids.begin());
    m_hash.assign(n + 1, 0);
    m_pow.assign(n + 1, 1);
    for (std::size_t i = 0; i < n; ++i) {
      m_hash[i + 1] = (mul_mod(m_hash[i], kBase) + m_tok[i] + 1) % kMod;
      m_pow[i + 1] = mul_mod(m_pow[i], kBase);
    }
    // Occurrences of each token (CSR).
    m_occ_begin.assign(m_vocab + 1, 0);
    for (std::uint32_t t : m_tok) ++m_occ_begin[t + 1];
    std::partial_sum(m_occ_begin.begin(), m_occ_begin.end(), m_occ_begin.begin());
    m_occ.resize(n);
    std::vector<std::size_t> fill(m_occ_begin.begin(), m_occ_begin.end() - 1);
    for (std::size_t i = 0; i < n; ++i) m_occ[fill[m_tok[i]]++] = i;
    m_count_unit.assign(m_vocab, 0);
    m_count_seg.assign(m_vocab, 0);
  }

  IterationDetection detect();

 private:
  [[nodiscard]] std::size_t size() const { return m_tok.size(); }
  [[nodiscard]] std::span<const std::size_t> occurrences(std::uint32_t t) const {
    return {m_occ.data() + m_occ_begin[t], m_occ_begin[t + 1] - m_occ_begin[t]};
  }
  [[nodiscard]] std::uint64_t hash(std::size_t first, std::size_t len) const {
    return (m_hash[first + len] + kMod - mul_mod(m_hash[first], m_pow[len])) % kMod;
  }
  std::vector<std::pair<std::size_t, std::uint32_t>> candidates() const;
  Scored score(std::size_t period, std::uint32_t anchor, std::vector<std::size_t> cuts);
  Scored score(std::size_t period, std::uint32_t anchor) {
    const auto occ = occurrences(anchor);
    return score(period, anchor, std::vector<std::size_t>(occ.begin(), occ.end()));
  }
  std::size_t distance(std::size_t first, std::size_t len, std::span<const std::uint32_t> unit_tokens);
  std::size_t outside_repeats(const Scored& outer, std::size_t inner, std::size_t* matched) const;
  std::size_t phase_offset(const Scored& s) const;
  std::vector<std::size_t> rotated_cuts(const Scored& s, std::size_t j) const;
  IterationStructure classify(const Scored& s) const;

  std::vector<LaunchToken> m_l;
  std::vector<std::uint32_t> m_tok;
  std::size_t m_vocab = 0;
  std::vector<std::uint64_t> m_hash, m_pow;
  std::vector<std::size_t> m_occ_begin, m_occ;
  std::vector<std::int64_t> m_idle;                     // before each launch (idle_before)
  std::vector<std::int32_t> m_count_unit, m_count_seg;  // scratch, all zero between uses
};

// Candidate periods: the median gap of each token seen >= 3 times whose gaps mostly equal it,
// with the token (the most frequent for that period) as anchor; near-equal periods merge.
std::vector<std::pair<std::size_t, std::uint32_t>> Lane::candidates() const {
  struct Cand {
    std::size_t period;
    std::uint32_t anchor;
    std::size_t anchor_count, support;
  };
  std::vector<Cand> by_period;
  std::vector<std::int64_t> gaps;
  for (std::uint32_t t = 0; t < m_vocab; ++t) {
    const auto occ = occurrences(t);
    if (occ.size() < kMinRepeats) continue;
    gaps.clear();
    for (std::size_t k = 1; k < occ.size(); ++k) gaps.push_back(static_cast<std::int64_t>(occ[k] - occ[k - 1]));
    const auto med = static_cast<std::size_t>(median_of(gaps));
    const auto tol = static_cast<std::int64_t>(period_tolerance(med));
    const auto regular = static_cast<std::size_t>(std::count_if(
        gaps.begin(), gaps.end(), [&](std::int64_t g) { return std::abs(g - static_cast<std::int64_t>(med)) <= tol; }));
    if (2 * regular < gaps.size()) continue;
    by_period.push_back({med, t, occ.size(), occ.size()});
  }
  std::sort(by_period.begin(), by_period.end(), [](const Cand& a, const Cand& b) {
    if (a.period != b.period) return a.period < b.period;
    return a.anchor_count != b.anchor_count ? a.anchor_count > b.anchor_count : a.anchor < b.anchor;
  });
  std::vector<Cand> merged;
  for (const Cand& c : by_period) {
    if (!merged.empty() && c.period - merged.back().period <= period_tolerance(merged.back().period)) {
      Cand& m = merged.back();
      m.support += c.support;
      if (c.anchor_count > m.anchor_count || (c.anchor_count == m.anchor_count && c.anchor < m.anchor)) {
        m.anchor = c.anchor;
        m.anchor_count = c.anchor_count;
        m.period = c.period;
      }
      continue;
    }
    merged.push_back(c);
  }
  std::stable_sort(merged.begin(), merged.end(), [](const Cand& a, const Cand& b) { return a.support > b.support; });
  if (merged.size() > kMaxCandidates) merged.resize(kMaxCandidates);
  std::vector<std::pair<std::size_t, std::uint32_t>> out;
  for (const Cand& c : merged) out.emplace_back(c.period, c.anchor);
  return out;
}

// Multiset distance between launches [first, first + len) and the unit whose token counts are
// in m_count_unit (unit_tokens: its distinct tokens).
std::size_t Lane::distance(std::size_t first, std::size_t len, std::span<const std::uint32_t> unit_tokens) {
  std::vector<std::uint32_t> touched;
  for (std::size_t i = first; i < first + len; ++i)
    if (m_count_seg[m_tok[i]]++ == 0) touched.push_back(m_tok[i]);
  std::size_t d = 0;
  for (std::uint32_t t : unit_tokens) d += static_cast<std::size_t>(std::abs(m_count_unit[t] - m_count_seg[t]));
  for (std::uint32_t t : touched) {
    if (m_count_unit[t] == 0) d += static_cast<std::size_t>(m_count_seg[t]);
    m_count_seg[t] = 0;
  }
  return d;
}

// The cuts (the anchor's occurrences, or a phase of them) split the lane into segments; the
// most frequent exact segment is the unit; each segment is compared with it.
Scored Lane::score(std::size_t period, std::uint32_t anchor, std::vector<std::size_t> cuts) {
  Scored s;
  s.period = period;
  s.anchor = anchor;
  const std::vector<std::size_t>& occ = cuts;
  if (occ.size() < 2) return s;
  struct Key {
    std::uint64_t h;
    std::size_t len;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const { return k.h ^ (k.len * 0x9E3779B97F4A7C15ull); }
  };
  std::unordered_map<Key, std::pair<std::size_t, std::size_t>, KeyHash> freq;  // → (count, first)
  for (std::size_t k = 0; k + 1 < occ.size(); ++k) {
    const std::size_t len = occ[k + 1] - occ[k];
    auto [it, fresh] = freq.try_emplace(Key{hash(occ[k], len), len}, 0, occ[k]);
    ++it->second.first;
  }
  std::size_t best = 0;
  for (const auto& [key, cf] : freq)
    if (cf.first > best || (cf.first == best && cf.second < s.unit_first)) {
      best = cf.first;
      s.unit_first = cf.second;
      s.unit_len = key.len;
    }
  const std::uint64_t unit_hash = hash(s.unit_first, s.unit_len);
  std::vector<std::uint32_t> unit_tokens;
  for (std::size_t i = s.unit_first; i < s.unit_first + s.unit_len; ++i)
    if (m_count_unit[m_tok[i]]++ == 0) unit_tokens.push_back(m_tok[i]);
  const std::size_t near = near_limit(s.unit_len);
  for (std::size_t k = 0; k < occ.size(); ++k) {
    Segment g;
    g.first = occ[k];
    g.len = (k + 1 < occ.size() ? occ[k + 1] : size()) - g.first;
    if (g.len >= s.unit_len && hash(g.first, s.unit_len) == unit_hash) {
      g.len = s.unit_len;  // what follows the unit runs between iterations
    } else {
      const std::size_t off = g.len > s.unit_len ? g.len - s.unit_len : s.unit_len - g.len;
      g.diff = off > s.unit_len ? off : distance(g.first, g.len, unit_tokens);
      g.diff = std::max<std::size_t>(g.diff, 1);
    }
    g.repeats = g.diff <= near;
    if (g.repeats) {
      ++s.repeats;
      s.covered += g.len;
      if (g.diff == 0) ++s.exact;
    }
    s.segments.push_back(g);
  }
  for (std::uint32_t t : unit_tokens) m_count_unit[t] = 0;
  return s;
}

// Launches, per iteration of `outer`, inside its repeating stretch that match neither the
// launch `inner` before nor the one `inner` after them; *matched: those equal to the launch
// `inner` before.
std::size_t Lane::outside_repeats(const Scored& outer, std::size_t inner, std::size_t* matched) const {
  std::size_t first = kNone, last = 0;
  for (const Segment& g : outer.segments)
    if (g.repeats) {
      first = std::min(first, g.first);
      last = std::max(last, g.first + g.len);
    }
  std::size_t outside = 0, back = 0;
  for (std::size_t i = first; i < last; ++i) {
    const bool b = i >= inner && m_tok[i] == m_tok[i - inner];
    const bool f = i + inner < size() && m_tok[i] == m_tok[i + inner];
    back += b;
    outside += !b && !f;
  }
  if (matched) *matched = back / std::max<std::size_t>(1, outer.repeats);
  return outside / std::max<std::size_t>(1, outer.repeats);
}

// The unit's launch with the longest median idle before it (over the exact segments), among
// those right after a blocking launch when there are such; ties (within 1 µs or 10 %) go to the
// launch whose kind the lane ran first, then to the earlier one.
std::size_t Lane::phase_offset(const Scored& s) const {
  std::vector<std::int64_t> idle, med(s.unit_len);
  std::vector<char> after_block(s.unit_len, 0);
  for (std::size_t j = 0; j < s.unit_len; ++j) {
    idle.clear();
    std::size_t blocked = 0;
    for (const Segment& g : s.segments) {
      if (g.diff != 0) continue;
      idle.push_back(m_idle[g.first + j]);
      blocked += g.first + j > 0 && m_l[g.first + j - 1].blocking;
    }
    med[j] = median_of(idle);
    after_block[j] = 2 * blocked > idle.size();
  }
  const bool any_block = std::find(after_block.begin(), after_block.end(), 1) != after_block.end();
  std::int64_t top = 0;
  for (std::size_t j = 0; j < s.unit_len; ++j)
    if (after_block[j] || !any_block) top = std::max(top, med[j]);
  const std::int64_t slack = std::max<std::int64_t>(1000, top / 10);
  std::size_t pick = 0, pick_seen = kNone;
  for (std::size_t j = 0; j < s.unit_len; ++j) {
    const std::size_t seen = occurrences(m_tok[s.unit_first + j])[0];
    if ((after_block[j] || !any_block) && med[j] >= top - slack && seen < pick_seen) {
      pick = j;
      pick_seen = seen;
    }
  }
  return pick;
}

// Cuts that start each iteration at offset j of the unit. Around each old cut (an anchor): the
// iteration holding the anchor began unit_len - j launches before it when those launches are
// the unit's tail; else the next one begins j launches after it when those are the unit's head
// (and the next anchor's iteration is not found the first way; the last: a whole unit remains);
// where neither holds (warm-up), at the launch of the unit's kind at j found just before the
// anchor (the r-th such launch back, r its occurrences in unit[j, end)), else j launches after.
std::vector<std::size_t> Lane::rotated_cuts(const Scored& s, std::size_t j) const {
  const std::uint32_t t = m_tok[s.unit_first + j];
  std::size_t r = 0;
  for (std::size_t i = s.unit_first + j; i < s.unit_first + s.unit_len; ++i) r += m_tok[i] == t;
  const auto occ = occurrences(t);
  const std::size_t back = s.unit_len - j;
  const std::uint64_t head = hash(s.unit_first, j), tail = hash(s.unit_first + j, back);
  const std::size_t n = s.segments.size();
  std::vector<char> before(n + 1, 0);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t a = s.segments[k].first;
    before[k] = a >= back && hash(a - back, back) == tail;
  }
  std::vector<std::size_t> cuts;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t a = s.segments[k].first;
    const std::size_t next = k + 1 < n ? s.segments[k + 1].first : size();
    const bool room = k + 1 < n || size() - a - j + near_limit(s.unit_len) >= s.unit_len;
    const bool after = a + j < next && room && hash(a, j) == head;
    if (before[k]) cuts.push_back(a - back);
    if (after && !before[k + 1]) cuts.push_back(a + j);
    if (before[k] || after) continue;
    const auto at = static_cast<std::size_t>(std::lower_bound(occ.begin(), occ.end(), a) - occ.begin());
    if (at >= r && a - occ[at - r] <= back + near_limit(s.unit_len))
      cuts.push_back(occ[at - r]);
    else if (a + j < next)
      cuts.push_back(a + j);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return cuts;
}

IterationStructure Lane::classify(const Scored& s) const {
  IterationStructure out;
  out.lane_launches = size();
  out.unit_launches = s.unit_len;
  const std::size_t n = s.segments.size();
  for (std::size_t k = 0; k < n; ++k) {
    const Segment& g = s.segments[k];
    Iteration it;
    it.index = static_cast<std::int64_t>(k);
    it.first = g.first;
    it.launches = g.len;
    it.differences = g.diff;
    it.start_ns = std::numeric_limits<std::int64_t>::max();
    it.end_ns = std::numeric_limits<std::int64_t>::min();
    for (std::size_t i = g.first; i < g.first + g.len; ++i) {
      it.start_ns = std::min(it.start_ns, m_l[i].start_ns);
      it.end_ns = std::max(it.end_ns, m_l[i].end_ns);
    }
    out.iterations.push_back(it);
  }
  // Wall time: start to the next start; the last one: its span plus the median pause after.
  std::vector<std::int64_t> wall(n), pause;
  for (std::size_t k = 0; k + 1 < n; ++k) {
    wall[k] = sat_sub(out.iterations[k + 1].start_ns, out.iterations[k].start_ns);
    pause.push_back(std::max<std::int64_t>(0, sat_sub(out.iterations[k + 1].start_ns, out.iterations[k].end_ns)));
  }
  wall[n - 1] = sat_add(sat_sub(out.iterations[n - 1].end_ns, out.iterations[n - 1].start_ns), median_of(pause));
  std::vector<std::int64_t> later;
  for (std::size_t k = 1; k < n; ++k)
    if (s.segments[k].repeats) later.push_back(wall[k]);
  const double med = static_cast<double>(median_of(later));
  bool leading = true;
  for (std::size_t k = 0; k < n; ++k) {
    Iteration& it = out.iterations[k];
    const auto w = static_cast<double>(wall[k]);
    if (leading && (!s.segments[k].repeats || w > 1.25 * med)) {
      it.kind = IterationKind::kWarmup;
      continue;
    }
    leading = false;
    it.kind =
        !s.segments[k].repeats || w > 1.5 * med || w < 0.5 * med ? IterationKind::kOutlier : IterationKind::kSteady;
  }
  std::vector<std::int64_t> steady_wall;
  for (std::size_t k = 0; k < n; ++k) {
    const Iteration& it = out.iterations[k];
    if (it.kind == IterationKind::kWarmup) ++out.warmup;
    if (it.kind == IterationKind::kOutlier) ++out.outliers;
    if (it.kind != IterationKind::kSteady) continue;
    ++out.steady;
    out.noisy += it.differences > 0;
    steady_wall.push_back(wall[k]);
  }
  out.median_wall_ns = median_of(steady_wall);
  return out;
}

IterationDetection Lane::detect() {
  IterationDetection out;
  out.launches = size();
  if (size() < kMinRepeats) {
    out.why = NoIterations::kTooFewLaunches;
    return out;
  }
  const auto cands = candidates();
  if (cands.empty()) {
    out.why = NoIterations::kNoRepeat;
    return out;
  }
  std::vector<Scored> valid;
  for (const auto& [period, anchor] : cands) {
    Scored s = score(period, anchor);
    if (s.valid()) valid.push_back(std::move(s));
  }
  if (valid.empty()) {
    out.why = NoIterations::kTooFewRepeats;
    return out;
  }
  std::size_t best_cov = 0;
  for (const Scored& s : valid) best_cov = std::max(best_cov, s.covered);
  std::stable_sort(valid.begin(), valid.end(),
                   [](const Scored& a, const Scored& b) { return a.unit_len > b.unit_len; });
  std::size_t pick = 0;
  while (static_cast<double>(valid[pick].covered) < kOuterCoverage * static_cast<double>(best_cov)) ++pick;
  // An outer period that is a smaller one plus an occasional launch is the smaller one.
  for (bool again = true; again;) {
    again = false;
    for (std::size_t j = pick + 1; j < valid.size(); ++j) {
      const std::size_t q = valid[j].unit_len;
      if (q >= valid[pick].unit_len) continue;
      if (outside_repeats(valid[pick], q, nullptr) < noise_limit(q)) {
        pick = j;
        again = true;
        break;
      }
    }
  }
  Scored chosen = std::move(valid[pick]);
  // Iterations start where the unit idles longest before a launch.
  if (const std::size_t j = phase_offset(chosen); j != 0) {
    Scored rephased = score(chosen.period, chosen.anchor, rotated_cuts(chosen, j));
    if (rephased.valid() && rephased.unit_len == chosen.unit_len) chosen = std::move(rephased);
  }
  IterationStructure st = classify(chosen);
  // The largest smaller period that still repeats >= 3 times inside each iteration.
  for (std::size_t j = pick + 1; j < valid.size(); ++j) {
    const std::size_t q = valid[j].unit_len;
    if (q >= chosen.unit_len || q < 2) continue;  // one kernel run several times in a row is no loop
    std::size_t matched = 0;
    (void)outside_repeats(chosen, q, &matched);
    const std::size_t reps = (matched + q / 2) / q + 1;
    if (reps >= kMinRepeats && 2 * (matched + q) >= chosen.unit_len && q > st.inner_unit_launches) {
      st.inner_unit_launches = q;
      st.inner_repeats = reps;
    }
  }
  if (st.steady < kMinRepeats) {
    out.why = NoIterations::kTooFewRepeats;
    return out;
  }
  out.found = std::move(st);
  return out;
}

}  // namespace

namespace detail {

IterationDetection detect_in_lane(std::vector<LaunchToken> launches, std::vector<std::int64_t> idle) {
  return Lane(std::move(launches), std::move(idle)).detect();
}

}  // namespace detail
}  // namespace gpuscope::core
