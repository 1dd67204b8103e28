#include "collect/activity_convert.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace gpuscope::collect {
namespace {

// Log records are packed (core/event_log_format.hpp): EXPECT_EQ takes its arguments by
// reference, and a reference to a misaligned field is undefined behaviour; compare a copy.
template <typename T>
T v(T field) {
  return field;
}

TEST(ActivityConvert, Kernel) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 1000;
  k.end = 2500;
  k.queued = 0;  // CUPTI_TIMESTAMP_UNKNOWN
  k.submitted = 900;
  k.deviceId = 1;
  k.contextId = 2;
  k.streamId = 7;
  k.correlationId = 42;
  k.gridX = 128;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.clusterX = 2;
  k.clusterY = 1;
  k.clusterZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 4096;
  k.localMemoryPerThread = 16;
  k.sharedMemoryExecuted = 65536;
  k.graphId = 3;
  k.graphNodeId = 99;
  k.gridId = -5;
  k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_CBL_COMMANDLIST;
  k.isDeviceLaunched = 1;
  const auto r = to_kernel_record(k, 17);
  EXPECT_EQ(v(r.start_ns), 1000u);
  EXPECT_EQ(v(r.end_ns), 2500u);
  EXPECT_EQ(v(r.queued_ns), 0u);
  EXPECT_EQ(v(r.submitted_ns), 900u);
  EXPECT_EQ(v(r.device_id), 1u);
  EXPECT_EQ(v(r.context_id), 2u);
  EXPECT_EQ(v(r.stream_id), 7u);
  EXPECT_EQ(v(r.correlation_id), 42u);
  EXPECT_EQ(v(r.grid[0]), 128);
  EXPECT_EQ(v(r.grid[1]), 2);
  EXPECT_EQ(v(r.block[0]), 256);
  EXPECT_EQ(v(r.cluster[0]), 2u);
  EXPECT_EQ(v(r.registers_per_thread), 32u);
  EXPECT_EQ(v(r.static_shared_memory), 1024);
  EXPECT_EQ(v(r.dynamic_shared_memory), 4096);
  EXPECT_EQ(v(r.local_memory_per_thread), 16u);
  EXPECT_EQ(v(r.shared_memory_executed), 65536u);
  EXPECT_EQ(v(r.graph_id), 3u);
  EXPECT_EQ(v(r.graph_node_id), 99u);
  EXPECT_EQ(v(r.grid_id), -5);
  EXPECT_EQ(v(r.name_string), 17u);
  EXPECT_EQ(v(r.launch_type), CUPTI_ACTIVITY_LAUNCH_TYPE_CBL_COMMANDLIST);
  EXPECT_EQ(v(r.is_device_launched), 1);
}

TEST(ActivityConvert, RangeProfilerKernelIsLeftOutInKernelsModeOnly) {
  EXPECT_TRUE(collect::is_range_profiler_kernel("WaitNs", true));
  EXPECT_FALSE(collect::is_range_profiler_kernel("WaitNs", false));  // a plain trace keeps every kernel
  EXPECT_FALSE(collect::is_range_profiler_kernel("copy_f4", true));
  EXPECT_FALSE(collect::is_range_profiler_kernel("WaitNsX", true));
  EXPECT_FALSE(collect::is_range_profiler_kernel(nullptr, true));  // a record without a name
}

TEST(ActivityConvert, MemcpyAndPeer) {
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  m.bytes = 1 << 20;
  m.start = 10;
  m.end = 20;
  m.deviceId = 3;
  m.contextId = 4;
  m.streamId = 5;
  m.correlationId = 6;
  m.graphId = 0;
  auto r = to_memcpy_record(m);
  EXPECT_EQ(v(r.copy_kind), static_cast<std::uint8_t>(log::MemcpyKind::kHtoD));
  EXPECT_EQ(v(r.src_kind), static_cast<std::uint8_t>(log::MemoryKind::kPinned));
  EXPECT_EQ(v(r.dst_kind), static_cast<std::uint8_t>(log::MemoryKind::kDevice));
  EXPECT_EQ(v(r.is_async), 1);
  EXPECT_EQ(v(r.bytes), 1u << 20);
  EXPECT_EQ(v(r.src_device_id), 3u);
  EXPECT_EQ(v(r.dst_device_id), 3u);
  EXPECT_EQ(v(r.correlation_id), 6u);

  m.flags = 0;
  m.copyKind = 200;  // unknown future value
  r = to_memcpy_record(m);
  EXPECT_EQ(v(r.is_async), 0);
  EXPECT_EQ(v(r.copy_kind), 0);

  CUpti_ActivityMemcpyPtoP4 p{};
  p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.deviceId = 0;
  p.srcDeviceId = 0;
  p.dstDeviceId = 1;
  p.bytes = 64;
  const auto q = to_memcpy_record(p);
  EXPECT_EQ(q.copy_kind, static_cast<std::uint8_t>(log::MemcpyKind::kPtoP));
  EXPECT_EQ(q.src_device_id, 0u);
  EXPECT_EQ(q.dst_device_id, 1u);
}

TEST(ActivityConvert, MemsetApiSync) {
  CUpti_ActivityMemset4 s{};
  s.value = 0xab;
  s.bytes = 4096;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  s.streamId = 9;
  const auto ms = to_memset_record(s);
  EXPECT_EQ(ms.value, 0xabu);
  EXPECT_EQ(ms.bytes, 4096u);
  EXPECT_EQ(ms.memory_kind, static_cast<std::uint8_t>(log::MemoryKind::kManaged));
  EXPECT_EQ(ms.stream_id, 9u);

  CUpti_ActivityAPI a{};
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  a.start = 1;
  a.end = 2;
  a.threadId = 12345;
  a.correlationId = 77;
  a.returnValue = 0;
  const auto api = to_api_record(a, log::ApiDomain::kRuntime, 5);
  EXPECT_EQ(api.thread_id, 12345u);
  EXPECT_EQ(api.cbid, static_cast<std::uint32_t>(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  EXPECT_EQ(api.correlation_id, 77u);
  EXPECT_EQ(api.name_string, 5u);
  EXPECT_EQ(api.domain, static_cast<std::uint8_t>(log::ApiDomain::kRuntime));

  // The same call timed by gpuscope's own callbacks (--cuda-api=gpu): the same record.
  ApiCallRecord c;
  c.start_ns = 1;
  c.end_ns = 2;
  c.thread_id = 12345;
  c.correlation_id = 77;
  c.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  c.return_value = 700;  // CUDA_ERROR_ILLEGAL_ADDRESS
  c.driver = 1;
  const auto cb = to_api_record(c, 6);
  EXPECT_EQ(cb.start_ns, 1u);
  EXPECT_EQ(cb.end_ns, 2u);
  EXPECT_EQ(cb.thread_id, 12345u);
  EXPECT_EQ(cb.correlation_id, 77u);
  EXPECT_EQ(cb.cbid, static_cast<std::uint32_t>(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  EXPECT_EQ(cb.return_value, 700);
  EXPECT_EQ(cb.name_string, 6u);
  EXPECT_EQ(cb.domain, static_cast<std::uint8_t>(log::ApiDomain::kDriver));

  CUpti_ActivitySynchronization2 y{};
  y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  y.streamId = 3;
  y.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  y.correlationId = 8;
  const auto sync = to_sync_record(y);
  EXPECT_EQ(sync.sync_type, static_cast<std::uint8_t>(log::SyncType::kStreamSynchronize));
  EXPECT_EQ(sync.event_id, 0xffffffffu);
  EXPECT_EQ(sync.stream_id, 3u);
}

TEST(ActivityConvert, DeviceContextOverhead) {
  CUpti_ActivityDevice5 d{};
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = 0;
  d.computeCapabilityMajor = 9;
  d.computeCapabilityMinor = 0;
  d.numMultiprocessors = 132;
  d.globalMemorySize = 80ull << 30;
  d.globalMemoryBandwidth = 3'350'000'000ull;
  d.l2CacheSize = 50 << 20;
  d.coreClockRate = 1'980'000;
  d.maxThreadsPerBlock = 1024;
  d.maxWarpsPerMultiprocessor = 64;
  d.eccEnabled = 1;
  for (int i = 0; i < 16; ++i) d.uuid.bytes[i] = static_cast<char>(i + 1);
  const auto r = to_device_record(d, 3, 2'619'000, 5120);
  EXPECT_EQ(v(r.cc_major), 9u);
  EXPECT_EQ(v(r.sm_count), 132u);
  EXPECT_EQ(v(r.global_memory_bytes), 80ull << 30);
  EXPECT_EQ(v(r.global_memory_bandwidth_kbps), 3'350'000'000ull);
  EXPECT_EQ(v(r.memory_clock_khz), 2'619'000u);
  EXPECT_EQ(v(r.memory_bus_width_bits), 5120u);
  EXPECT_EQ(v(r.name_string), 3u);
  EXPECT_EQ(v(r.uuid[0]), 1);
  EXPECT_EQ(v(r.uuid[15]), 16);
  EXPECT_EQ(v(r.ecc_enabled), 1u);

  CUpti_ActivityContext3 c{};
  c.contextId = 1;
  c.deviceId = 0;
  c.nullStreamId = 7;
  const auto cr = to_context_record(c);
  EXPECT_EQ(cr.context_id, 1u);
  EXPECT_EQ(cr.null_stream_id, 7u);

  CUpti_ActivityOverhead3 o{};
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.processId = 10;
  o.objectId.pt.threadId = 11;
  o.start = 5;
  o.end = 6;
  auto ov = to_overhead_record(o);
  EXPECT_EQ(ov.thread_or_device_id, 11u);
  EXPECT_EQ(ov.overhead_kind, static_cast<std::uint32_t>(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH));
  o.objectKind = CUPTI_ACTIVITY_OBJECT_DEVICE;
  o.objectId.dcs.deviceId = 2;
  ov = to_overhead_record(o);
  EXPECT_EQ(ov.thread_or_device_id, 2u);
}

TEST(ActivityConvert, MemoryAllocationAndFree) {
  CUpti_ActivityMemory4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.correlationId = 77;
  m.address = 0x7f0000200000ull;
  m.bytes = 20u << 20;
  m.timestamp = 123456;
  m.deviceId = 1;
  m.contextId = 3;
  m.streamId = CUPTI_INVALID_STREAM_ID;
  m.isAsync = 0;
  m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
  m.memoryPoolConfig.address = 0xdead;  // ignored: not from a pool
  auto r = to_memory_record(m);
  EXPECT_EQ(v(r.ts_ns), 123456u);
  EXPECT_EQ(v(r.address), 0x7f0000200000ull);
  EXPECT_EQ(v(r.bytes), 20u << 20);
  EXPECT_EQ(v(r.device_id), 1u);
  EXPECT_EQ(v(r.context_id), 3u);
  EXPECT_EQ(v(r.stream_id), CUPTI_INVALID_STREAM_ID);
  EXPECT_EQ(v(r.correlation_id), 77u);
  EXPECT_EQ(v(r.operation), static_cast<std::uint8_t>(log::MemoryOperation::kAlloc));
  EXPECT_EQ(v(r.memory_kind), static_cast<std::uint8_t>(log::MemoryKind::kDevice));
  EXPECT_EQ(v(r.is_async), 0u);
  EXPECT_EQ(v(r.pool_type), static_cast<std::uint8_t>(log::MemoryPoolType::kNone));
  EXPECT_EQ(v(r.pool_address), 0u);
  EXPECT_EQ(v(r.pool_size), 0u);

  // A stream-ordered free from a local pool.
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  m.isAsync = 1;
  m.streamId = 13;
  m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  m.memoryPoolConfig.address = 0x50000000;
  m.memoryPoolConfig.releaseThreshold = 1u << 20;
  m.memoryPoolConfig.pool.size = 64u << 20;
  m.memoryPoolConfig.utilizedSize = 20u << 20;
  r = to_memory_record(m);
  EXPECT_EQ(v(r.operation), static_cast<std::uint8_t>(log::MemoryOperation::kFree));
  EXPECT_EQ(v(r.is_async), 1u);
  EXPECT_EQ(v(r.stream_id), 13u);
  EXPECT_EQ(v(r.pool_type), static_cast<std::uint8_t>(log::MemoryPoolType::kLocal));
  EXPECT_EQ(v(r.pool_address), 0x50000000u);
  EXPECT_EQ(v(r.pool_size), 64u << 20);
  EXPECT_EQ(v(r.pool_release_threshold), 1u << 20);
  EXPECT_EQ(v(r.pool_utilized_bytes), 20u << 20);

  // An imported pool: the union holds the owner's process id, not a size.
  m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_IMPORTED;
  m.memoryPoolConfig.pool.processId = 4242;
  r = to_memory_record(m);
  EXPECT_EQ(v(r.pool_type), static_cast<std::uint8_t>(log::MemoryPoolType::kImported));
  EXPECT_EQ(v(r.pool_size), 0u);

  // Values CUPTI may add later read as unknown.
  m.memoryOperationType = static_cast<CUpti_ActivityMemoryOperationType>(9);
  m.memoryKind = static_cast<CUpti_ActivityMemoryKind>(99);
  r = to_memory_record(m);
  EXPECT_EQ(v(r.operation), static_cast<std::uint8_t>(log::MemoryOperation::kUnknown));
  EXPECT_EQ(v(r.memory_kind), static_cast<std::uint8_t>(log::MemoryKind::kUnknown));
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  EXPECT_EQ(v(to_memory_record(m).memory_kind), static_cast<std::uint8_t>(log::MemoryKind::kPinned));
}

TEST(ActivityConvert, MemoryPool) {
  CUpti_ActivityMemoryPool3 p{};
  p.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  p.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED;
  p.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  p.correlationId = 5;
  p.deviceId = 2;
  p.address = 0x60000000;
  p.size = 32u << 20;
  p.releaseThreshold = 4u << 20;
  p.timestamp = 999;
  p.utilizedSize = 0;
  p.minBytesToKeep = 123;  // only a trim's
  auto r = to_memory_record(p);
  EXPECT_EQ(v(r.operation), static_cast<std::uint8_t>(log::MemoryOperation::kPoolCreate));
  EXPECT_EQ(v(r.ts_ns), 999u);
  EXPECT_EQ(v(r.address), 0x60000000u);
  EXPECT_EQ(v(r.pool_address), 0x60000000u);
  EXPECT_EQ(v(r.bytes), 32u << 20);
  EXPECT_EQ(v(r.pool_size), 32u << 20);
  EXPECT_EQ(v(r.pool_release_threshold), 4u << 20);
  EXPECT_EQ(v(r.pool_min_bytes_to_keep), 0u);
  EXPECT_EQ(v(r.device_id), 2u);
  EXPECT_EQ(v(r.correlation_id), 5u);
  EXPECT_EQ(v(r.context_id), CUPTI_INVALID_CONTEXT_ID);
  EXPECT_EQ(v(r.memory_kind), static_cast<std::uint8_t>(log::MemoryKind::kDevice));
  p.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
  p.isManagedPool = 1;
  r = to_memory_record(p);
  EXPECT_EQ(v(r.operation), static_cast<std::uint8_t>(log::MemoryOperation::kPoolTrim));
  EXPECT_EQ(v(r.pool_min_bytes_to_keep), 123u);
  EXPECT_EQ(v(r.memory_kind), static_cast<std::uint8_t>(log::MemoryKind::kManaged));
  EXPECT_EQ(v(r.is_managed_pool), 1u);
  p.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED;
  EXPECT_EQ(v(to_memory_record(p).operation), static_cast<std::uint8_t>(log::MemoryOperation::kPoolDestroy));
}

}  // namespace
}  // namespace gpuscope::collect
