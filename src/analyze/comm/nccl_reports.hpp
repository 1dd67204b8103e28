// The reports of a job on many GPUs (issue 20), over the facts of analyze/comm/comm_data.hpp
// (ranks — one GPU of a process each —, NCCL kernels, compute/communication per rank and
// step). docs/stats.md has every column with its unit.
//
// nccl_sum     per collective and size range: count, size S, time, algbw and busbw as
//              nccl-tests defines them (core/nccl.hpp), % of the measured link ceiling.
// comm_overlap per rank and step (the whole rank without steps): compute, communication,
//              communication hidden behind compute on the same GPU, exposed communication.
// rank_sum     per rank: wall, busy, idle, communication, steps; the step time's spread
//              across ranks in the notes.
// stragglers   per rank: how often it arrived last at a collective, by how much, how long
//              the others waited for it, from which step on; the worst rank in one line.
// collective_trace  per collective instance: its arrivals' spread, the last rank, the waits.
//
// Matching a collective across ranks (stragglers): on every rank the NCCL kernels of one
// collective kind are numbered in start order (all streams together); the k-th of each
// rank that has that kind is one instance. Kernels past the fewest any rank has are left
// out and counted. A rank's arrival is its kernel's start; all ranks are on one clock (one
// host, or a merged trace whose clocks were aligned).
//
// A trace without NCCL kernels gives nccl_sum, comm_overlap, stragglers and collective_trace
// no rows and the note "no NCCL kernels in the capture range: ..."; without GPU activity rank_sum says
// "no GPU activity in the capture range".
// The matching and top's two diagnoses: analyze/comm/comm_findings.hpp.
// Errors: store::DatabaseError if the database lacks the schema's tables/views.
// Files: nccl_sum.cpp, rank_reports.cpp (comm_overlap, rank_sum), straggler_reports.cpp
// (stragglers, collective_trace); the entry points in nccl_reports.cpp (analyze/comm/README.md).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

namespace detail {
struct CommData;        // analyze/comm/comm_data.hpp
struct StragglerMatch;  // analyze/comm/comm_findings.hpp
}  // namespace detail

[[nodiscard]] Report nccl_sum(store::Database& db);
[[nodiscard]] Report comm_overlap(store::Database& db);
[[nodiscard]] Report rank_sum(store::Database& db);
[[nodiscard]] Report stragglers(store::Database& db);
/// collective_trace — one row per collective instance matched across ranks, in time order
/// (the last arrival's): its first arrival, who came last and by how much, the others' waits,
/// the transfer time and size. `first_rows` > 0: only the first that many rows.
[[nodiscard]] Report collective_trace(store::Database& db, std::int64_t first_rows = 0);

// The same reports over a job's facts: the reduce of per-rank summaries (comm_data.hpp's
// comm_reduce, analyze/comm/comm_summary.hpp) and match_collectives of them. The functions above
// are these over comm_data(db): one code path.
[[nodiscard]] Report nccl_sum(const detail::CommData& d, const detail::StragglerMatch& m);
[[nodiscard]] Report comm_overlap(const detail::CommData& d);
[[nodiscard]] Report rank_sum(const detail::CommData& d);
[[nodiscard]] Report stragglers(const detail::CommData& d, const detail::StragglerMatch& m);
[[nodiscard]] Report collective_trace(const detail::CommData& d, const detail::StragglerMatch& m,
                                      std::int64_t first_rows = 0);

/// The reports above that run on summaries: nccl_sum, comm_overlap, rank_sum, stragglers,
/// collective_trace.
[[nodiscard]] std::span<const std::string_view> comm_report_names();
/// One of them by name, with a note naming the clock offsets when the summaries came from
/// several hosts. Unknown name → std::invalid_argument listing the valid ones.
[[nodiscard]] Report comm_report(std::string_view name, const detail::CommData& d, const detail::StragglerMatch& m,
                                 std::int64_t first_rows = 0);

}  // namespace gpuscope::analyze
