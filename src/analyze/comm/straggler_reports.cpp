// stragglers and collective_trace: the collectives matched across ranks (comm_findings.hpp's
// match_collectives), per rank and per instance (nccl_reports.hpp).
#include "analyze/comm/nccl_reports.hpp"

#include <string>

#include "analyze/comm/comm_data.hpp"
#include "analyze/comm/comm_findings.hpp"
#include "analyze/comm/comm_report_parts.hpp"
#include "core/saturating.hpp"
#include "core/units.hpp"

namespace gpuscope::analyze {

using detail::CommData;
using detail::RankFacts;
using namespace detail::comm_cells;  // the shared cells and note (comm_report_parts.hpp)

Report stragglers(const CommData& d, const detail::StragglerMatch& m) {
  Report r;
  r.name = "stragglers";
  r.title = "Stragglers";
  r.add_column("Rank", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Device", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Last Arrivals", "", ColumnType::kInteger)
      .add_column("Last", "%", ColumnType::kReal)
      .add_column("Held Back", "ms", ColumnType::kReal)
      .add_column("Held Back", "%", ColumnType::kReal)
      .add_column("Others Waited", "ms", ColumnType::kReal)
      .add_column("Waited", "ms", ColumnType::kReal)
      .add_column("Avg Arrival Delay", "us", ColumnType::kReal)
      .add_column("Last From Step", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("PID", "", ColumnType::kInteger, ColumnKind::kIdentifier);
  if (d.nccl_kernels == 0) {
    r.add_note(NoteLevel::kInfo, kNoNccl);
    return r;
  }
  if (m.instances == 0) {
    r.add_note(NoteLevel::kInfo, "no collective ran on two or more ranks: nothing to compare (" +
                                     std::to_string(d.nccl_kernels) + " NCCL kernels on " +
                                     std::to_string(m.participants) + " rank(s))");
    return r;
  }
  for (std::size_t i = 0; i < d.ranks.size(); ++i) {
    const detail::RankStraggle& s = m.per_rank[i];
    if (s.instances == 0) continue;
    r.rows.push_back(Row{opt_int(d.ranks[i].rank), d.ranks[i].device, s.last, share(s.last, s.instances),
                         ms(s.held_back_ns),
                         detail::real_or_null(static_cast<double>(s.held_back_steady_ns) / m.step_time_ns * 100.0),
                         ms(s.others_waited_ns), ms(s.waited_ns),
                         detail::real_or_null(s.delay_sum_ns / static_cast<double>(s.instances) / 1e3),
                         opt_int(s.onset_step), d.ranks[i].pids.front()});
  }
  const detail::CommFindings f = detail::comm_findings(d, m);
  if (f.straggler)
    r.add_note(f.straggler_fires() ? NoteLevel::kWarning : NoteLevel::kInfo, detail::straggler_sentence(d, m, f));
  r.add_note(NoteLevel::kInfo, std::to_string(m.instances) +
                                   " collective instances matched across ranks (the k-th NCCL kernel of each "
                                   "collective on every rank that runs it, in start order)" +
                                   (m.unmatched > 0 ? "; " + std::to_string(m.unmatched) +
                                                          " kernels past the fewest any rank has were left out"
                                                    : std::string()));
  r.add_note(NoteLevel::kInfo,
             "arrival: the start of a rank's kernel; Held Back: the time between the last arrival and the one before "
             "it, summed over the instances where this rank came last; Held Back (%): that time in the steps after "
             "warm-up (the first step, with NCCL's and DDP's start-up, and the slow ones after it, as step_sum "
             "classifies them) as a share of the mean time of those steps (" +
                 units::duration_ns(m.step_time_ns) + (d.has_steps ? " of steps" : " of wall time, no steps") +
                 "); Others Waited: the time the other ranks waited in those instances; Waited: this rank's own wait "
                 "for the last one; Last From Step: the first step of its longest run of steps in a row (two or more) "
                 "in which it held the job back most, by at least 5 % of the step");
  return r;
}

Report collective_trace(const CommData& d, const detail::StragglerMatch& m, std::int64_t first_rows) {
  Report r;
  r.name = "collective_trace";
  r.title = "NCCL Collective Instances";
  r.add_column("Start", "ns", ColumnType::kInteger)
      .add_column("Collective", "", ColumnType::kText, ColumnKind::kIdentifier)
      .add_column("Number", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Step", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Ranks", "", ColumnType::kInteger)
      .add_column("Last Rank", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Lateness", "ns", ColumnType::kInteger)
      .add_column("Spread", "ns", ColumnType::kInteger)
      .add_column("Others Waited", "ns", ColumnType::kInteger)
      .add_column("Transfer", "ns", ColumnType::kInteger)
      .add_column("Size", "bytes", ColumnType::kInteger);
  if (d.nccl_kernels == 0) {
    r.add_note(NoteLevel::kInfo, kNoNccl);
    return r;
  }
  if (m.instances == 0) {
    r.add_note(NoteLevel::kInfo, "no collective ran on two or more ranks: nothing to compare");
    return r;
  }
  for (const detail::StragglerMatch::Instance& in : m.order) {
    if (first_rows > 0 && static_cast<std::int64_t>(r.rows.size()) >= first_rows) break;
    const RankFacts& last = d.ranks[in.last];
    const bool strictly = in.lateness_ns > 0;
    r.rows.push_back(Row{
        core::sat_sub(in.last_arrival_ns, in.spread_ns), std::string(core::collective_name(in.kind)), in.k,
        opt_int(in.step), in.ranks, strictly && last.rank ? Cell{*last.rank} : Cell{std::monostate{}}, in.lateness_ns,
        in.spread_ns, in.waited_ns, in.transfer_ns, in.bytes >= 0 ? Cell{in.bytes} : Cell{std::monostate{}}});
  }
  r.add_note(NoteLevel::kInfo,
             "Start: the first rank's arrival (kernel start); Number: the instance's place among its collective's "
             "kernels on every rank; Last Rank: the rank that arrived strictly last (empty on a tie, or for a "
             "process without a rank); Lateness: last minus next-to-last arrival; Spread: last minus first; Others "
             "Waited: the other ranks' waits for the last, summed; Transfer: the last rank's kernel duration");
  return r;
}

}  // namespace gpuscope::analyze
