// The importer's pass over PyTorch's allocator state: the torch-memory-PID.json files that
// gpuscope's PyTorch hooks write at a process's exit into the trace's log folder
// (collect/python/sitecustomize.py; `gpuscope trace --cuda-memory-usage` or --pytorch=memory
// on a program that imports torch).
//
// File (JSON, format "gpuscope torch memory 1"):
//   {"format", "pid", "time_ns" (CLOCK_REALTIME ns when read), "torch_version",
//    "history_max_entries" (null without --pytorch=memory),
//    "devices": [{"device", "max_reserved", "reserved", "max_allocated", "allocated",
//                 "max_requested", "requested" (bytes: torch.cuda.max_memory_reserved() etc.,
//                 memory_stats()'s requested_bytes.all.peak / .current),
//                 "segments": [{"address", "bytes", "stream", "pool"}],
//                 "history": [[action, address, bytes, stream, time_us], ...] (optional)}]}
// Sources: torch.cuda.memory._snapshot() (segments, device_traces) and the torch.cuda memory
// counters; time_us is PyTorch's CLOCK_REALTIME in microseconds, the trace clock's
// (CUPTI, CLOCK_REALTIME ns) at 1 us resolution.
//
// Writes torch_memory_stats (one row per device), torch_memory_segments and
// torch_memory_events (store/schema_columns.hpp). A history that reached its limit gets a
// 'torch_memory_history_full' data_loss row; a file that cannot be read or parsed, or is
// not this format, an 'unreadable_torch_memory' row (the rest of the trace is imported).
// Addresses above 2^63 are stored as signed 64-bit integers, as memory_events.address.
#pragma once

#include <string>
#include <string_view>

namespace gpuscope::store::detail {

class ImportState;

/// True for a file name the hooks write: "torch-memory-<digits>.json".
[[nodiscard]] bool is_torch_memory_file(std::string_view file_name);

/// Reads one torch-memory file into the tables of `state`. Never throws for a bad file
/// (data_loss row instead); throws DatabaseError only if the database cannot be written.
void import_torch_memory(ImportState& state, const std::string& path);

}  // namespace gpuscope::store::detail
