#include "analyze/timeline/iterations.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

using core::IterationDetection;
using core::LaunchToken;
using core::NoIterations;

// Every kernel, memcpy and memset with its launch call's thread and start: one row each, in
// launch order per process.
constexpr const char* kLaunchesSql =
    "WITH a AS (SELECT pid, correlation_id, MIN(tid) AS tid, MIN(start_ns) AS launch_ns, MAX(end_ns) AS call_end "
    "FROM api_calls GROUP BY pid, correlation_id) "
    "SELECT w.pid, w.token, w.kind, w.stream_id, w.start_ns, w.end_ns, a.tid, a.launch_ns, a.call_end FROM ("
    "SELECT pid, name_id AS token, NULL AS kind, stream_id, start_ns, end_ns, correlation_id FROM kernels "
    "UNION ALL SELECT pid, 0, 'memcpy ' || copy_kind, stream_id, start_ns, end_ns, correlation_id FROM memcpys "
    "UNION ALL SELECT pid, 0, 'memset', stream_id, start_ns, end_ns, correlation_id FROM memsets) w "
    "LEFT JOIN a ON a.pid = w.pid AND a.correlation_id = w.correlation_id "
    "ORDER BY w.pid, COALESCE(a.launch_ns, w.start_ns), w.correlation_id, w.start_ns";

// The synchronize calls (cudaStreamSynchronize, cudaDeviceSynchronize, cuCtxSynchronize, ...)
// of every thread: where the host waited for the GPU.
constexpr const char* kSyncsSql =
    "SELECT a.pid, a.tid, a.start_ns, a.end_ns FROM api_calls a JOIN strings s ON s.id = a.name_id "
    "WHERE s.value LIKE '%Synchronize' ORDER BY a.pid, a.tid, a.start_ns";

// Marks each launch that a synchronize call of its thread waited for: one that starts after its
// launch call and before the thread's next launch call and returns after the work ended.
void mark_waited_for(std::vector<LaunchToken>& launches,
                     const std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int64_t>>>& syncs) {
  std::map<std::int64_t, std::size_t> last;  // lane → its previous launch
  auto check = [&](std::size_t i, std::int64_t before_ns) {
    const LaunchToken& l = launches[i];
    const auto it = syncs.find(l.lane);
    if (it == syncs.end() || l.launch_ns <= 0) return;
    const auto& v = it->second;
    for (auto s = std::lower_bound(v.begin(), v.end(), std::make_pair(l.launch_ns, std::int64_t{0}));
         s != v.end() && s->first < before_ns; ++s)
      if (s->second >= l.end_ns) launches[i].blocking = true;
  };
  for (std::size_t i = 0; i < launches.size(); ++i) {
    auto [it, fresh] = last.try_emplace(launches[i].lane, i);
    if (!fresh) {
      check(it->second, launches[i].launch_ns);
      it->second = i;
    }
  }
  for (const auto& [lane, i] : last) check(i, std::numeric_limits<std::int64_t>::max());
}

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string lane_name(std::int64_t lane) {
  return lane >= 0 ? "thread " + std::to_string(lane) : "stream " + std::to_string(-1 - lane);
}

}  // namespace

std::vector<ProcessIterations> trace_iterations(store::Database& db) {
  std::map<std::int64_t, std::vector<LaunchToken>> by_pid;
  std::map<std::string, std::int64_t> copy_tokens;  // memcpy/memset kinds → -1, -2, ... (name ids are >= 0)
  store::Statement st = db.prepare(kLaunchesSql);
  while (st.step()) {
    LaunchToken l;
    if (st.is_null(2)) {
      l.token = st.column_int(1);
    } else {
      auto [it, fresh] = copy_tokens.try_emplace(st.column_text(2), -1 - static_cast<std::int64_t>(copy_tokens.size()));
      l.token = it->second;
    }
    l.start_ns = st.column_int(4);
    l.end_ns = st.column_int(5);
    const bool launched = !st.is_null(6);
    l.lane = launched ? st.column_int(6) : -1 - st.column_int(3);
    l.launch_ns = launched ? st.column_int(7) : 0;
    l.blocking = launched && !st.is_null(2) && st.column_int(8) >= l.end_ns;  // a copy the host waited for
    by_pid[st.column_int(0)].push_back(l);
  }
  std::map<std::int64_t, std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int64_t>>>> syncs;
  store::Statement sy = db.prepare(kSyncsSql);
  while (sy.step()) syncs[sy.column_int(0)][sy.column_int(1)].emplace_back(sy.column_int(2), sy.column_int(3));
  std::vector<ProcessIterations> out;
  for (auto& [pid, launches] : by_pid) {
    mark_waited_for(launches, syncs[pid]);
    ProcessIterations p;
    p.pid = pid;
    p.detection = core::detect_iterations(launches);
    p.note = iterations_note(p.detection);
    out.push_back(std::move(p));
  }
  return out;
}

std::string iterations_note(const IterationDetection& d) {
  if (!d.found) {
    const std::string n = plural(d.launches, "launch", "launches");
    switch (d.why) {
      case NoIterations::kTooFewLaunches:
        return "no repeating GPU work: " + n +
               " (fewer than 3 on each launching thread); judged from the first GPU "
               "work on";
      case NoIterations::kNoRepeat:
        return "no repeating GPU work in " + n +
               ": no kernel recurs at a regular distance; judged from the first GPU "
               "work on";
      case NoIterations::kTooFewRepeats:
        return "no steady state in " + n +
               ": the GPU work repeats fewer than 3 times, or fewer than 3 of its "
               "iterations run alike; judged from the first GPU work on";
    }
  }
  const core::IterationStructure& s = *d.found;
  std::string note = "found " + plural(s.iterations.size(), "iteration", "iterations") + " of " +
                     plural(s.unit_launches, "launch", "launches") + " each on " + lane_name(s.lane);
  if (s.unit_other_launches > 0)
    note += " (and " + std::to_string(s.unit_other_launches) + " from other " + (s.lane >= 0 ? "threads" : "streams") +
            " during each)";
  std::size_t steady_launches = 0;
  for (const core::Iteration& it : s.iterations)
    if (it.kind == core::IterationKind::kSteady) steady_launches += it.launches;
  note += ", " + std::to_string(s.steady) + " steady (median " + core::units::duration_ns(s.median_wall_ns) +
          " each, " +
          core::units::percent(100.0 * static_cast<double>(steady_launches) /
                               static_cast<double>(std::max<std::size_t>(1, s.lane_launches))) +
          " of the " + (s.lane >= 0 ? "thread's" : "stream's") + " launches)";
  std::string left;
  if (s.warmup > 0) left = std::to_string(s.warmup) + " warm-up";
  if (s.outliers > 0) left += (left.empty() ? "" : " and ") + plural(s.outliers, "outlier", "outliers");
  if (!left.empty()) note += "; " + left + " left out";
  if (s.noisy > 0)
    note += "; " + std::to_string(s.noisy) + " steady " + (s.noisy == 1 ? "one holds" : "ones hold") +
            " a few launches more or less than the others";
  if (s.inner_unit_launches > 0)
    note += "; each holds an inner unit of " + plural(s.inner_unit_launches, "launch", "launches") +
            " repeated about " + std::to_string(s.inner_repeats) + " times";
  return note;
}

}  // namespace gpuscope::analyze
