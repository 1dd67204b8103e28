#include "analyze/comm/nccl_reports.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "analyze/comm/comm_data.hpp"
#include "analyze/comm/comm_findings.hpp"
#include "analyze/common/report_text.hpp"
#include "core/machine_profile.hpp"
#include "core/saturating.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "store/database.hpp"
#include "store/machine_profile_json.hpp"

namespace gpuscope::analyze {
namespace {

using detail::CommData;
using detail::RankFacts;
using store::Database;

constexpr double kNsPerMs = 1e6;
constexpr const char* kNoNccl =
    "no NCCL kernels in the capture range: collectives appear when the traced program communicates through NCCL "
    "(PyTorch DDP/FSDP, torch.distributed with the nccl backend)";

Cell ms(std::int64_t ns) { return static_cast<double>(ns) / kNsPerMs; }
Cell opt_int(const std::optional<std::int64_t>& v) { return v ? Cell{*v} : Cell{std::monostate{}}; }
Cell share(std::int64_t part, std::int64_t whole) { return detail::percent_cell(part, whole); }

// The measured GPU-to-GPU ceiling (B/s) from `gpuscope peak`'s cached profiles of the job's
// GPUs: the slowest measured pair among the job's GPUs (the link that bounds a ring over them),
// else a profile's p2p ceiling (profiles from before every pair was measured).
struct LinkCeiling {
  double bytes_per_s = std::nan("");
  std::string what;  // "GPU 0 to GPU 1", "p2p ceiling"
  std::string problem;
};

LinkCeiling link_ceiling(const std::vector<std::string>& uuids) {
  LinkCeiling c;
  for (const std::string& uuid : uuids) {
    if (uuid.empty()) continue;
    try {
      const std::optional<MachineProfile> p = store::load_cached_profile(uuid);
      if (!p) continue;
      if (const core::PeerLink* l = p->slowest_link(uuids); l != nullptr) {
        c.bytes_per_s = l->bytes_per_s;
        c.what = "the slowest pair of the job's GPUs, GPU " + std::to_string(l->src) + " to GPU " +
                 std::to_string(l->dst) + " (" + l->src_uuid + " to " + l->dst_uuid + ")";
        return c;
      }
      if (const core::Ceiling* link = p->find("p2p");
          link != nullptr && link->measured > 0 && !std::isfinite(c.bytes_per_s)) {
        c.bytes_per_s = link->measured;
        c.what = "the p2p ceiling of " + uuid + " (" + link->method + ")";
      }
    } catch (const std::exception& e) {  // store::ProfileError: a broken file, or no cache folder
      c.problem = e.what();
    }
  }
  return c;
}

constexpr int kUnknownBucket = 1 << 20;  // sorts after every real size range

// Size range of S: [2^k, 2^(k+1)) bytes; -1 for an unknown size, -2 for 0 bytes.
int size_bucket(std::int64_t bytes) {
  if (bytes < 0) return -1;
  if (bytes == 0) return -2;
  int k = 0;
  while (k < 62 && (std::int64_t{1} << (k + 1)) <= bytes) ++k;
  return k;
}

std::string bucket_label(int k) {
  if (k == -1) return "unknown";
  if (k == -2) return "0 B";
  return "[" + units::memory_size(std::ldexp(1.0, k)) + ", " + units::memory_size(std::ldexp(1.0, k + 1)) + ")";
}

}  // namespace

Report nccl_sum(const CommData& d, const detail::StragglerMatch& m) {
  Report r;
  r.name = "nccl_sum";
  r.title = "NCCL Collective Summary";
  r.add_column("Collective", "", ColumnType::kText, ColumnKind::kIdentifier)
      .add_column("Size Range", "", ColumnType::kText, ColumnKind::kIdentifier)
      .add_column("Count", "", ColumnType::kInteger)
      .add_column("Ranks", "", ColumnType::kInteger)
      .add_column("Avg Size", "bytes", ColumnType::kInteger)
      .add_column("Total Time", "ns", ColumnType::kInteger)
      .add_column("Avg Time", "ns", ColumnType::kInteger)
      .add_column("Instances", "", ColumnType::kInteger)
      .add_column("Avg Transfer", "ns", ColumnType::kInteger)
      .add_column("Algbw", "GB/s", ColumnType::kReal)
      .add_column("Busbw", "GB/s", ColumnType::kReal)
      .add_column("Link Ceiling", "%", ColumnType::kReal)
      .add_column("Back-to-Back Instances", "", ColumnType::kInteger)
      .add_column("Back-to-Back Time", "ns", ColumnType::kInteger)
      .add_column("Back-to-Back Busbw", "GB/s", ColumnType::kReal);
  if (d.nccl_kernels == 0) {
    r.add_note(NoteLevel::kInfo, kNoNccl);
    return r;
  }
  // Timed collective instances: how many, their time, and the time and bytes of those with a size.
  struct Timed {
    std::int64_t n = 0, ns = 0, sized_ns = 0;
    double bytes = 0;
    void add(std::int64_t t, std::int64_t s) {
      ++n;
      ns = core::sat_add(ns, t);
      if (s >= 0) {
        sized_ns = core::sat_add(sized_ns, t);
        bytes += static_cast<double>(s);
      }
    }
    // nccl-tests' busbw over the sized ones, GB/s; NaN without any.
    [[nodiscard]] double busbw(double factor) const {
      return sized_ns > 0 || bytes > 0 ? core::algorithm_bandwidth_gbps(bytes, static_cast<double>(sized_ns)) * factor
                                       : std::nan("");
    }
  };
  struct Agg {
    std::int64_t count = 0, ns = 0, sized = 0;  // kernels
    double bytes = 0;
    // Collective instances: each matched one once, a kernel with no partner on its own; timed
    // by the last arrival's kernel.
    Timed transfer;
    // Back-to-back instances (StragglerMatch::paced on every rank taking part): each one's
    // time is the last arrival's, from its previous kernel's end to its own end.
    Timed paced;
    std::vector<bool> ranks;
  };
  std::map<std::tuple<bool, core::NcclCollective, int>, Agg> by;  // generic kernels and unknown sizes last
  const auto agg = [&](core::NcclCollective kind, std::int64_t bytes) -> Agg& {
    int bucket = size_bucket(bytes);
    if (bucket == -1) bucket = kUnknownBucket;
    return by[{kind == core::NcclCollective::kUnknown, kind, bucket}];
  };
  for (std::size_t i = 0; i < d.ranks.size(); ++i) {
    for (std::size_t j = 0; j < d.ranks[i].nccl.size(); ++j) {
      const detail::NcclCall& c = d.ranks[i].nccl[j];
      Agg& a = agg(c.kind, c.bytes);
      a.ranks.resize(d.ranks.size());
      a.ranks[i] = true;
      ++a.count;
      const std::int64_t ns = core::sat_sub(c.end_ns, c.start_ns);
      a.ns = core::sat_add(a.ns, ns);
      if (c.bytes >= 0) {
        ++a.sized;
        a.bytes += static_cast<double>(c.bytes);
      }
      if (!m.matched[i][j]) {  // no partner on another rank: an instance of its own
        a.transfer.add(ns, c.bytes);
        if (m.paced[i][j] >= 0) a.paced.add(m.paced[i][j], c.bytes);
      }
    }
  }
  for (const detail::StragglerMatch::Instance& in : m.order)
    agg(in.kind, in.bytes).transfer.add(in.transfer_ns, in.bytes);
  for (const detail::StragglerMatch::Instance& in : m.order)
    if (in.paced_ns >= 0) agg(in.kind, in.bytes).paced.add(in.paced_ns, in.bytes);
  std::vector<std::string> uuids;
  for (const RankFacts& f : d.ranks)
    if (!f.uuid.empty() && std::find(uuids.begin(), uuids.end(), f.uuid) == uuids.end()) uuids.push_back(f.uuid);
  const LinkCeiling link = link_ceiling(uuids);
  for (const auto& [key, a] : by) {
    const auto [generic, kind, bucket] = key;
    const double algbw = a.transfer.busbw(1.0);
    const double factor = core::bus_bandwidth_factor(kind, d.world_size);
    const double busbw = algbw * factor;
    const double ceiling = busbw * 1e9 / link.bytes_per_s * 100.0;
    const double b2b_busbw = a.paced.sized_ns > 0 ? a.paced.busbw(factor) : std::nan("");
    const auto mean = [](std::int64_t sum, std::int64_t n) {
      return n > 0 ? Cell{static_cast<std::int64_t>(std::llround(static_cast<double>(sum) / static_cast<double>(n)))}
                   : Cell{std::monostate{}};
    };
    r.rows.push_back(Row{std::string(core::collective_name(kind)), bucket_label(bucket == kUnknownBucket ? -1 : bucket),
                         a.count, static_cast<std::int64_t>(std::count(a.ranks.begin(), a.ranks.end(), true)),
                         a.sized > 0
                             ? Cell{static_cast<std::int64_t>(std::llround(a.bytes / static_cast<double>(a.sized)))}
                             : Cell{std::monostate{}},
                         a.ns, mean(a.ns, a.count), a.transfer.n, mean(a.transfer.ns, a.transfer.n),
                         detail::real_or_null(algbw), detail::real_or_null(busbw), detail::real_or_null(ceiling),
                         a.paced.n, mean(a.paced.ns, a.paced.n), detail::real_or_null(b2b_busbw)});
  }
  r.add_note(NoteLevel::kInfo,
             "world size " + std::to_string(d.world_size) +
                 " ranks (the ranks with NCCL kernels, the highest rank + 1 and the launcher's world size, whichever "
                 "is most); Busbw = Algbw x the nccl-tests factor for that many ranks (AllReduce 2(n-1)/n, AllGather, "
                 "ReduceScatter and AllToAll (n-1)/n, others 1)");
  r.add_note(NoteLevel::kInfo,
             "sizes: " + std::to_string(d.sized_kernels) + " of " + std::to_string(d.nccl_kernels) +
                 " kernels have one (the shapes of the PyTorch nccl:* operator that launched them, recorded with "
                 "--pytorch=ops,shapes, times the element size in the kernel name; AllGather, Broadcast and SendRecv "
                 "kernels name no type); Algbw and Busbw are over the instances with a size");
  if (d.generic_kernels > 0)
    r.add_note(NoteLevel::kInfo, std::to_string(d.generic_kernels) +
                                     " kernels are NCCL's generic kernel (ncclDevKernel_Generic), whose name says no "
                                     "collective, and were launched outside a PyTorch communication operator");
  r.add_note(NoteLevel::kInfo,
             "Total Time and Avg Time are kernel durations on every rank: they include the time a rank waits inside "
             "the collective for late ranks (see stragglers). Avg Transfer, Algbw and Busbw are per collective "
             "instance (" +
                 std::to_string(m.instances) +
                 " matched across ranks as stragglers matches them; a kernel with no partner on another rank is an "
                 "instance of its own): its time is the duration of the last-arriving rank's kernel, the collective "
                 "once every rank is in");
  r.add_note(
      NoteLevel::kInfo,
      "Back-to-Back: the instances whose call on every rank was launched while that rank's previous NCCL kernel "
      "(the same collective and size, the same stream) still ran, so that the GPUs, not the CPUs, set the pace, as "
      "in nccl-tests' timed loop; Time is the last arrival's, from its previous kernel's end to its own end, which "
      "adds NCCL's and the runtime's per-call GPU work between the kernels; Busbw over that time is what nccl-tests "
      "reports for such a loop");
  if (std::isfinite(link.bytes_per_s)) {
    r.add_note(NoteLevel::kInfo, "Link Ceiling (%) = Busbw / the peer-to-peer copy bandwidth gpuscope peak measured: " +
                                     link.what + ", " + units::byte_rate(link.bytes_per_s));
  } else {
    r.add_note(NoteLevel::kInfo,
               "Link Ceiling (%) is empty: no measured GPU-to-GPU ceiling for the job's GPUs (run `gpuscope peak` "
               "on the machine: its p2p ceiling measures every GPU pair)" +
                   (link.problem.empty() ? std::string() : ": " + link.problem));
  }
  return r;
}

Report comm_overlap(const CommData& d) {
  Report r;
  r.name = "comm_overlap";
  r.title = "Compute and Communication Overlap";
  r.add_column("Rank", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Device", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Step", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Wall", "ms", ColumnType::kReal)
      .add_column("Compute", "ms", ColumnType::kReal)
      .add_column("Communication", "ms", ColumnType::kReal)
      .add_column("Overlapped", "ms", ColumnType::kReal)
      .add_column("Exposed Comm", "ms", ColumnType::kReal)
      .add_column("Overlap", "%", ColumnType::kReal)
      .add_column("Exposed of Wall", "%", ColumnType::kReal)
      .add_column("PID", "", ColumnType::kInteger, ColumnKind::kIdentifier);
  if (d.nccl_kernels == 0) {
    r.add_note(NoteLevel::kInfo, kNoNccl);
    return r;
  }
  core::OverlapSplit all;
  const auto add = [&](const RankFacts& rank, const std::optional<std::int64_t>& step, const core::OverlapSplit& s) {
    r.rows.push_back(Row{opt_int(rank.rank), rank.device, opt_int(step), ms(s.window_ns), ms(s.compute_ns),
                         ms(s.comm_ns), ms(s.overlapped_ns), ms(s.exposed_ns),
                         detail::real_or_null(s.overlap_percent()), share(s.exposed_ns, s.window_ns),
                         rank.pids.front()});
    all += s;
  };
  for (const RankFacts& rank : d.ranks) {
    if (d.has_steps) {
      for (const detail::StepSplit& s : rank.steps) add(rank, s.step, s.split);
    } else {
      add(rank, std::nullopt, rank.whole);
    }
  }
  const std::string scope = d.has_steps ? "the steps (torch_steps)" : "each rank's span (first to last GPU activity)";
  r.add_note(NoteLevel::kInfo, "all ranks over " + scope + ": communication " + units::duration_ns(all.comm_ns) + ", " +
                                   units::percent(all.overlap_percent()) +
                                   " of it behind compute on the same "
                                   "GPU; exposed communication " +
                                   units::duration_ns(all.exposed_ns) + ", " +
                                   units::percent_of(all.window_ns > 0 ? static_cast<double>(all.exposed_ns) /
                                                                             static_cast<double>(all.window_ns)
                                                                       : std::nan("")) +
                                   " of the wall time");
  r.add_note(NoteLevel::kInfo,
             "compute: the union of a GPU's non-NCCL kernels, communication: the union of its NCCL kernels (any "
             "stream); exposed communication runs while no compute kernel runs on the same GPU; Overlap (%) = "
             "Overlapped / Communication");
  if (d.has_steps) {
    std::string without;
    int n = 0;
    for (const RankFacts& rank : d.ranks)
      if (rank.steps.empty() && n++ < 8) without += (without.empty() ? "" : ", ") + detail::rank_label(rank);
    if (n > 0)
      r.add_note(NoteLevel::kInfo,
                 std::to_string(n) + " rank(s) have no steps and so no rows: " + without + (n > 8 ? ", ..." : ""));
  }
  return r;
}

Report rank_sum(const CommData& d) {
  Report r;
  r.name = "rank_sum";
  r.title = "Rank Summary";
  r.add_column("Rank", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Device", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Local Rank", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Host", "", ColumnType::kText, ColumnKind::kIdentifier)
      .add_column("Wall", "ms", ColumnType::kReal)
      .add_column("Busy", "ms", ColumnType::kReal)
      .add_column("Busy", "%", ColumnType::kReal)
      .add_column("Idle", "ms", ColumnType::kReal)
      .add_column("Communication", "ms", ColumnType::kReal)
      .add_column("Exposed Comm", "ms", ColumnType::kReal)
      .add_column("Steps", "", ColumnType::kInteger)
      .add_column("Median Step", "ms", ColumnType::kReal)
      .add_column("Step vs Median", "%", ColumnType::kReal)
      .add_column("PID", "", ColumnType::kInteger, ColumnKind::kIdentifier);
  if (d.ranks.empty()) {
    r.add_note(NoteLevel::kInfo, "no GPU activity in the capture range");
    return r;
  }
  // Each rank's median step, and the median of those.
  std::vector<double> medians(d.ranks.size(), std::nan(""));
  std::vector<double> known;
  for (std::size_t i = 0; i < d.ranks.size(); ++i) {
    std::vector<double> walls;
    for (const detail::StepSplit& s : d.ranks[i].steps)
      walls.push_back(static_cast<double>(core::sat_sub(s.end_ns, s.start_ns)));
    if (walls.empty()) continue;
    medians[i] = stats::median(walls);
    known.push_back(medians[i]);
  }
  const double job_median = stats::median(known);
  for (std::size_t i = 0; i < d.ranks.size(); ++i) {
    const RankFacts& k = d.ranks[i];
    const std::int64_t wall = core::sat_sub(k.span.end_ns, k.span.start_ns);
    r.rows.push_back(Row{opt_int(k.rank), k.device, opt_int(k.local_rank), k.host, ms(wall), ms(k.busy_ns),
                         share(k.busy_ns, wall), ms(std::max<std::int64_t>(0, wall - k.busy_ns)), ms(k.whole.comm_ns),
                         ms(k.whole.exposed_ns), static_cast<std::int64_t>(k.steps.size()),
                         detail::real_or_null(medians[i] / kNsPerMs),
                         detail::real_or_null((medians[i] - job_median) / job_median * 100.0), k.pids.front()});
  }
  r.add_note(NoteLevel::kInfo,
             "Wall: the rank's first to last GPU activity; Busy: the union of its kernels, copies and sets; "
             "Idle = Wall - Busy; Communication and Exposed Comm as comm_overlap over the whole span");
  if (known.size() >= 2) {
    std::optional<std::size_t> fast, slow;
    for (std::size_t i = 0; i < medians.size(); ++i) {
      if (std::isnan(medians[i])) continue;
      if (!fast || medians[i] < medians[*fast]) fast = i;
      if (!slow || medians[i] > medians[*slow]) slow = i;
    }
    r.add_note(NoteLevel::kInfo,
               "step time across " + std::to_string(known.size()) + " ranks: median " +
                   units::duration(job_median / 1e9) + "; fastest " + detail::rank_label(d.ranks[*fast]) + " " +
                   units::duration(medians[*fast] / 1e9) + ", slowest " + detail::rank_label(d.ranks[*slow]) + " " +
                   units::duration(medians[*slow] / 1e9) + ": a spread of " +
                   units::percent((medians[*slow] - medians[*fast]) / job_median * 100.0) + " of the median");
  } else if (known.empty()) {
    r.add_note(NoteLevel::kInfo,
               "no steps: per-rank step times need training steps (`gpuscope trace --pytorch=ops`, docs/pytorch.md)");
  }
  return r;
}

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

namespace {

// A trace without any NCCL kernel name skips loading its facts (may_have_nccl).
const CommData& no_data() {
  static const CommData d;
  return d;
}
const detail::StragglerMatch& no_match() {
  static const detail::StragglerMatch m;
  return m;
}

// The clocks the reduce aligned, when the summaries came from more than one host.
void add_clock_note(Report& r, const CommData& d) {
  if (d.clocks.size() < 2) return;
  std::string text = "clocks of " + std::to_string(d.clocks.size()) + " hosts aligned onto " +
                     (d.clocks[0].domain.empty() ? std::string("the first summary's") : d.clocks[0].domain) + "'s:";
  for (std::size_t i = 1; i < d.clocks.size(); ++i) {
    const detail::ClockAlignment& c = d.clocks[i];
    text += std::string(i > 1 ? ";" : "") + " " + (c.domain.empty() ? "(no host)" : c.domain) + " ";
    if (c.method == "nccl_kernel_ends") {
      text += "moved by " + std::to_string(c.offset_ns) + " ns (" + std::to_string(c.matched) +
              " collectives' ends; error left up to " +
              (c.residual_max_ns ? units::duration_ns(*c.residual_max_ns) : std::string("?")) + ")";
    } else {
      text += "not moved (no collective on every rank to align by)";
    }
  }
  r.add_note(NoteLevel::kInfo, text);
}

}  // namespace

Report nccl_sum(Database& db) {
  if (!detail::may_have_nccl(db)) return nccl_sum(no_data(), no_match());
  return nccl_sum(detail::comm_data(db), detail::straggler_match(db));
}

Report comm_overlap(Database& db) {
  return comm_overlap(detail::may_have_nccl(db) ? detail::comm_data(db) : no_data());
}

Report rank_sum(Database& db) { return rank_sum(detail::comm_data(db)); }

Report stragglers(Database& db) {
  if (!detail::may_have_nccl(db)) return stragglers(no_data(), no_match());
  return stragglers(detail::comm_data(db), detail::straggler_match(db));
}

Report collective_trace(Database& db, std::int64_t first_rows) {
  if (!detail::may_have_nccl(db)) return collective_trace(no_data(), no_match(), first_rows);
  return collective_trace(detail::comm_data(db), detail::straggler_match(db), first_rows);
}

std::span<const std::string_view> comm_report_names() {
  static constexpr std::string_view kNames[] = {"nccl_sum", "comm_overlap", "rank_sum", "stragglers",
                                                "collective_trace"};
  return kNames;
}

Report comm_report(std::string_view name, const CommData& d, const detail::StragglerMatch& m, std::int64_t first_rows) {
  Report r;
  if (name == "nccl_sum") {
    r = nccl_sum(d, m);
  } else if (name == "comm_overlap") {
    r = comm_overlap(d);
  } else if (name == "rank_sum") {
    r = rank_sum(d);
  } else if (name == "stragglers") {
    r = stragglers(d, m);
  } else if (name == "collective_trace") {
    r = collective_trace(d, m, first_rows);
  } else {
    std::string valid;
    for (std::string_view n : comm_report_names()) valid += (valid.empty() ? "" : ", ") + std::string(n);
    throw std::invalid_argument("report '" + std::string(name) +
                                "' does not run on several traces or on summaries (those run: " + valid + ")");
  }
  add_clock_note(r, d);
  return r;
}

}  // namespace gpuscope::analyze
