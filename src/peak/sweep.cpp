// The coarse-to-fine sweep of `gpuscope peak` (peak/sweep.hpp).
#include "peak/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace gpuscope::peak::detail {
namespace {

bool timed(double v) { return std::isfinite(v) && v > 0; }

// Families in order of first appearance.
std::vector<std::string_view> families_of(std::span<const Trial> trials) {
  std::vector<std::string_view> out;
  for (const Trial& t : trials)
    if (std::find(out.begin(), out.end(), t.family) == out.end()) out.push_back(t.family);
  return out;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : "%.3g", v);
  return buf;
}

}  // namespace

std::vector<std::size_t> select_finalists(std::span<const Trial> trials, std::size_t max_finalists, double within) {
  std::vector<std::size_t> chosen;
  for (std::string_view family : families_of(trials)) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < trials.size(); ++i)
      if (trials[i].family == family && timed(trials[i].coarse) && (!best || trials[i].coarse > trials[*best].coarse))
        best = i;
    if (best) chosen.push_back(*best);
  }
  double top = 0;
  for (const Trial& t : trials)
    if (timed(t.coarse)) top = std::max(top, t.coarse);
  std::vector<std::size_t> rest;
  for (std::size_t i = 0; i < trials.size(); ++i)
    if (timed(trials[i].coarse) && trials[i].coarse >= (1.0 - within) * top &&
        std::find(chosen.begin(), chosen.end(), i) == chosen.end())
      rest.push_back(i);
  std::stable_sort(rest.begin(), rest.end(),
                   [&](std::size_t a, std::size_t b) { return trials[a].coarse > trials[b].coarse; });
  for (std::size_t i : rest) {
    if (chosen.size() >= max_finalists) break;
    chosen.push_back(i);
  }
  return chosen;
}

std::optional<std::size_t> choose_best(std::span<const Trial> trials) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const Trial& t = trials[i];
    if (!timed(t.fine)) continue;
    if (!best) {
      best = i;
      continue;
    }
    const Trial& b = trials[*best];
    if ((t.verified && !b.verified) || (t.verified == b.verified && t.fine > b.fine)) best = i;
  }
  return best;
}

CoarseStats run_coarse(std::vector<Trial>& trials, const std::function<double(std::size_t)>& measure,
                       const std::function<double()>& now_s, double budget_s) {
  CoarseStats stats;
  const double start = now_s();
  std::vector<std::string_view> families_timed;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    Trial& t = trials[i];
    const bool family_new = std::find(families_timed.begin(), families_timed.end(), t.family) == families_timed.end();
    if (now_s() - start >= budget_s && !family_new) {
      ++stats.skipped;
      continue;
    }
    try {
      t.coarse = measure(i);
    } catch (const std::runtime_error& e) {
      t.coarse = kUnknown;
      t.label += std::string(" (failed: ") + e.what() + ")";
    }
    ++stats.timed;
    if (timed(t.coarse) && family_new) families_timed.push_back(t.family);
  }
  stats.seconds = now_s() - start;
  return stats;
}

std::optional<Ceiling> run_fine(std::vector<Trial>& trials, std::span<const std::size_t> finalists,
                                const std::function<Ceiling(std::size_t)>& measure, const CoarseStats& stats,
                                double scale, std::string_view unit) {
  std::vector<Ceiling> fine(trials.size());
  for (std::size_t i : finalists) {
    try {
      fine[i] = measure(i);
    } catch (const std::runtime_error& e) {
      trials[i].label += std::string(" (failed: ") + e.what() + ")";
      continue;
    }
    trials[i].fine = fine[i].measured;
    trials[i].verified = fine[i].verified;
  }
  const std::optional<std::size_t> best = choose_best(trials);
  if (!best) return std::nullopt;
  Ceiling c = std::move(fine[*best]);
  c.method += "; " + describe_families(trials, stats, scale, unit);
  return c;
}

std::string describe_families(std::span<const Trial> trials, const CoarseStats& stats, double scale,
                              std::string_view unit) {
  struct Entry {
    double value;
    std::string text;
  };
  std::vector<Entry> entries;
  std::size_t configurations = 0;
  for (std::string_view family : families_of(trials)) {
    std::optional<std::size_t> fine, coarse;
    std::size_t count = 0;
    for (std::size_t i = 0; i < trials.size(); ++i) {
      const Trial& t = trials[i];
      if (t.family != family) continue;
      ++count;
      if (timed(t.fine) && (!fine || t.fine > trials[*fine].fine)) fine = i;
      if (timed(t.coarse) && (!coarse || t.coarse > trials[*coarse].coarse)) coarse = i;
    }
    configurations += count;
    std::string text = std::string(family) + " ";
    double value = -1;
    if (fine) {
      const Trial& t = trials[*fine];
      value = t.fine;
      text += number(t.fine * scale) + (t.verified ? "" : " (NOT VERIFIED)");
      if (!t.label.empty()) text += " [" + t.label + "]";
    } else if (coarse) {
      const Trial& t = trials[*coarse];
      value = t.coarse;
      text += number(t.coarse * scale) + " coarse";
      if (!t.label.empty()) text += " [" + t.label + "]";
    } else {
      text += "not measured";
    }
    if (count > 1) text += " (best of " + std::to_string(count) + ")";
    entries.push_back(Entry{value, std::move(text)});
  }
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.value > b.value; });
  std::string out = "methods (" + std::string(unit) + "): ";
  for (std::size_t i = 0; i < entries.size(); ++i) out += (i > 0 ? ", " : "") + entries[i].text;
  out += "; " + std::to_string(stats.timed) + " of " + std::to_string(configurations) + " configurations timed";
  if (stats.skipped > 0) out += ", " + std::to_string(stats.skipped) + " skipped (time budget)";
  return out;
}

std::string explain_rate_gap(const Ceiling& slower, const Ceiling& faster, int sm_count) {
  auto clock = [](const Ceiling& c) { return (c.sm_clock_mhz_begin + c.sm_clock_mhz_end) / 2; };
  const double cs = clock(slower), cf = clock(faster);
  if (!timed(slower.measured) || !timed(faster.measured) || !timed(cs) || !timed(cf) || sm_count <= 0) return "";
  if (slower.measured >= 0.98 * faster.measured) return "";
  const double per_cycle_s = slower.measured / (cs * 1e6 * sm_count),
               per_cycle_f = faster.measured / (cf * 1e6 * sm_count);
  char buf[512];
  const double gap = (1 - slower.measured / faster.measured) * 100;
  if (per_cycle_s >= 0.98 * per_cycle_f)
    std::snprintf(buf, sizeof buf,
                  "%s is %.1f %% below %s at the same work per cycle (%.0f vs %.0f FLOP per SM per cycle): its SM "
                  "clock was lower (%.0f vs %.0f MHz), the clock the GPU picks for it (on an H100 FP16 tensor work "
                  "ran 4 %% slower clocked than BF16 with random and with constant inputs, under the power limit "
                  "too: docs/metrics.md)",
                  slower.name.c_str(), gap, faster.name.c_str(), per_cycle_s, per_cycle_f, cs, cf);
  else
    std::snprintf(buf, sizeof buf,
                  "%s is %.1f %% below %s and below it per cycle too (%.0f vs %.0f FLOP per SM per cycle at %.0f "
                  "vs %.0f MHz, each the mean of the clock read before and after the sweep: rough where the "
                  "clock falls during it): the fastest cuBLASLt kernels differ (see each one's methods)",
                  slower.name.c_str(), gap, faster.name.c_str(), per_cycle_s, per_cycle_f, cs, cf);
  return buf;
}

Ceiling with_burst(Ceiling sustained, const Ceiling& burst, double rest_s, double scale, std::string_view unit) {
  if (!timed(burst.measured)) return sustained;
  auto clock = [](double mhz) { return timed(mhz) ? " at SM clock " + number(mhz) + " MHz" : std::string(); };
  const std::string what = "median of " + std::to_string(burst.samples) + " single GEMMs after " + number(rest_s) +
                           " s idle, as torch.matmul is timed";
  if (!timed(sustained.measured) || burst.measured <= sustained.measured) {
    sustained.method += "; a burst (" + what + ") reached " + number(burst.measured * scale) + " " + std::string(unit) +
                        clock(burst.sm_clock_mhz_end) + ": the sweep's value is kept";
    return sustained;
  }
  const std::string sustained_text =
      number(sustained.measured * scale) + " " + std::string(unit) + clock(sustained.sm_clock_mhz_end);
  Ceiling out = std::move(sustained);
  out.measured = burst.measured;
  out.samples = burst.samples;
  out.rel_spread = burst.rel_spread;
  out.sm_clock_mhz_begin = burst.sm_clock_mhz_begin;
  out.sm_clock_mhz_end = burst.sm_clock_mhz_end;
  out.mem_clock_mhz = timed(burst.mem_clock_mhz) ? burst.mem_clock_mhz : out.mem_clock_mhz;
  out.throttled = burst.throttled;
  out.method += "; the value is a burst (" + what + ")" + clock(burst.sm_clock_mhz_end) +
                "; over the sweep's seconds of GEMMs (power-limited clock) it was " + sustained_text;
  return out;
}

}  // namespace gpuscope::peak::detail
