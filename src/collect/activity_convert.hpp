// Pure conversions from CUPTI 13 activity records to event-log records
// (core/event_log_format.hpp). No CUPTI calls, no clock reads, no I/O: strings
// arrive already interned (ids), so these run on synthetic records in tests.
// Timestamps are copied unchanged (ns, CUPTI clock; 0 = unknown).
#pragma once

#include <cupti.h>

#include <cstdint>

#include "collect/api_ring.hpp"
#include "core/event_log_format.hpp"

namespace gpuscope::collect {

/// CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (or KERNEL) record.
[[nodiscard]] log::KernelRecord to_kernel_record(const CUpti_ActivityKernel10& k, std::uint64_t name_string);

/// True for a kernel CUPTI's range profiler launches itself in user replay (`gpuscope kernels
/// --replay-mode none` and `--cache-control all`): "WaitNs", one per session, traced on H100
/// (2026-11-27) beside the program's kernels, even with kernel activity off around CUPTI's
/// calls. Only in kernels mode (`kernels_mode`): a trace without the range profiler keeps every
/// kernel, whatever its name.
/// `name` may be null (false); it is not read outside kernels mode (no strlen per kernel record).
[[nodiscard]] bool is_range_profiler_kernel(const char* name, bool kernels_mode);

/// CUPTI_ACTIVITY_KIND_MEMCPY record (src/dst device = the record's device).
[[nodiscard]] log::MemcpyRecord to_memcpy_record(const CUpti_ActivityMemcpy6& m);

/// CUPTI_ACTIVITY_KIND_MEMCPY2 (peer-to-peer) record.
[[nodiscard]] log::MemcpyRecord to_memcpy_record(const CUpti_ActivityMemcpyPtoP4& m);

[[nodiscard]] log::MemsetRecord to_memset_record(const CUpti_ActivityMemset4& m);

/// CUPTI_ACTIVITY_KIND_RUNTIME / DRIVER record; `name_string` is the interned
/// cuptiGetCallbackName(domain, cbid).
[[nodiscard]] log::ApiRecord to_api_record(const CUpti_ActivityAPI& a, log::ApiDomain domain,
                                           std::uint64_t name_string);

/// An API call timed by gpuscope's own callbacks (api_ring.hpp); the same record.
[[nodiscard]] log::ApiRecord to_api_record(const ApiCallRecord& a, std::uint64_t name_string);

[[nodiscard]] log::SyncRecord to_sync_record(const CUpti_ActivitySynchronization2& s);

/// CUpti_ActivityDevice5 plus what CUPTI does not report (from
/// cuDeviceGetAttribute; 0 = unknown).
[[nodiscard]] log::DeviceRecord to_device_record(const CUpti_ActivityDevice5& d, std::uint64_t name_string,
                                                 std::uint32_t memory_clock_khz, std::uint32_t memory_bus_width_bits);

[[nodiscard]] log::ContextRecord to_context_record(const CUpti_ActivityContext3& c);

/// thread_or_device_id: the thread id for process/thread objects, else the device id.
[[nodiscard]] log::OverheadRecord to_overhead_record(const CUpti_ActivityOverhead3& o);

/// CUPTI_ACTIVITY_KIND_MEMORY2: one allocation or free (kAlloc / kFree; kUnknown for an
/// operation type CUPTI adds later). The pool fields come from memoryPoolConfig when the
/// memory came from a pool (stream-ordered allocations), else 0.
[[nodiscard]] log::MemoryRecord to_memory_record(const CUpti_ActivityMemory4& m);

/// CUPTI_ACTIVITY_KIND_MEMORY_POOL: a pool created, destroyed or trimmed. address =
/// pool_address = the pool's address; bytes = pool_size = its size.
[[nodiscard]] log::MemoryRecord to_memory_record(const CUpti_ActivityMemoryPool3& p);

}  // namespace gpuscope::collect
