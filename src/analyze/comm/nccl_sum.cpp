// nccl_sum: per collective and size range, the kernels' time and the instances' bandwidth as
// nccl-tests defines it, against the GPU-to-GPU ceiling gpuscope peak measured (nccl_reports.hpp).
#include "analyze/comm/nccl_reports.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analyze/comm/comm_data.hpp"
#include "analyze/comm/comm_findings.hpp"
#include "analyze/comm/comm_report_parts.hpp"
#include "core/machine_profile.hpp"
#include "core/saturating.hpp"
#include "core/units.hpp"
#include "store/machine_profile_json.hpp"

namespace gpuscope::analyze {
namespace {

using detail::CommData;
using detail::RankFacts;
using detail::comm_cells::kNoNccl;

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

Report nccl_sum_columns() {
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

// (generic kernels last, collective, size bucket: unknown sizes last) → its numbers.
using AggKey = std::tuple<bool, core::NcclCollective, int>;

// Every NCCL kernel of every rank into its collective and size range; the instances matched
// across ranks (and the kernels with no partner) as transfers and back-to-back times.
std::map<AggKey, Agg> aggregate(const CommData& d, const detail::StragglerMatch& m) {
  std::map<AggKey, Agg> by;
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
  return by;
}

// The UUIDs of the job's GPUs, each once, in rank order.
std::vector<std::string> job_uuids(const CommData& d) {
  std::vector<std::string> uuids;
  for (const RankFacts& f : d.ranks)
    if (!f.uuid.empty() && std::find(uuids.begin(), uuids.end(), f.uuid) == uuids.end()) uuids.push_back(f.uuid);
  return uuids;
}

// One row per (collective, size range).
void add_rows(Report& r, const std::map<AggKey, Agg>& by, const CommData& d, const LinkCeiling& link) {
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
}

// What the columns mean, the sizes known, the link ceiling used.
void add_notes(Report& r, const CommData& d, const detail::StragglerMatch& m, const LinkCeiling& link) {
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
}

}  // namespace

Report nccl_sum(const CommData& d, const detail::StragglerMatch& m) {
  Report r = nccl_sum_columns();
  if (d.nccl_kernels == 0) {
    r.add_note(NoteLevel::kInfo, kNoNccl);
    return r;
  }
  const LinkCeiling link = link_ceiling(job_uuids(d));
  add_rows(r, aggregate(d, m), d, link);
  add_notes(r, d, m, link);
  return r;
}

}  // namespace gpuscope::analyze
