// core/iteration_detector: the steady state of a program found from its GPU work alone — the
// repeating unit of launches (a training step, a decode step, one pass of a C++ loop) and its
// iterations, which of them are warm-up and which are steady. No flags, no step marks: only the
// sequence of launches in launch order. Pure: no I/O, no SQLite (analyze/timeline/iterations
// reads a trace into it and words its result).
//
// Algorithm (docs/steady-state.md has the reasoning and its limits):
//   1. Per lane (launching thread), tokens are compared by identity only (kernel name, copy kind).
//   2. Candidate periods: each token seen >= 3 times whose gaps between occurrences (in launches)
//      mostly (>= half) equal their median gives that median as a candidate period; its
//      occurrences are anchors that cut the sequence into segments.
//   3. Each candidate is scored by its segments: the most frequent exact segment (by hash) is the
//      unit; a segment equal to it, or within max(2, unit/50) launches of it counted as a
//      multiset (an occasional extra kernel; at most a fifth of the unit, at least 1), repeats it. A segment longer
//      than the unit that starts with it is cut to it (what follows runs between iterations).
//   4. The outermost candidate that repeats >= 3 times and covers >= 80 % of the launches the best
//      candidate covers wins, unless almost all of it is a smaller period repeated (fewer than
//      max(2, inner/20) launches per iteration outside the inner repeats: a kernel added every
//      k iterations), in which case the smaller one wins. A smaller period (of 2 launches or
//      more) that still repeats >= 3 times inside the winner, over at least half of it, is its inner unit
//      (decode steps inside a request). At least 3 iterations must be steady.
//   5. Phase: iterations start right after a blocking launch of the unit (the host waited for
//      the GPU there: loss.item(), a synchronous copy) when it has one, and among those (or all
//      launches) at the one with the longest median idle before it (GPU idle plus CPU time
//      between launch calls, over all lanes of the process), ties to the launch seen first.
//   6. Iterations whose launches differ from the unit, or whose wall time (start to next start)
//      is over 1.25 x the median of the later ones, are warm-up while they lead; later ones that
//      differ, or run over 1.5 x or under 0.5 x the median, are outliers (the same thresholds as
//      the PyTorch step classification, analyze/pytorch classify_steps).
// Cost: O(n log n) for n launches (sorting tokens), then O(n) per candidate period (at most 16).
// One lane's search: iteration_detector.cpp; the process's lanes: iteration_lanes.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace gpuscope::core {

/// One unit of GPU work as the detector sees it.
struct LaunchToken {
  std::int64_t token = 0;      // what ran: equal tokens are the same work (kernel name id, copy kind)
  std::int64_t start_ns = 0;   // GPU start, trace clock
  std::int64_t end_ns = 0;     // GPU end, trace clock
  std::int64_t lane = 0;       // who launched it: the thread (or the stream when the thread is unknown)
  std::int64_t launch_ns = 0;  // CPU start of the launch call, trace clock; 0 = unknown
  bool blocking = false;       // the host waited for it: a copy whose call returned after it ended
};

enum class IterationKind { kSteady, kWarmup, kOutlier };

struct Iteration {
  std::int64_t index = 0;          // 0-based, in order, warm-up and outliers included
  std::int64_t start_ns = 0;       // earliest GPU start among its launches
  std::int64_t end_ns = 0;         // latest GPU end among its launches
  std::size_t first = 0;           // its first launch: index among the lane's launches, in launch order
  std::size_t launches = 0;        // how many launches it holds
  std::size_t differences = 0;     // launches more, fewer or other than the unit's (multiset); 0 = the unit
  std::size_t other_launches = 0;  // other lanes' launches made between its first launch and the next
                                   // iteration's (the last one: its own last launch); its times span them
  IterationKind kind = IterationKind::kSteady;
};

struct IterationStructure {
  std::int64_t lane = 0;                             // the lane the iterations were found on
  std::size_t lanes = 0;                             // lanes looked at
  std::size_t lane_launches = 0;                     // launches on that lane
  std::size_t unit_launches = 0;                     // launches in the repeating unit (one iteration)
  std::size_t unit_other_launches = 0;               // median other_launches of the steady iterations
  std::size_t inner_unit_launches = 0;               // a smaller unit repeating inside each iteration; 0 = none
  std::size_t inner_repeats = 0;                     // about how many times it repeats per iteration
  std::size_t steady = 0, warmup = 0, outliers = 0;  // iterations of each kind
  std::size_t noisy = 0;                             // steady iterations that are not exactly the unit
  std::int64_t median_wall_ns = 0;                   // median wall time (start to next start) of the steady iterations
  std::vector<Iteration> iterations;
};

enum class NoIterations {
  kTooFewLaunches,  // fewer than 3 launches on every lane
  kNoRepeat,        // no launch recurs at a regular distance: nothing repeats
  kTooFewRepeats,   // something repeats, but fewer than 3 times (or never twice exactly), or
                    // fewer than 3 of its iterations are steady
};

struct IterationDetection {
  std::optional<IterationStructure> found;
  NoIterations why = NoIterations::kNoRepeat;  // when !found
  std::size_t launches = 0;                    // launches looked at, all lanes
};

/// Finds the iterations. `launches`: every launch of one process, each lane's in launch order
/// (lanes may interleave in any way). Each lane is searched on its own (idle times are taken over
/// the whole process, in launch_ns order, else start_ns); the lane whose steady iterations hold
/// the most launches wins (ties: the lane seen first), and each iteration then also spans the
/// other lanes' work launched during it. Never throws on odd input: an empty or short sequence
/// gives kTooFewLaunches, end_ns < start_ns is kept as is.
[[nodiscard]] IterationDetection detect_iterations(std::span<const LaunchToken> launches);

/// Same, for one lane's launches (in launch order), ignoring LaunchToken::lane.
[[nodiscard]] IterationDetection detect_iterations_in_lane(std::span<const LaunchToken> launches);

/// The window the steady iterations span: (first steady start, last steady end), trace clock ns;
/// nullopt when fewer than 2 iterations are steady.
[[nodiscard]] std::optional<std::pair<std::int64_t, std::int64_t>> steady_iterations_window(
    const IterationStructure& s);

namespace detail {
/// The search of one lane (iteration_detector.cpp): its launches in launch order and the idle
/// before each, in ns (iteration_lanes.cpp takes it over the whole process).
[[nodiscard]] IterationDetection detect_in_lane(std::vector<LaunchToken> launches, std::vector<std::int64_t> idle);
}  // namespace detail

}  // namespace gpuscope::core
