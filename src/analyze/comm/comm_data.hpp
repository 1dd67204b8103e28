// Internal: what nccl_sum, comm_overlap, rank_sum, stragglers and top's communication
// diagnoses read from a trace with one or more ranks, gathered once per trace state
// (analysis_cache.hpp).
//
// Ranks. A rank is every process with the same processes.rank (DataLoader workers inherit
// $RANK; only processes with kernels count); a process with kernels and no rank is a rank of
// its own, named by its pid. A rank that used several GPUs (one process driving them all, as
// nccl-tests -g N or a stray context on GPU 0) is one unit per GPU ("rank 0 GPU 1"): NCCL's
// ranks are GPUs. Units are in rank order, then the rankless ones by pid, then by device.
// World size: the most of the ranks that ran NCCL kernels, the highest rank + 1 and the
// largest processes.world_size (where the schema has that column).
//
// NCCL kernels: kernels whose name core::parse_nccl_kernel recognises. The collective and
// the size S (bytes, as nccl-tests counts it) come from the PyTorch communication operator
// that launched the kernel, where the trace has one (torch_op_activities: the innermost
// operator holding the launch, or its parent or grandparent, named "nccl:*" or "c10d::*";
// its shapes need --pytorch=ops,shapes) — the kernel name's collective otherwise, and S needs
// the element size from the kernel name (core::collective_bytes); -1 when unknown.
//
// Per unit (one GPU of a rank): compute is the union of its non-NCCL kernels, communication
// the union of its NCCL kernels, busy the union of kernels, copies and sets
// (core/comm_intervals.hpp splits them). Its span: its first GPU activity's start to its
// last one's end.
// Steps: torch_steps of the rank's processes (trace --pytorch), each split over its window.
//
// Map and reduce (issue 20, "Scale"): comm_map reads ONE trace (one rank's, one host's or a
// whole job's) and returns its ranks' facts, a CommSummary, with nothing that needs the other
// ranks (S needs the job's world size: the map keeps the payload, elements x element size);
// comm_reduce joins the summaries of many traces into the job's CommData: aligns the hosts'
// clocks, sorts the ranks, finds the world size, computes S. The one-trace path is
// comm_reduce({comm_map(db)}), so both paths are one code path. analyze/comm/comm_summary.hpp
// writes a CommSummary as JSON (gpuscope comm-summary) and reads it back.
//
// Clocks in the reduce: summaries with the same clock domain (the trace's meta host; a merged
// trace's hosts, already aligned) share a clock. The first summary's domain is the reference;
// every other domain is moved onto it by store::estimate_clock_offset over the ends of its
// ranks' NCCL kernels (as gpuscope merge does), and CommData::clocks says by how much.
//
// Memory: the map holds one rank's intervals at a time and the NCCL kernels of the trace's
// ranks (about 56 bytes each); the reduce holds the summaries (no compute intervals).
#pragma once

#include <cstdint>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/comm_intervals.hpp"
#include "core/nccl.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze::detail {

struct NcclCall {
  core::NcclCollective kind = core::NcclCollective::kUnknown;
  std::int64_t device_id = 0, stream_id = 0, start_ns = 0, end_ns = 0;
  std::int64_t bytes = -1;          // S in bytes; -1 when unknown (set by comm_reduce)
  std::int64_t payload_bytes = -1;  // elements x element size from the PyTorch operator; -1 unknown
  std::int64_t launch_end_ns = -1;  // end of the API call that launched it (api_calls); -1 unknown
};

struct StepSplit {
  std::int64_t step = 0, start_ns = 0, end_ns = 0;
  core::OverlapSplit split;  // over [start_ns, end_ns)
};

/// One GPU of one rank (the unit NCCL calls a rank); "rank" below means this unit.
struct RankFacts {
  std::optional<std::int64_t> rank, local_rank;
  std::int64_t device = 0;         // CUDA device ordinal in its process
  int gpus = 1;                    // GPUs its rank (process) used: > 1 splits a process into units
  std::vector<std::int64_t> pids;  // ascending
  std::string host;                // processes.host of its first process, "" if unknown
  std::string uuid;                // its GPU's UUID, "" if unknown
  core::Interval span;             // first to last GPU activity
  std::int64_t busy_ns = 0;        // union of its kernels, copies and sets
  core::OverlapSplit whole;        // over the span
  std::vector<StepSplit> steps;    // in step order
  std::vector<NcclCall> nccl;      // in start order
  /// Per step (as `steps`): a warm-up step, as step_sum classifies them
  /// (analyze/pytorch/pytorch_reports.hpp classify_steps: the first step, holding start-up such as
  /// NCCL's and DDP's initialisation, and each next one while over 1.25 x the median of the
  /// later ones).
  [[nodiscard]] std::vector<bool> warmup_steps() const;
  /// Σ the walls of the steps after warm-up (of every step when all are warm-up); the span's
  /// length without steps.
  [[nodiscard]] std::int64_t step_time_ns() const;
};

/// The map's output for one trace: its ranks (NcclCall::bytes still -1) and what the reduce
/// cannot recompute from them.
struct CommSummary {
  std::vector<RankFacts> ranks;  // in rank order, then the rankless ones by pid, then device
  int world_size = 0;            // the largest processes.world_size; 0 when not recorded
  std::int64_t op_kernels = 0;   // NCCL kernels launched inside a PyTorch communication operator
  std::string clock_domain;      // meta host (a merged trace's hosts, comma-separated); "" unknown
  bool merged = false;           // a gpuscope merge output: its hosts are already on one clock
  std::string source;            // the trace's path, for messages; "" for an in-memory one
};

/// How comm_reduce moved one clock domain onto the reference's clock.
struct ClockAlignment {
  std::string domain;
  std::string method;          // "reference", "same clock", "nccl_kernel_ends", "none"
  std::int64_t offset_ns = 0;  // added to the domain's timestamps
  std::size_t matched = 0;     // collectives the estimate used
  std::optional<std::int64_t> residual_max_ns;
};

struct CommData {
  std::vector<RankFacts> ranks;
  int world_size = 0;
  std::int64_t nccl_kernels = 0;       // Σ over ranks
  std::int64_t generic_kernels = 0;    // with no collective in the name
  std::int64_t sized_kernels = 0;      // with S known
  std::int64_t op_kernels = 0;         // launched inside a PyTorch communication operator
  bool has_steps = false;              // some rank has torch_steps
  std::vector<ClockAlignment> clocks;  // one per clock domain, the reference first (the reduce)
};

/// The map: one trace's ranks (file comment). Errors: store::DatabaseError.
[[nodiscard]] CommSummary comm_map(store::Database& db);

/// The reduce: the job's facts from the summaries of its traces (file comment). The same
/// rank in two summaries stays two units. Pure: no I/O.
[[nodiscard]] CommData comm_reduce(std::vector<CommSummary> parts);

/// The facts above, computed once per trace state. Errors: store::DatabaseError.
[[nodiscard]] const CommData& comm_data(store::Database& db);

/// Whether any string of the trace looks like an NCCL kernel's name ("%nccl%Kernel%"): a
/// cheap test (the strings table only) before comm_data on traces without NCCL.
[[nodiscard]] bool may_have_nccl(store::Database& db);

/// "rank 3", or "pid 4012" for a process without a rank.
[[nodiscard]] std::string rank_label(const RankFacts& r);

}  // namespace gpuscope::analyze::detail
