// Internal: the cross-rank arithmetic behind stragglers and top's two communication
// diagnoses, over analyze/comm/comm_data.hpp's facts (computed once per trace state).
//
// Matching (analyze/comm/nccl_reports.hpp says it for users): on every rank the NCCL kernels of
// one collective kind are numbered in start order; the k-th of each rank that has that kind
// is one instance, for k below the fewest any of those ranks has (the rest are counted in
// `unmatched`). An instance needs two or more ranks. Arrivals: core::arrivals on the
// kernels' starts; a rank is "last" only when it arrived strictly after every other one.
// An instance belongs to the step (torch_steps) of its last rank that holds that rank's
// arrival. Per step, the rank that held the job back most in it is that step's straggler;
// a rank's onset is the first step of two or more in a row in which it is (no steps: the
// first instance of three or more in a row at which it came last).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/nccl.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

/// top's diagnoses: exposed communication ≥ 10 % of the step time (all ranks together),
/// and a rank that holds the job back by ≥ 5 % of the step time.
inline constexpr double kExposedCommShare = 0.10;
inline constexpr double kStragglerShare = 0.05;

namespace detail {

struct CommData;  // analyze/comm/comm_data.hpp

struct RankStraggle {
  std::int64_t instances = 0;                  // instances it took part in
  std::int64_t last = 0;                       // instances where it arrived strictly last
  std::int64_t held_back_ns = 0;               // Σ lateness (last − next-to-last) where it was last
  std::int64_t held_back_steady_ns = 0;        // the same in the steps after warm-up (all without steps)
  std::int64_t others_waited_ns = 0;           // Σ the other ranks' waits where it was last
  std::int64_t waited_ns = 0;                  // Σ its own wait for the last arrival
  double delay_sum_ns = 0;                     // Σ (its arrival − the first arrival)
  std::optional<std::int64_t> onset_step;      // step number (torch_steps.step)
  std::optional<std::int64_t> onset_instance;  // index in time order (by last arrival)
};

struct StragglerMatch {
  std::int64_t instances = 0, unmatched = 0;
  int participants = 0;                // ranks with NCCL kernels
  double step_time_ns = 0;             // mean over participants of RankFacts::step_time_ns (after warm-up)
  std::vector<RankStraggle> per_rank;  // as comm_data().ranks
  struct Instance {
    core::NcclCollective kind = core::NcclCollective::kUnknown;
    std::int64_t k = 0;  // its number among the rank's kernels of that kind, from 0
    std::size_t last = 0;
    std::int64_t lateness_ns = 0, last_arrival_ns = 0;
    std::int64_t transfer_ns = 0;      // the last arrival's kernel duration: the collective once all are in
    std::int64_t bytes = -1;           // S of the last arrival's kernel; -1 when unknown
    std::int64_t ranks = 0;            // ranks taking part
    std::int64_t spread_ns = 0;        // last − first arrival
    std::int64_t waited_ns = 0;        // Σ every rank's wait for the last arrival
    std::optional<std::int64_t> step;  // the step of the last arrival (StragglerMatch comment)
    std::int64_t paced_ns = -1;        // back to back on every rank (paced_intervals): the last
                                       // arrival's interval; -1 when any rank's call was not
  };
  std::vector<Instance> order;  // by last arrival
  /// Per rank (as comm_data().ranks), per NCCL kernel (as RankFacts::nccl): in an instance.
  std::vector<std::vector<bool>> matched;
  /// Per rank, per NCCL kernel: the back-to-back time (comm_findings.cpp's paced_intervals; -1:
  /// not back to back).
  std::vector<std::vector<std::int64_t>> paced;
};

/// The matching over a job's facts (comm_data(db) or comm_reduce of summaries).
[[nodiscard]] StragglerMatch match_collectives(const CommData& d);
/// match_collectives(comm_data(db)), computed once per trace state.
[[nodiscard]] const StragglerMatch& straggler_match(store::Database& db);

/// The numbers behind top's two diagnoses.
struct CommFindings {
  // Exposed communication over the steps of all ranks (their spans where no rank has steps).
  std::int64_t comm_ns = 0, exposed_ns = 0, wall_ns = 0;
  std::optional<std::size_t> worst_exposed;  // index into comm_data().ranks
  // The rank that held the others back the most (index into comm_data().ranks).
  std::optional<std::size_t> straggler;
  double straggler_share = 0;  // its held-back time after warm-up / StragglerMatch::step_time_ns
  [[nodiscard]] bool exposed_fires() const {
    return wall_ns > 0 && static_cast<double>(exposed_ns) >= kExposedCommShare * static_cast<double>(wall_ns);
  }
  [[nodiscard]] bool straggler_fires() const { return straggler && straggler_share >= kStragglerShare; }
};

[[nodiscard]] CommFindings comm_findings(const CommData& d, const StragglerMatch& m);
/// The same over a trace (empty without NCCL kernels, cheaply).
[[nodiscard]] CommFindings comm_findings(store::Database& db);

/// "rank 5 holds the job back by 11 % of step time: ..." (stragglers' note, top's evidence).
[[nodiscard]] std::string straggler_sentence(const CommData& d, const StragglerMatch& m, const CommFindings& f);
[[nodiscard]] std::string straggler_sentence(store::Database& db, const CommFindings& f);
/// "exposed communication: ..." (top's evidence).
[[nodiscard]] std::string exposed_sentence(const CommData& d, const CommFindings& f);
[[nodiscard]] std::string exposed_sentence(store::Database& db, const CommFindings& f);

}  // namespace detail
}  // namespace gpuscope::analyze
