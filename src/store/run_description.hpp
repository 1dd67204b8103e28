// NAME.logs/run.json: what the launcher knows of a run that the per-process event logs do
// not hold (the command line, options, capture range, the tracer-cost calibration, the
// launched pid and how it ended), written into the logs folder beside the .gslog files:
// once before the command starts, again with its pid right after the fork, and a last time
// with its exit status. So a logs folder is complete on its own: `gpuscope import` of the
// logs of a run whose launcher was killed (SIGKILL, the OOM killer, a batch time limit)
// or of logs kept with `--keep-logs` gives the trace `gpuscope trace` would have written.
//
// Format: one JSON object, {"format": "gpuscope-run/1", "command": "...", "launched_pid":
// 123 or 0, "exit_status": int or null, "term_signal": int or null, "start_time": ISO 8601,
// "gpuscope_version", "trace_sources", "capture_range", "meta": {key: text, ...}}.
// Errors: DatabaseError (store/database.hpp) naming the file and, for a bad file, the field.
#pragma once

#include <filesystem>
#include <optional>

#include "store/importer.hpp"

namespace gpuscope::store {

/// The file name inside a logs folder: "run.json".
inline constexpr const char* kRunDescriptionFile = "run.json";

/// Writes `run` (all fields but `overwrite`) to LOG_DIR/run.json, through a temporary file
/// and a rename, so a reader sees the previous or the new description, never half of one.
void write_run_description(const std::filesystem::path& log_dir, const ImportOptions& run);

/// Reads LOG_DIR/run.json into ImportOptions (overwrite false); nullopt when the folder has
/// none (logs of an older gpuscope, or a folder assembled by hand). Throws DatabaseError
/// when the file is there but unreadable, not JSON, of another format, or a field has the
/// wrong type ("run.json: field 'launched_pid' must be an integer, found string").
[[nodiscard]] std::optional<ImportOptions> read_run_description(const std::filesystem::path& log_dir);

}  // namespace gpuscope::store
