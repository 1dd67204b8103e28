// comm_summary: the map's output of the many-GPU reports (analyze/comm/comm_data.hpp's
// CommSummary) as a small JSON document, written by `gpuscope comm-summary TRACE -o
// X.summary.json` and read back by `gpuscope stats X.summary.json Y.summary.json -r ...`
// (the reduce). docs/multi-gpu.md documents the format for users; this is its definition.
//
// Format "gpuscope-comm-summary", version 1 (kCommSummaryVersion). Times are ns on the
// trace's clock (CLOCK_REALTIME of its host, as CUPTI gives it); every interval is [start, end).
//   {"format": "gpuscope-comm-summary", "version": 1,
//    "source": "rank3.sqlite",                       the trace it was made from
//    "clock": {"domain": "node0", "merged": false},  meta host; merged: hosts already aligned
//    "world_size": 64,                               largest processes.world_size, 0 unknown
//    "op_kernels": 200,                              NCCL kernels inside a PyTorch nccl:* op
//    "ranks": [{                                     one per GPU of a rank (comm_data.hpp)
//      "rank": 3, "local_rank": 3,                   null for a process without one
//      "device": 0, "gpus": 1, "pids": [103], "host": "node0", "uuid": "GPU-...",
//      "span": [start, end],                         first to last GPU activity
//      "busy_ns": 123,                               union of kernels, copies and sets
//      "whole": [window, compute, comm, overlapped, exposed],   over the span
//      "steps": [[step, start, end, window, compute, comm, overlapped, exposed], ...],
//      "nccl": [[kind, stream, start, end, payload_bytes], ...]  in start order; kind as
//              core::collective_name spells it ("AllReduce", "Generic" ...); payload_bytes
//              elements x element size, -1 unknown (S needs the job's world size: the reduce)
//    }]}
// Size: about 50 bytes per NCCL kernel and 55 per step (docs/performance.md measures it).
//
// Errors: CommSummaryError naming the file: not JSON, not this format, a field missing or of
// the wrong type, or another version (the message names both versions).
#pragma once

#include <stdexcept>
#include <string>

#include "analyze/comm/comm_data.hpp"

namespace gpuscope::analyze {

inline constexpr int kCommSummaryVersion = 1;
inline constexpr const char* kCommSummaryFormat = "gpuscope-comm-summary";

class CommSummaryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The document above, compact (one line).
[[nodiscard]] std::string comm_summary_json(const detail::CommSummary& s);

/// Parses a document; `source` names it in errors. Throws CommSummaryError.
[[nodiscard]] detail::CommSummary parse_comm_summary(const std::string& text, const std::string& source);

/// Reads and parses the file at `path`. Throws CommSummaryError (also for an unreadable file).
[[nodiscard]] detail::CommSummary read_comm_summary(const std::string& path);

/// Whether the file at `path` looks like a summary (its first non-blank byte is '{'), not a
/// trace: how `gpuscope stats` tells its inputs apart.
[[nodiscard]] bool is_comm_summary_file(const std::string& path);

}  // namespace gpuscope::analyze
