#include "collect/activity_convert.hpp"

#include <cstring>
#include <string_view>

namespace gpuscope::collect {

// The log enums mirror CUPTI's numbering so conversion is a cast; check it.
static_assert(static_cast<int>(log::MemcpyKind::kPtoP) == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
static_assert(static_cast<int>(log::MemcpyKind::kHtoH) == CUPTI_ACTIVITY_MEMCPY_KIND_HTOH);
static_assert(static_cast<int>(log::MemcpyKind::kDtoD) == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD);
static_assert(static_cast<int>(log::MemoryKind::kManagedStatic) == CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC);
static_assert(static_cast<int>(log::MemoryKind::kDevice) == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
static_assert(static_cast<int>(log::SyncType::kContextSynchronize) ==
              CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
static_assert(static_cast<int>(log::SyncType::kStreamWaitEvent) ==
              CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT);
static_assert(static_cast<int>(log::MemoryPoolType::kLocal) == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL);
static_assert(static_cast<int>(log::MemoryPoolType::kImported) == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED);

namespace {
// Values CUPTI may add later map to kUnknown rather than to garbage.
std::uint8_t memcpy_kind(unsigned v) {
  return v <= static_cast<unsigned>(log::MemcpyKind::kPtoP) ? static_cast<std::uint8_t>(v) : 0;
}
std::uint8_t memory_kind(unsigned v) {
  return v <= static_cast<unsigned>(log::MemoryKind::kManagedStatic) ? static_cast<std::uint8_t>(v) : 0;
}
std::uint8_t pool_type(unsigned v) {
  return v <= static_cast<unsigned>(log::MemoryPoolType::kImported) ? static_cast<std::uint8_t>(v) : 0;
}
}  // namespace

bool is_range_profiler_kernel(const char* name, bool kernels_mode) {
  return kernels_mode && name != nullptr && std::string_view(name) == "WaitNs";
}

log::KernelRecord to_kernel_record(const CUpti_ActivityKernel10& k, std::uint64_t name_string) {
  log::KernelRecord r{};
  r.start_ns = k.start;
  r.end_ns = k.end;
  r.queued_ns = k.queued;  // CUPTI_TIMESTAMP_UNKNOWN == 0
  r.submitted_ns = k.submitted;
  r.device_id = k.deviceId;
  r.context_id = k.contextId;
  r.stream_id = k.streamId;
  r.correlation_id = k.correlationId;
  r.grid[0] = k.gridX;
  r.grid[1] = k.gridY;
  r.grid[2] = k.gridZ;
  r.block[0] = k.blockX;
  r.block[1] = k.blockY;
  r.block[2] = k.blockZ;
  r.cluster[0] = k.clusterX;
  r.cluster[1] = k.clusterY;
  r.cluster[2] = k.clusterZ;
  r.registers_per_thread = k.registersPerThread;
  r.static_shared_memory = k.staticSharedMemory;
  r.dynamic_shared_memory = k.dynamicSharedMemory;
  r.local_memory_per_thread = k.localMemoryPerThread;
  r.shared_memory_executed = k.sharedMemoryExecuted;
  r.graph_id = k.graphId;
  r.graph_node_id = k.graphNodeId;
  r.grid_id = k.gridId;
  r.name_string = name_string;
  r.launch_type = k.launchType;
  r.is_device_launched = k.isDeviceLaunched;
  return r;
}

namespace {
// Fields every memcpy/memset record has (CUPTI's and ours use the same meaning).
template <class LogRecord, class CuptiRecord>
LogRecord gpu_memory_op_common(const CuptiRecord& m) {
  LogRecord r{};
  r.start_ns = m.start;
  r.end_ns = m.end;
  r.bytes = m.bytes;
  r.device_id = m.deviceId;
  r.context_id = m.contextId;
  r.stream_id = m.streamId;
  r.correlation_id = m.correlationId;
  r.graph_id = m.graphId;
  r.graph_node_id = m.graphNodeId;
  return r;
}

// Memcpy6 (one device) and MemcpyPtoP4 (peer copy) share these fields.
template <class CuptiMemcpy>
log::MemcpyRecord memcpy_common(const CuptiMemcpy& m) {
  auto r = gpu_memory_op_common<log::MemcpyRecord>(m);
  r.copy_kind = memcpy_kind(m.copyKind);
  r.src_kind = memory_kind(m.srcKind);
  r.dst_kind = memory_kind(m.dstKind);
  r.is_async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0;
  return r;
}
}  // namespace

log::MemcpyRecord to_memcpy_record(const CUpti_ActivityMemcpy6& m) {
  log::MemcpyRecord r = memcpy_common(m);
  r.src_device_id = m.deviceId;
  r.dst_device_id = m.deviceId;
  return r;
}

log::MemcpyRecord to_memcpy_record(const CUpti_ActivityMemcpyPtoP4& m) {
  log::MemcpyRecord r = memcpy_common(m);
  r.src_device_id = m.srcDeviceId;
  r.dst_device_id = m.dstDeviceId;
  return r;
}

log::MemsetRecord to_memset_record(const CUpti_ActivityMemset4& m) {
  auto r = gpu_memory_op_common<log::MemsetRecord>(m);
  r.value = m.value;
  r.memory_kind = memory_kind(m.memoryKind);
  return r;
}

log::ApiRecord to_api_record(const CUpti_ActivityAPI& a, log::ApiDomain domain, std::uint64_t name_string) {
  log::ApiRecord r{};
  r.start_ns = a.start;
  r.end_ns = a.end;
  r.thread_id = a.threadId;
  r.correlation_id = a.correlationId;
  r.cbid = a.cbid;
  r.return_value = static_cast<std::int32_t>(a.returnValue);
  r.name_string = name_string;
  r.domain = static_cast<std::uint8_t>(domain);
  return r;
}

log::ApiRecord to_api_record(const ApiCallRecord& a, std::uint64_t name_string) {
  CUpti_ActivityAPI api{};
  api.start = a.start_ns;
  api.end = a.end_ns;
  api.threadId = a.thread_id;
  api.correlationId = a.correlation_id;
  api.cbid = a.cbid;
  api.returnValue = static_cast<std::uint32_t>(a.return_value);
  log::ApiRecord r = to_api_record(api, a.driver ? log::ApiDomain::kDriver : log::ApiDomain::kRuntime, name_string);
  r.py_stack_id = a.py_stack_id;
  return r;
}

log::SyncRecord to_sync_record(const CUpti_ActivitySynchronization2& s) {
  log::SyncRecord r{};
  r.start_ns = s.start;
  r.end_ns = s.end;
  r.context_id = s.contextId;
  r.stream_id = s.streamId;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE = n/a, kept as is
  r.event_id = s.cudaEventId;
  r.correlation_id = s.correlationId;
  r.return_value = s.returnValue;
  const auto t = static_cast<unsigned>(s.type);
  r.sync_type = t <= static_cast<unsigned>(log::SyncType::kContextSynchronize) ? static_cast<std::uint8_t>(t) : 0;
  return r;
}

log::DeviceRecord to_device_record(const CUpti_ActivityDevice5& d, std::uint64_t name_string,
                                   std::uint32_t memory_clock_khz, std::uint32_t memory_bus_width_bits) {
  static_assert(sizeof(d.uuid.bytes) == sizeof(log::DeviceRecord{}.uuid));
  log::DeviceRecord r{};
  r.device_id = d.id;
  r.name_string = name_string;
  std::memcpy(r.uuid, d.uuid.bytes, sizeof r.uuid);
  r.cc_major = d.computeCapabilityMajor;
  r.cc_minor = d.computeCapabilityMinor;
  r.sm_count = d.numMultiprocessors;
  r.global_memory_bytes = d.globalMemorySize;
  r.global_memory_bandwidth_kbps = d.globalMemoryBandwidth;
  r.l2_cache_bytes = d.l2CacheSize;
  r.core_clock_khz = d.coreClockRate;
  r.memory_clock_khz = memory_clock_khz;
  r.memory_bus_width_bits = memory_bus_width_bits;
  r.max_threads_per_block = d.maxThreadsPerBlock;
  r.max_warps_per_sm = d.maxWarpsPerMultiprocessor;
  r.max_blocks_per_sm = d.maxBlocksPerMultiprocessor;
  r.max_registers_per_sm = d.maxRegistersPerMultiprocessor;
  r.max_registers_per_block = d.maxRegistersPerBlock;
  r.max_shared_memory_per_sm = d.maxSharedMemoryPerMultiprocessor;
  r.max_shared_memory_per_block = d.maxSharedMemoryPerBlock;
  r.num_memcpy_engines = d.numMemcpyEngines;
  r.ecc_enabled = d.eccEnabled;
  return r;
}

log::ContextRecord to_context_record(const CUpti_ActivityContext3& c) {
  log::ContextRecord r{};
  r.context_id = c.contextId;
  r.device_id = c.deviceId;
  r.null_stream_id = c.nullStreamId;
  return r;
}

log::OverheadRecord to_overhead_record(const CUpti_ActivityOverhead3& o) {
  log::OverheadRecord r{};
  r.start_ns = o.start;
  r.end_ns = o.end;
  r.overhead_kind = static_cast<std::uint32_t>(o.overheadKind);
  r.object_kind = static_cast<std::uint32_t>(o.objectKind);
  switch (o.objectKind) {
    case CUPTI_ACTIVITY_OBJECT_PROCESS:
    case CUPTI_ACTIVITY_OBJECT_THREAD:
      r.thread_or_device_id = o.objectId.pt.threadId;
      break;
    case CUPTI_ACTIVITY_OBJECT_DEVICE:
    case CUPTI_ACTIVITY_OBJECT_CONTEXT:
    case CUPTI_ACTIVITY_OBJECT_STREAM:
      r.thread_or_device_id = o.objectId.dcs.deviceId;
      break;
    default:
      r.thread_or_device_id = 0;
      break;
  }
  return r;
}

log::MemoryRecord to_memory_record(const CUpti_ActivityMemory4& m) {
  log::MemoryRecord r{};
  r.ts_ns = m.timestamp;
  r.address = m.address;
  r.bytes = m.bytes;
  r.device_id = m.deviceId;
  r.context_id = m.contextId;  // CUPTI_INVALID_CONTEXT_ID kept as is
  r.stream_id = m.streamId;    // CUPTI_INVALID_STREAM_ID kept as is
  r.correlation_id = m.correlationId;
  switch (m.memoryOperationType) {
    case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION:
      r.operation = static_cast<std::uint8_t>(log::MemoryOperation::kAlloc);
      break;
    case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE:
      r.operation = static_cast<std::uint8_t>(log::MemoryOperation::kFree);
      break;
    default:
      r.operation = static_cast<std::uint8_t>(log::MemoryOperation::kUnknown);
      break;
  }
  r.memory_kind = memory_kind(static_cast<unsigned>(m.memoryKind));
  r.is_async = m.isAsync != 0 ? 1 : 0;
  const auto& pool = m.memoryPoolConfig;
  r.pool_type = pool_type(static_cast<unsigned>(pool.memoryPoolType));
  if (r.pool_type != static_cast<std::uint8_t>(log::MemoryPoolType::kNone)) {
    r.pool_address = pool.address;
    // size and release threshold and utilized size are valid for local pools only (the
    // union holds the owner's process id for an imported pool).
    if (r.pool_type == static_cast<std::uint8_t>(log::MemoryPoolType::kLocal)) {
      r.pool_size = pool.pool.size;
      r.pool_release_threshold = pool.releaseThreshold;
      r.pool_utilized_bytes = pool.utilizedSize;
    }
  }
  return r;
}

log::MemoryRecord to_memory_record(const CUpti_ActivityMemoryPool3& p) {
  log::MemoryRecord r{};
  r.ts_ns = p.timestamp;
  r.address = p.address;
  r.bytes = p.size;
  r.device_id = p.deviceId;
  r.context_id = CUPTI_INVALID_CONTEXT_ID;  // pool records name no context
  r.stream_id = CUPTI_INVALID_STREAM_ID;
  r.correlation_id = p.correlationId;
  switch (p.memoryPoolOperationType) {
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED:
      r.operation = static_cast<std::uint8_t>(log::MemoryOperation::kPoolCreate);
      break;
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED:
      r.operation = static_cast<std::uint8_t>(log::MemoryOperation::kPoolDestroy);
      break;
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED:
      r.operation = static_cast<std::uint8_t>(log::MemoryOperation::kPoolTrim);
      r.pool_min_bytes_to_keep = p.minBytesToKeep;
      break;
    default:
      r.operation = static_cast<std::uint8_t>(log::MemoryOperation::kUnknown);
      break;
  }
  r.memory_kind =
      static_cast<std::uint8_t>(p.isManagedPool != 0 ? log::MemoryKind::kManaged : log::MemoryKind::kDevice);
  r.is_managed_pool = p.isManagedPool != 0 ? 1 : 0;
  r.pool_type = pool_type(static_cast<unsigned>(p.memoryPoolType));
  r.pool_address = p.address;
  if (r.pool_type == static_cast<std::uint8_t>(log::MemoryPoolType::kLocal)) {
    r.pool_size = p.size;
    r.pool_release_threshold = p.releaseThreshold;
    r.pool_utilized_bytes = p.utilizedSize;
  }
  return r;
}

}  // namespace gpuscope::collect
