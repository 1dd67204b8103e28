// trace_merge: joins traces written on different hosts (one per node, or one per rank under
// srun) into one job trace: `gpuscope merge A.sqlite B.sqlite ... -o job.sqlite`.
//
// Every row of every table of every input is kept (strings and gpu_metric_names are shared:
// one row per distinct value). What changes, table by table, is decided per column from the
// schema (merge_role below), so a new table or column is merged without new code unless it
// holds an id:
//   - pids: an input's pid stays as it is unless an earlier input already used it (two hosts
//     run processes with the same pid); then it becomes pid + 4194304 x k (above any Linux
//     pid, PID_MAX_LIMIT), the smallest k that is free. merged_pids records every mapping.
//   - string ids (*_id columns pointing at strings) and gpu_metric_names ids: remapped to the
//     merged table's ids.
//   - row ids (kernels.id, nvtx_events.id, ...) and the columns pointing at them (parent_id,
//     profile_id, torch_ops.nvtx_id, ...): shifted past the rows of the earlier inputs.
//   - timestamps (unit ns, except intervals and offsets): moved by the input's clock offset
//     onto the first input's clock (store/clock_offset.hpp: from the ends of NCCL kernels,
//     as core::parse_nccl_kernel recognises them). 0 (not recorded) stays 0.
//   - gpu_metrics(_sessions).device_id (the launcher's device index, per host): + 1000 x input.
//   - meta: the first input's, with process_count, host (every host, comma-separated),
//     duration_ns (first capture-window start to last end) and merged_traces updated.
// merged_traces has one row per input with its offset and the error left after it.
//
// The output is written like every gpuscope file (store/atomic_file.hpp): complete or not at
// all. Errors: MergeInputError naming the input for a missing file, a file that is not a
// gpuscope trace, a trace of another schema version (SchemaVersionError's message), a trace
// that is itself a merge, or an input given twice; DatabaseError for SQLite failures.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/atomic_file.hpp"
#include "store/clock_offset.hpp"
#include "store/database.hpp"
#include "store/schema.hpp"

namespace gpuscope::store {

class MergeInputError : public DatabaseError {
 public:
  using DatabaseError::DatabaseError;
};

/// How merge_traces rewrites one column (file comment).
enum class MergeRole {
  kCopy,             // as it is
  kPid,              // the input's pid map
  kParentPid,        // the pid map where the parent is a traced process, else as it is
  kString,           // strings.id
  kRowId,            // + the row-id shift of `target`
  kTime,             // + the clock offset (0 stays 0)
  kGpuMetricDevice,  // + 1000 x input
  kGpuMetricNameId,  // gpu_metric_names.id
};

struct ColumnMerge {
  MergeRole role = MergeRole::kCopy;
  std::string_view target;  // kRowId: the table whose ids the column holds
};

/// The rule for `column` of `table` (tables meta, strings, gpu_metric_names, merged_traces
/// and merged_pids are merged by hand, not by these rules).
[[nodiscard]] ColumnMerge merge_role(std::string_view table, const ColumnDef& column);

struct MergedInput {
  std::string path;
  std::string host;
  std::int64_t processes = 0;
  std::string method;  // merged_traces.offset_method
  ClockOffset offset;
  std::int64_t renumbered_pids = 0;
};

struct MergeResult {
  std::vector<MergedInput> inputs;  // in argument order
};

/// Merges `inputs` (two or more trace files) into `output` (file comment).
[[nodiscard]] MergeResult merge_traces(const std::vector<std::string>& inputs, const std::string& output,
                                       Overwrite overwrite);

}  // namespace gpuscope::store
