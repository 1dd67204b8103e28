#include "analyze/comm/comm_data.hpp"

#include "analyze/pytorch/pytorch_reports.hpp"

#include <algorithm>
#include <map>
#include <span>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "analyze/common/analysis_cache.hpp"
#include "core/saturating.hpp"
#include "store/clock_offset.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze::detail {
namespace {

using core::Interval;
using store::Database;
using store::Statement;

// What a PyTorch communication operator says about the kernels it launched.
struct OpFacts {
  core::NcclCollective kind = core::NcclCollective::kUnknown;
  std::int64_t elements = -1;  // -1 without shapes
};

// NCCL kernels' name ids and what each name says.
std::unordered_map<std::int64_t, core::NcclKernelInfo> nccl_names(Database& db) {
  std::unordered_map<std::int64_t, core::NcclKernelInfo> out;
  Statement st = db.prepare(
      "SELECT s.id, s.value FROM strings s WHERE s.id IN (SELECT DISTINCT name_id FROM kernels) AND s.value LIKE "
      "'%nccl%'");
  while (st.step())
    if (auto info = core::parse_nccl_kernel(st.column_text(1))) out.emplace(st.column_int(0), std::move(*info));
  return out;
}

// (pid, correlation id) of each GPU activity launched inside a PyTorch communication operator.
std::map<std::pair<std::int64_t, std::int64_t>, OpFacts> comm_ops(Database& db) {
  std::map<std::pair<std::int64_t, std::int64_t>, OpFacts> out;
  if (!db.has_table("torch_ops") || !db.has_table("torch_op_activities")) return out;
  std::unordered_map<std::int64_t, OpFacts> ops;
  {
    Statement st = db.prepare(
        "SELECT o.nvtx_id, s.value, o.sizes FROM torch_ops o JOIN strings s ON s.id = o.name_id WHERE s.value LIKE "
        "'nccl:%' OR s.value LIKE 'c10d::%'");
    while (st.step()) {
      const std::optional<core::NcclCollective> kind = core::collective_from_op(st.column_text(1));
      if (!kind) continue;
      OpFacts f{*kind, -1};
      if (!st.is_null(2))
        if (const std::optional<std::int64_t> n = core::shape_elements(st.column_text(2))) f.elements = *n;
      ops.emplace(st.column_int(0), f);
    }
  }
  if (ops.empty()) return out;
  Statement st = db.prepare(
      "SELECT t.pid, t.correlation_id, t.op_nvtx_id, COALESCE(o.parent_op, 0), COALESCE(p.parent_op, 0) FROM "
      "torch_op_activities t LEFT JOIN torch_ops o ON o.nvtx_id = t.op_nvtx_id LEFT JOIN torch_ops p ON p.nvtx_id = "
      "o.parent_op");
  while (st.step()) {
    for (int c = 2; c <= 4; ++c) {
      const auto it = ops.find(st.column_int(c));
      if (it == ops.end()) continue;
      out.emplace(std::make_pair(st.column_int(0), st.column_int(1)), it->second);
      break;
    }
  }
  return out;
}

// Copies and sets of every process: (device, interval) by pid.
std::unordered_map<std::int64_t, std::vector<std::pair<std::int64_t, Interval>>> copies(Database& db) {
  std::unordered_map<std::int64_t, std::vector<std::pair<std::int64_t, Interval>>> out;
  Statement st = db.prepare(
      "SELECT pid, device_id, start_ns, end_ns FROM memcpys UNION ALL SELECT pid, device_id, start_ns, end_ns FROM "
      "memsets");
  while (st.step()) out[st.column_int(0)].emplace_back(st.column_int(1), Interval{st.column_int(2), st.column_int(3)});
  return out;
}

bool has_world_size_column(Database& db) {
  return db.query_int("SELECT COUNT(*) FROM pragma_table_info('processes') WHERE name = 'world_size'").value_or(0) > 0;
}

// The intervals of a sorted disjoint union that reach into [start, end).
std::span<const Interval> inside(const std::vector<Interval>& u, std::int64_t start, std::int64_t end) {
  const auto b =
      std::lower_bound(u.begin(), u.end(), start, [](const Interval& i, std::int64_t t) { return i.end_ns <= t; });
  const auto e = std::lower_bound(b, u.end(), end, [](const Interval& i, std::int64_t t) { return i.start_ns < t; });
  return {b, e};
}

// One GPU's intervals of one rank.
struct GpuWork {
  std::vector<Interval> compute, comm, busy;
};

}  // namespace

std::vector<bool> RankFacts::warmup_steps() const {
  std::vector<StepFacts> facts(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    facts[i].start_ns = steps[i].start_ns;
    facts[i].end_ns = steps[i].end_ns;
  }
  classify_steps(facts);
  std::vector<bool> out(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) out[i] = facts[i].kind == StepFacts::Kind::kWarmup;
  return out;
}

std::int64_t RankFacts::step_time_ns() const {
  if (steps.empty()) return core::sat_sub(span.end_ns, span.start_ns);
  const std::vector<bool> warmup = warmup_steps();
  const bool any_after = std::find(warmup.begin(), warmup.end(), false) != warmup.end();
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (!any_after || !warmup[i]) sum = core::sat_add(sum, core::sat_sub(steps[i].end_ns, steps[i].start_ns));
  return sum;
}

bool may_have_nccl(Database& db) {
  return db.query_int("SELECT COUNT(*) FROM (SELECT 1 FROM strings WHERE value LIKE '%nccl%Kernel%' LIMIT 1)")
             .value_or(0) > 0;
}

std::string rank_label(const RankFacts& r) {
  std::string label =
      r.rank ? "rank " + std::to_string(*r.rank) : "pid " + std::to_string(r.pids.empty() ? 0 : r.pids.front());
  if (r.gpus > 1) label += " GPU " + std::to_string(r.device);
  return label;
}

namespace {

using RankKey = std::tuple<int, std::int64_t>;  // (0, rank) or (1, pid)

// The ranks: processes with kernels, grouped by rank (the pids and what processes says of the
// first one).
std::map<RankKey, RankFacts> read_ranks(Database& db) {
  std::map<RankKey, RankFacts> by_key;
  Statement st = db.prepare(
      "SELECT k.pid, p.rank, p.local_rank, p.host FROM (SELECT DISTINCT pid FROM kernels) k LEFT JOIN processes p ON "
      "p.pid = k.pid ORDER BY k.pid");
  while (st.step()) {
    const std::int64_t pid = st.column_int(0);
    const bool ranked = !st.is_null(1);
    RankFacts& r = by_key[{ranked ? 0 : 1, ranked ? st.column_int(1) : pid}];
    if (r.pids.empty()) {
      if (ranked) r.rank = st.column_int(1);
      if (!st.is_null(2)) r.local_rank = st.column_int(2);
      if (!st.is_null(3)) r.host = st.column_text(3);
    }
    r.pids.push_back(pid);
  }
  return by_key;
}

// Every process's steps in one pass (torch_steps has no pid index: a query per rank would
// scan the table once per rank).
std::unordered_map<std::int64_t, std::vector<StepSplit>> steps_by_pid(Database& db) {
  std::unordered_map<std::int64_t, std::vector<StepSplit>> out;
  if (!db.has_table("torch_steps")) return out;
  Statement st = db.prepare("SELECT pid, step, start_ns, end_ns FROM torch_steps ORDER BY pid, step");
  while (st.step()) out[st.column_int(0)].push_back({st.column_int(1), st.column_int(2), st.column_int(3), {}});
  return out;
}

// One GPU of a rank while it is read: its facts and its intervals.
struct Unit {
  RankFacts facts;
  GpuWork work;
  bool any = false;
  void extend(const Interval& i) {
    facts.span = any ? Interval{std::min(facts.span.start_ns, i.start_ns), std::max(facts.span.end_ns, i.end_ns)} : i;
    any = true;
  }
};

// The unit's facts once all its work is in: NCCL calls in start order, the rank's steps, busy
// time, and the compute/communication split over its span and each step.
RankFacts finish(Unit& u, const std::vector<StepSplit>& rank_steps, int gpus) {
  RankFacts& r = u.facts;
  std::sort(r.nccl.begin(), r.nccl.end(), [](const NcclCall& a, const NcclCall& b) {
    return std::tie(a.start_ns, a.stream_id, a.end_ns) < std::tie(b.start_ns, b.stream_id, b.end_ns);
  });
  r.gpus = gpus;
  r.steps = rank_steps;
  r.busy_ns = stats::union_length(std::move(u.work.busy));
  const std::vector<Interval> compute = stats::interval_union(std::move(u.work.compute));
  const std::vector<Interval> comm = stats::interval_union(std::move(u.work.comm));
  r.whole = core::split_overlap(compute, comm, r.span);
  for (StepSplit& s : r.steps)
    s.split = core::split_overlap(inside(compute, s.start_ns, s.end_ns), inside(comm, s.start_ns, s.end_ns),
                                  {s.start_ns, s.end_ns});
  return std::move(r);
}

// Reads the ranks of one trace one at a time: what every rank needs is read once (NCCL kernel
// names, communication operators, copies, steps); kernels per process.
class RankReader {
 public:
  explicit RankReader(Database& db)
      : m_names(nccl_names(db)),
        m_ops(m_names.empty() ? decltype(comm_ops(db)){} : comm_ops(db)),
        m_copies(copies(db)),
        m_steps(steps_by_pid(db)),
        m_kernels(db.prepare("SELECT device_id, stream_id, start_ns, end_ns, COALESCE(name_id, -1), correlation_id "
                             "FROM kernels WHERE pid = ?1")),
        m_uuid(db.prepare("SELECT uuid FROM devices WHERE pid = ?1 AND device_id = ?2 AND uuid IS NOT NULL AND uuid "
                          "<> '' LIMIT 1")),
        m_launch(db.prepare(  // api_calls_corr index: one seek per NCCL kernel
            "SELECT end_ns FROM api_calls WHERE pid = ?1 AND correlation_id = ?2 AND correlation_id <> 0 LIMIT 1")) {}

  // The units of rank `head` (one per GPU, in device order) onto d.ranks; NCCL kernels
  // launched inside a PyTorch communication operator counted in d.op_kernels.
  void read(const RankFacts& head, CommSummary& d) {
    std::map<std::int64_t, Unit> units;  // by device id
    std::vector<StepSplit> rank_steps;
    for (const std::int64_t pid : head.pids) {
      read_kernels(head, pid, units, d);
      if (const auto it = m_copies.find(pid); it != m_copies.end()) {
        for (const auto& [device, i] : it->second) {
          Unit& u = unit(units, head, device, pid);
          u.work.busy.push_back(i);
          u.extend(i);
        }
        m_copies.erase(it);
      }
      if (const auto it = m_steps.find(pid); it != m_steps.end()) {
        rank_steps.insert(rank_steps.end(), it->second.begin(), it->second.end());
        m_steps.erase(it);
      }
    }
    std::stable_sort(rank_steps.begin(), rank_steps.end(),
                     [](const StepSplit& a, const StepSplit& b) { return a.start_ns < b.start_ns; });
    for (auto& [device, u] : units) d.ranks.push_back(finish(u, rank_steps, static_cast<int>(units.size())));
  }

 private:
  // The unit of `device`, made on first use with the rank's facts and its GPU's UUID.
  Unit& unit(std::map<std::int64_t, Unit>& units, const RankFacts& head, std::int64_t device, std::int64_t pid) {
    Unit& u = units[device];
    if (!u.any && u.facts.pids.empty()) {
      u.facts.rank = head.rank;
      u.facts.local_rank = head.local_rank;
      u.facts.host = head.host;
      u.facts.pids = head.pids;
      u.facts.device = device;
      m_uuid.reset();
      m_uuid.bind(1, pid).bind(2, device);
      if (m_uuid.step()) u.facts.uuid = m_uuid.column_text(0);
    }
    return u;
  }

  // The kernels of `pid` into their units: compute, or an NCCL call with its collective,
  // launch and payload.
  void read_kernels(const RankFacts& head, std::int64_t pid, std::map<std::int64_t, Unit>& units, CommSummary& d) {
    Statement& kernels = m_kernels;
    kernels.reset();
    kernels.bind(1, pid);
    while (kernels.step()) {
      const std::int64_t device = kernels.column_int(0);
      const Interval i{kernels.column_int(2), kernels.column_int(3)};
      Unit& u = unit(units, head, device, pid);
      u.work.busy.push_back(i);
      u.extend(i);
      const auto n = m_names.find(kernels.column_int(4));
      if (n == m_names.end()) {
        u.work.compute.push_back(i);
        continue;
      }
      u.work.comm.push_back(i);
      NcclCall c{n->second.collective, device, kernels.column_int(1), i.start_ns, i.end_ns, -1};
      m_launch.reset();
      m_launch.bind(1, pid).bind(2, kernels.column_int(5));
      if (m_launch.step()) c.launch_end_ns = m_launch.column_int(0);
      std::int64_t elements = -1;
      if (const auto op = m_ops.find({pid, kernels.column_int(5)}); op != m_ops.end()) {
        c.kind = op->second.kind;
        elements = op->second.elements;
        ++d.op_kernels;
      }
      // S needs the world size: comm_reduce computes it from the bytes of the elements.
      if (elements >= 0 && elements < (std::int64_t{1} << 59) && n->second.element_bytes > 0)
        c.payload_bytes = elements * n->second.element_bytes;
      u.facts.nccl.push_back(c);
    }
  }

  std::unordered_map<std::int64_t, core::NcclKernelInfo> m_names;
  std::map<std::pair<std::int64_t, std::int64_t>, OpFacts> m_ops;
  std::unordered_map<std::int64_t, std::vector<std::pair<std::int64_t, Interval>>> m_copies;
  std::unordered_map<std::int64_t, std::vector<StepSplit>> m_steps;
  Statement m_kernels, m_uuid, m_launch;
};

}  // namespace

CommSummary comm_map(Database& db) {
  CommSummary d;
  d.clock_domain = db.query_text("SELECT value FROM meta WHERE key = 'host'").value_or("");
  d.merged = db.has_table("merged_traces") && db.query_int("SELECT COUNT(*) FROM merged_traces").value_or(0) > 0;
  const std::map<RankKey, RankFacts> by_key = read_ranks(db);
  if (by_key.empty()) return d;
  RankReader reader(db);
  for (const auto& [key, head] : by_key) reader.read(head, d);
  if (has_world_size_column(db))
    d.world_size = static_cast<int>(db.query_int("SELECT MAX(world_size) FROM processes").value_or(0));
  return d;
}

namespace {

// Every timestamp of a rank, moved by `offset` (0 stays as it is: nothing to move).
void shift(RankFacts& r, std::int64_t offset) {
  if (offset == 0) return;
  const auto move = [&](std::int64_t& t) { t = core::sat_add(t, offset); };
  move(r.span.start_ns);
  move(r.span.end_ns);
  for (StepSplit& s : r.steps) move(s.start_ns), move(s.end_ns);
  for (NcclCall& c : r.nccl) {
    move(c.start_ns), move(c.end_ns);
    if (c.launch_end_ns >= 0) move(c.launch_end_ns);
  }
}

// The ends of the NCCL kernels of every rank of some summaries (store/clock_offset.hpp's
// input), each rank's in start order.
store::RankEnds nccl_ends(const std::vector<CommSummary>& parts, const std::vector<std::size_t>& which) {
  store::RankEnds ends;
  for (const std::size_t p : which) {
    for (const RankFacts& r : parts[p].ranks) {
      if (r.nccl.empty()) continue;
      std::vector<std::int64_t>& e = ends.emplace_back();
      for (const NcclCall& c : r.nccl) e.push_back(c.end_ns);
    }
  }
  return ends;
}

// The reduce's sort key: rank order, then the rankless by pid, then device (as comm_map).
std::tuple<int, std::int64_t, std::int64_t> rank_key(const RankFacts& r) {
  return {r.rank ? 0 : 1, r.rank ? *r.rank : (r.pids.empty() ? 0 : r.pids.front()), r.device};
}

}  // namespace

CommData comm_reduce(std::vector<CommSummary> parts) {
  CommData d;
  // Clock domains in order of first appearance; the first is the reference.
  std::vector<std::string> domains;
  std::vector<std::vector<std::size_t>> members;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const auto it = std::find(domains.begin(), domains.end(), parts[p].clock_domain);
    if (it == domains.end()) {
      domains.push_back(parts[p].clock_domain);
      members.push_back({p});
    } else {
      members[static_cast<std::size_t>(it - domains.begin())].push_back(p);
    }
  }
  if (!domains.empty()) {
    const store::RankEnds reference = nccl_ends(parts, members[0]);
    for (std::size_t i = 0; i < domains.size(); ++i) {
      ClockAlignment a{domains[i], i == 0 ? "reference" : "none", 0, 0, std::nullopt};
      if (i > 0) {
        const store::ClockOffset o = store::estimate_clock_offset(reference, nccl_ends(parts, members[i]));
        if (o.matched > 0) a = {domains[i], "nccl_kernel_ends", o.offset_ns, o.matched, o.residual_max_ns};
        for (const std::size_t p : members[i])
          for (RankFacts& r : parts[p].ranks) shift(r, a.offset_ns);
      } else if (members[0].size() > 1) {
        a.method = "same clock";
      }
      d.clocks.push_back(std::move(a));
    }
  }
  std::int64_t max_rank = -1;
  int nccl_ranks = 0;
  for (CommSummary& part : parts) {
    d.world_size = std::max(d.world_size, part.world_size);
    d.op_kernels += part.op_kernels;
    for (RankFacts& r : part.ranks) d.ranks.push_back(std::move(r));
  }
  std::stable_sort(d.ranks.begin(), d.ranks.end(),
                   [](const RankFacts& a, const RankFacts& b) { return rank_key(a) < rank_key(b); });
  for (const RankFacts& r : d.ranks) {
    d.nccl_kernels += static_cast<std::int64_t>(r.nccl.size());
    d.has_steps = d.has_steps || !r.steps.empty();
    if (!r.nccl.empty()) ++nccl_ranks;
    if (r.rank) max_rank = std::max(max_rank, *r.rank);
    for (const NcclCall& c : r.nccl)
      if (c.kind == core::NcclCollective::kUnknown) ++d.generic_kernels;
  }
  d.world_size = std::max({d.world_size, nccl_ranks, static_cast<int>(max_rank + 1)});
  // S from the element bytes, now that the world size is known.
  for (RankFacts& r : d.ranks) {
    for (NcclCall& c : r.nccl) {
      c.bytes = -1;
      if (c.payload_bytes < 0) continue;
      c.bytes = core::collective_bytes(c.kind, c.payload_bytes, 1, d.world_size).value_or(-1);
      if (c.bytes >= 0) ++d.sized_kernels;
    }
  }
  return d;
}

const CommData& comm_data(Database& db) {
  return cached<CommData>(db, "comm_data", [&] {
    std::vector<CommSummary> one;
    one.push_back(comm_map(db));
    return comm_reduce(std::move(one));
  });
}

}  // namespace gpuscope::analyze::detail
