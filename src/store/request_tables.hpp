// The importer's pass over the requests that `gpuscope bench serve --session NAME` sent to a
// server running under `gpuscope launch --session NAME`: the file requests-PID.jsonl
// (PID: bench serve's process) that bench serve writes into the session's log folder when
// its run ends (cli/bench_serve.cpp; the same lines as --requests-log, docs/bench.md).
//
// File: JSON lines, one object per request:
//   {"id": X-Request-Id, "index", "warmup", "start_ns", "first_token_ns" (null without a
//    token), "end_ns", "token_ns": [...], "prompt_tokens", "output_tokens",
//    "new_connection", "error" ("" = succeeded), "realtime_minus_monotonic_ns"}
// Times are integer ns on CLOCK_REALTIME, the trace clock (docs/trace-schema.md).
//
// Writes the requests table (store/schema_columns.hpp), one row per line, every line kept
// (also outside the capture windows; the trace's duration_ns is not widened). A line that is
// not such an object, or a file that cannot be opened, gives one 'unreadable_requests'
// data_loss row per file with the number of lines lost; the good lines are kept.
#pragma once

#include <string>
#include <string_view>

namespace gpuscope::store::detail {

class ImportState;

/// True for a file name bench serve writes: "requests-<digits>.jsonl".
[[nodiscard]] bool is_requests_file(std::string_view file_name);

/// Reads one requests file into state.requests. Never throws for a bad file or line
/// (data_loss row instead); throws DatabaseError only if the database cannot be written.
void import_requests(ImportState& state, const std::string& path);

}  // namespace gpuscope::store::detail
