// cuda_memory: how much GPU memory does the program hold, when is the peak, which call
// made it, and which step holds the most? A report of `gpuscope stats` (-r cuda_memory), on
// a trace recorded with `gpuscope trace --cuda-memory-usage` (the memory_events table).
//
// Memory in use = the device memory a process holds on a device: the sizes of its live
// 'device' and 'device_static' allocations (allocations minus frees since the process
// started), memory_events.in_use_bytes as the importer computed it (store/memory_tracker.hpp:
// a free never seen allocated changes nothing; never negative). Pinned host, managed and
// pageable memory are not counted. Of a physical GPU (GPU index as gpu_util): the sum over
// the processes on it (core/memory_usage.hpp GpuMemorySum).
//
// Rows (Scope says which kind), in this order:
//   'device'  one per physical GPU with allocations or frees, by GPU index: the whole trace.
//   'step'    when the trace has torch_steps rows (gpuscope trace --pytorch): one per step and
//             device of the step's process, in start order;
//   'nvtx'    else one per top-level NVTX range (closed push/pop ranges at depth 0 and
//             start/end ranges; not the PyTorch hooks' operator and module ranges) and
//             device of its process, in start order.
//   A step or range gets no row for a device on which its process held nothing and
//   allocated or freed nothing during it (so none in a process with no allocation on record).
// Columns:
//   Scope, Name         'device' + the device name ("GPU N" if unknown); 'step' + "step N";
//                       'nvtx' + the range's message
//   PID                 the step's or range's process; NULL for 'device' rows (all processes)
//   GPU                 physical GPU index
//   Start (ns)          the step's or range's start, since the trace start (the start of its
//                       wall span, where `stats --from` counts from); NULL for 'device' rows
//   Peak In Use (bytes), Peak In Use (MiB)
//                       the most memory in use: 'device' rows over the whole trace; a step or
//                       range over [start, end), counting what was in use when it started
//   Peak At (ns)        when that level was first reached, since the trace start (the scope's
//                       start when the peak is the level it started with)
//   Peak Call           the API call (api_calls name, e.g. cudaMalloc) of the allocation that
//                       reached the peak; NULL when the peak is the level a step or range
//                       started with, or the call was not recorded
//   Peak Alloc (bytes)  that allocation's size; NULL as Peak Call
//   Allocs, Alloc Bytes (bytes), Frees, Freed Bytes (bytes)
//                       device-memory allocations and frees in the scope ([start, end) for
//                       steps and ranges) and their bytes (a free counts the size of its
//                       allocation; a free never seen allocated counts its own size here
//                       although it did not change memory in use)
//   End In Use (bytes)  memory in use at the end of the trace / of the step or range
//
// Notes (when there are rows): that PyTorch's caching allocator shows as segments (cudaMalloc
// of blocks it keeps and reuses), not tensors, so memory in use compares with
// torch.cuda.memory_reserved(), not memory_allocated(); per GPU the peak in MiB/GiB, its
// share of the device's memory, when and by which call; what was left out (pinned host
// memory, stream-ordered allocations whose pools hold more, frees never seen allocated).
// No memory_events table (a trace from an older gpuscope) or no allocation of device memory
// in it → no rows and one note, "no memory allocations in the capture range: ..." saying to
// trace with --cuda-memory-usage (or "no allocation or free of device memory in the capture
// range" when only host memory was recorded).
// Errors: store::DatabaseError if the database lacks the schema's tables;
// TraceTooLargeError (analyze/common/event_budget.hpp) above the memory budget.
#pragma once

#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

/// The cuda_memory report (see the file comment).
[[nodiscard]] Report cuda_memory(store::Database& db);

}  // namespace gpuscope::analyze
