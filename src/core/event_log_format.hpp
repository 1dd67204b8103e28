// gpuscope event log: the one contract between the in-process collector
// (src/collect, writer side) and the importer (src/store, reader side).
//
// A log is one file per traced process: a FileHeader, then records. Each
// record is a RecordHeader followed by `size` payload bytes. Payloads are the
// packed POD structs below (little-endian, as written by x86-64/aarch64 hosts);
// a String record's payload is a StringRecord followed by the UTF-8 bytes.
// Strings are interned per log: every *_string field is an id of a String
// record that appears earlier in the same file (0 = no string).
//
// The file is append-only and written in whole batches with write(2), so a
// crash or SIGKILL of the target leaves a readable prefix; a reader stops at the
// first truncated record and reports the bytes it could not read.
//
// Timestamps are ns on CUPTI's clock (cuptiGetTimestamp, CLOCK_REALTIME on
// Linux), the same for every process of one host, so logs merge on one clock.
//
// Versioning: bump kFormatVersion on any layout change; readers refuse other
// versions with an error naming both (see store/event_log_reader.hpp). A new record
// kind appended to RecordKind is not a layout change: logs without it read as before,
// and a reader that does not know it skips and counts it (unknown_log_records).
#pragma once

#include <cstdint>

namespace gpuscope::core::log {

inline constexpr char kMagic[8] = {'G', 'S', 'C', 'O', 'P', 'E', 'L', 'G'};
inline constexpr std::uint32_t kFormatVersion = 1;

#pragma pack(push, 1)

struct FileHeader {
  char magic[8];
  std::uint32_t format_version;
  std::uint32_t header_size;  // sizeof(FileHeader)
  std::uint32_t pid;
  std::uint32_t reserved;
};

enum class RecordKind : std::uint16_t {
  kString = 1,
  kProcess = 2,
  kDevice = 3,
  kContext = 4,
  kKernel = 5,
  kMemcpy = 6,
  kMemset = 7,
  kApi = 8,
  kSync = 9,
  kNvtx = 10,
  kNvtxDomain = 11,
  kThreadName = 12,
  kOverhead = 13,
  kDataLoss = 14,
  kCapture = 15,
  kProcessEnd = 16,
  kMessage = 17,
  kKernelProfile = 18,
  kKernelMetric = 19,
  kMemory = 20,             // MemoryRecord (gpuscope trace --cuda-memory-usage)
  kGpuMetricsSession = 21,  // GpuMetricsSessionRecord + metric name ids (gpuscope trace --gpu-metrics)
  kGpuMetricSample = 22,    // GpuMetricSampleRecord + values
  kRank = 23,               // RankRecord: rank, local rank, world size and the launcher that set them
  kTorchOp = 24,            // TorchOpRecord: a PyTorch operator or module range edge (--pytorch=ops,modules)
  kTorchOpCost = 25,        // TorchOpCostRecord: what recording one operator call costs the program
  kPyFrame = 26,            // PyFrameRecord: a Python frame (file, line, function) of the call-site stacks
  kPyStack = 27,            // PyStackRecord: a Python call site (caller's stack, frame)
  kPySample = 28,           // PySampleRecord: a Python thread's stack at a sampler tick (--python-sampling)
};

struct RecordHeader {
  std::uint16_t kind;   // RecordKind
  std::uint16_t flags;  // reserved, 0
  std::uint32_t size;   // payload bytes that follow
};

// Payload: StringRecord then (size - sizeof(StringRecord)) UTF-8 bytes, no NUL.
struct StringRecord {
  std::uint64_t id;  // > 0, unique within the log
};

struct ProcessRecord {
  std::uint32_t pid;
  std::uint32_t ppid;
  std::uint64_t start_ns;             // CUPTI clock, at collector start
  std::uint64_t host_string;          // hostname
  std::uint64_t cmdline_string;       // argv joined by '\0' (from /proc/self/cmdline)
  std::uint64_t exe_string;           // /proc/self/exe target
  std::uint64_t version_string;       // gpuscope version of the collector
  std::int32_t rank;                  // the launcher's rank (RankRecord), -1 if none
  std::int32_t local_rank;            // the launcher's local rank, -1 if none
  std::uint32_t cupti_api_version;    // cuptiGetVersion
  std::uint32_t cuda_driver_version;  // cuDriverGetVersion, 0 if unknown
};

// From CUpti_ActivityDevice5 (+ cuDeviceGetAttribute for clocks).
struct DeviceRecord {
  std::uint32_t device_id;
  std::uint64_t name_string;
  std::uint8_t uuid[16];
  std::uint32_t cc_major;
  std::uint32_t cc_minor;
  std::uint32_t sm_count;
  std::uint64_t global_memory_bytes;
  std::uint64_t global_memory_bandwidth_kbps;  // CUPTI: KB/s
  std::uint32_t l2_cache_bytes;
  std::uint32_t core_clock_khz;         // CUPTI coreClockRate
  std::uint32_t memory_clock_khz;       // cuDeviceGetAttribute, 0 if unknown
  std::uint32_t memory_bus_width_bits;  // 0 if unknown
  std::uint32_t max_threads_per_block;
  std::uint32_t max_warps_per_sm;
  std::uint32_t max_blocks_per_sm;
  std::uint32_t max_registers_per_sm;
  std::uint32_t max_registers_per_block;
  std::uint32_t max_shared_memory_per_sm;
  std::uint32_t max_shared_memory_per_block;
  std::uint32_t num_memcpy_engines;
  std::uint32_t ecc_enabled;
};

struct ContextRecord {
  std::uint32_t context_id;
  std::uint32_t device_id;
  std::uint32_t null_stream_id;
};

// From CUpti_ActivityKernel10 (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).
struct KernelRecord {
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  std::uint64_t queued_ns;     // 0 = not recorded
  std::uint64_t submitted_ns;  // 0 = not recorded
  std::uint32_t device_id;
  std::uint32_t context_id;
  std::uint32_t stream_id;
  std::uint32_t correlation_id;
  std::int32_t grid[3];
  std::int32_t block[3];
  std::uint32_t cluster[3];
  std::uint32_t registers_per_thread;
  std::int32_t static_shared_memory;      // bytes
  std::int32_t dynamic_shared_memory;     // bytes
  std::uint32_t local_memory_per_thread;  // bytes
  std::uint32_t shared_memory_executed;   // bytes (carveout)
  std::uint32_t graph_id;                 // 0 = not from a graph
  std::uint64_t graph_node_id;            // 0 = not from a graph
  std::int64_t grid_id;
  std::uint64_t name_string;  // mangled name as CUPTI reports it
  std::uint8_t launch_type;   // CUpti_ActivityLaunchType
  std::uint8_t is_device_launched;
  std::uint8_t pad[6];
};

enum class MemcpyKind : std::uint8_t {  // = CUpti_ActivityMemcpyKind
  kUnknown = 0,
  kHtoD = 1,
  kDtoH = 2,
  kHtoA = 3,
  kAtoH = 4,
  kAtoA = 5,
  kAtoD = 6,
  kDtoA = 7,
  kDtoD = 8,
  kHtoH = 9,
  kPtoP = 10,
};

enum class MemoryKind : std::uint8_t {  // = CUpti_ActivityMemoryKind
  kUnknown = 0,
  kPageable = 1,
  kPinned = 2,
  kDevice = 3,
  kArray = 4,
  kManaged = 5,
  kDeviceStatic = 6,
  kManagedStatic = 7,
};

// From CUpti_ActivityMemcpy6 and CUpti_ActivityMemcpyPtoP4.
struct MemcpyRecord {
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  std::uint64_t bytes;
  std::uint32_t device_id;
  std::uint32_t context_id;
  std::uint32_t stream_id;
  std::uint32_t correlation_id;
  std::uint32_t src_device_id;  // = device_id except for peer copies
  std::uint32_t dst_device_id;
  std::uint32_t graph_id;
  std::uint64_t graph_node_id;
  std::uint8_t copy_kind;  // MemcpyKind
  std::uint8_t src_kind;   // MemoryKind
  std::uint8_t dst_kind;   // MemoryKind
  std::uint8_t is_async;   // CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC
};

// From CUpti_ActivityMemset4.
struct MemsetRecord {
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  std::uint64_t bytes;
  std::uint32_t value;
  std::uint32_t device_id;
  std::uint32_t context_id;
  std::uint32_t stream_id;
  std::uint32_t correlation_id;
  std::uint32_t graph_id;
  std::uint64_t graph_node_id;
  std::uint8_t memory_kind;  // MemoryKind
  std::uint8_t pad[7];
};

enum class ApiDomain : std::uint8_t { kRuntime = 1, kDriver = 2 };

// From CUpti_ActivityAPI (CUPTI_ACTIVITY_KIND_RUNTIME / _DRIVER).
struct ApiRecord {
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  std::uint32_t thread_id;  // OS thread id (gettid), CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
  std::uint32_t correlation_id;
  std::uint32_t cbid;
  std::int32_t return_value;  // cudaError_t / CUresult
  std::uint64_t name_string;  // cuptiGetCallbackName
  std::uint8_t domain;        // ApiDomain
  std::uint8_t pad[3];
  // The caller's Python stack (PyStackRecord.stack_id) when call sites were taken
  // (GPUSCOPE_PYTHON_CALLSITES); 0 = none. Was padding, 0 in older logs: same layout.
  std::uint32_t py_stack_id;
};

enum class SyncType : std::uint8_t {  // = CUpti_ActivitySynchronizationType
  kUnknown = 0,
  kEventSynchronize = 1,
  kStreamWaitEvent = 2,
  kStreamSynchronize = 3,
  kContextSynchronize = 4,
};

// From CUpti_ActivitySynchronization2.
struct SyncRecord {
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  std::uint32_t context_id;
  std::uint32_t stream_id;  // 0xffffffff = n/a
  std::uint32_t event_id;   // 0xffffffff = n/a
  std::uint32_t correlation_id;
  std::uint32_t return_value;
  std::uint8_t sync_type;  // SyncType
  std::uint8_t pad[3];
};

enum class NvtxEventType : std::uint8_t {
  kPush = 1,
  kPop = 2,
  kStart = 3,
  kEnd = 4,
  kMark = 5,
};

// Written by the collector's own NVTX injection on the calling thread.
struct NvtxRecord {
  std::uint64_t ts_ns;
  std::uint64_t domain_id;       // 0 = default domain, else NvtxDomainRecord.domain_id
  std::uint64_t range_id;        // kStart/kEnd: nvtxRangeId_t; else 0
  std::uint64_t message_string;  // 0 for kPop/kEnd
  std::uint32_t thread_id;       // gettid
  std::uint32_t color;           // ARGB, 0 = none
  std::uint32_t category;
  std::uint8_t type;  // NvtxEventType
  std::uint8_t has_color;
  std::uint8_t pad[2];
};

struct NvtxDomainRecord {
  std::uint64_t domain_id;
  std::uint64_t name_string;
};

struct ThreadNameRecord {
  std::uint32_t thread_id;
  std::uint32_t pad;
  std::uint64_t name_string;
};

// From CUpti_ActivityOverhead3: CUPTI's own overhead.
struct OverheadRecord {
  std::uint64_t start_ns;
  std::uint64_t end_ns;
  std::uint32_t overhead_kind;  // CUpti_ActivityOverheadKind
  std::uint32_t object_kind;    // CUpti_ActivityObjectKind
  std::uint32_t thread_or_device_id;
  std::uint32_t pad;
};

// Data the collector knows it lost (dropped CUPTI records, failed writes, ...).
struct DataLossRecord {
  std::uint64_t ts_ns;
  std::uint64_t count;
  std::uint64_t what_string;  // e.g. "cupti_dropped_records"
  std::uint32_t context_id;
  std::uint32_t stream_id;
};

enum class CaptureState : std::uint8_t { kStop = 0, kStart = 1 };

// Capture window edges: events outside [start, stop) are not part of the trace.
struct CaptureRecord {
  std::uint64_t ts_ns;
  std::uint64_t reason_string;  // "cudaProfilerStart", "nvtx:NAME", "delay", ...
  std::uint8_t state;           // CaptureState
  std::uint8_t pad[7];
};

// Last record of a cleanly finished log (atexit). Missing = the target died.
struct ProcessEndRecord {
  std::uint64_t ts_ns;
  std::uint64_t records_written;
  std::uint64_t activity_buffers;
  std::uint64_t bytes_written;
};

enum class Severity : std::uint8_t { kInfo = 0, kWarning = 1, kError = 2 };

// A message from the collector for the user (e.g. a CUPTI subscriber conflict).
struct MessageRecord {
  std::uint64_t ts_ns;
  std::uint64_t text_string;
  std::uint8_t severity;  // Severity
  std::uint8_t pad[7];
};

// One kernel launch profiled by `gpuscope kernels` (CUPTI Range Profiler, auto range,
// kernel replay), written when its counters were decoded. Its metric values follow as
// KernelMetricRecords with the same profile_id.
struct KernelProfileRecord {
  std::uint64_t launch_ns;          // CUPTI clock at the launch call's entry
  std::uint64_t profile_id;         // > 0, unique within the log
  std::uint64_t launch_index;       // 0-based among all kernel launches of the process
  std::uint64_t name_string;        // mangled name (CUpti_CallbackData::symbolName)
  std::uint64_t metric_set_string;  // "quick", "roofline", ..., "custom"
  std::uint32_t device_id;
  std::uint32_t context_id;
  std::uint32_t stream_id;       // 0xffffffff = unknown
  std::uint32_t correlation_id;  // CUpti_CallbackData::correlationId
  std::int32_t grid[3];          // -1 = unknown (launch call without parameters we read)
  std::int32_t block[3];
  std::int32_t registers_per_thread;     // -1 = unknown
  std::int32_t static_shared_memory;     // bytes, -1 = unknown
  std::int32_t dynamic_shared_memory;    // bytes, -1 = unknown
  std::int32_t local_memory_per_thread;  // bytes, -1 = unknown
  std::uint32_t passes;                  // replay passes of the configuration
  std::uint32_t pad;
};

// One metric value of a profiled launch (cuptiProfilerHostEvaluateToGpuValues).
struct KernelMetricRecord {
  std::uint64_t profile_id;     // KernelProfileRecord.profile_id
  std::uint64_t metric_string;  // Nsight Compute metric name
  double value;
};
enum class MemoryOperation : std::uint8_t {
  kUnknown = 0,
  kAlloc = 1,        // CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
  kFree = 2,         // CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
  kPoolCreate = 3,   // CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED
  kPoolDestroy = 4,  // ..._DESTROYED
  kPoolTrim = 5,     // ..._TRIMMED
};

enum class MemoryPoolType : std::uint8_t {  // = CUpti_ActivityMemoryPoolType
  kNone = 0,                                // not from a pool (CUPTI's INVALID)
  kLocal = 1,
  kImported = 2,
};

// An allocation or free (CUpti_ActivityMemory4, CUPTI_ACTIVITY_KIND_MEMORY2) or a memory
// pool operation (CUpti_ActivityMemoryPool3, CUPTI_ACTIVITY_KIND_MEMORY_POOL). Pool facts
// of an allocation come from its memoryPoolConfig (0 = not from a pool / not reported).
struct MemoryRecord {
  std::uint64_t ts_ns;                   // CUPTI timestamp of the operation (CPU side)
  std::uint64_t address;                 // allocation address; pool operations: the pool's
  std::uint64_t bytes;                   // allocated / freed; pool operations: the pool's size
  std::uint64_t pool_address;            // the pool's base address, 0 = none
  std::uint64_t pool_size;               // bytes (local pools), 0 = unknown
  std::uint64_t pool_utilized_bytes;     // 0 = unknown
  std::uint64_t pool_release_threshold;  // bytes (local pools), 0 = unknown
  std::uint64_t pool_min_bytes_to_keep;  // kPoolTrim only, else 0
  std::uint32_t device_id;
  std::uint32_t context_id;  // 0xffffffff = none (CUPTI_INVALID_CONTEXT_ID)
  std::uint32_t stream_id;   // 0xffffffff = not stream-ordered (CUPTI_INVALID_STREAM_ID)
  std::uint32_t correlation_id;
  std::uint8_t operation;    // MemoryOperation
  std::uint8_t memory_kind;  // MemoryKind
  std::uint8_t pool_type;    // MemoryPoolType
  std::uint8_t is_async;     // stream-ordered (cudaMallocAsync / cudaFreeAsync)
  std::uint8_t is_managed_pool;
  std::uint8_t pad[3];
};

// PM sampling of one GPU (gpuscope trace --gpu-metrics; CUPTI cupti_pmsampling.h). Written by
// the launcher's sampler (collect/pm_sampler.hpp) into a log of its own that has no
// ProcessRecord: a GPU's counters count the work of every process on it.
//
// Payload: GpuMetricsSessionRecord, then metric_count uint64 string ids (the Nsight Compute
// metric names, in the order of every sample's values).
struct GpuMetricsSessionRecord {
  std::uint64_t start_ns;     // CUPTI clock when sampling started
  std::uint64_t interval_ns;  // sampling interval asked of CUPTI (GPU time trigger)
  std::uint64_t chip_string;  // cuptiDeviceGetChipName, e.g. "GH100"
  std::uint64_t device_name_string;
  std::uint8_t uuid[16];         // cuDeviceGetUuid: matches DeviceRecord.uuid of the traced processes
  std::int64_t clock_offset_ns;  // added to CUPTI's sample timestamps to reach the CUPTI clock
  std::uint64_t hardware_buffer_bytes;
  std::uint32_t device_id;  // CUDA device index in the launcher (same CUDA_VISIBLE_DEVICES)
  std::uint32_t metric_count;
};

// One sample of a session: values over [start_ns, end_ns) of the device. Payload:
// GpuMetricSampleRecord, then `count` doubles (cuptiProfilerHostEvaluateToGpuValues), metric i
// of the device's session. A sample's values are NaN where CUPTI could not evaluate them.
struct GpuMetricSampleRecord {
  std::uint64_t start_ns;  // CUPTI clock (clock_offset_ns applied)
  std::uint64_t end_ns;
  std::uint32_t device_id;  // GpuMetricsSessionRecord.device_id
  std::uint32_t count;      // = the session's metric_count
};
// Which launcher's environment gave a process its rank (collect/launcher_ranks.hpp reads
// them in this order; the first whose rank variable is set wins).
enum class RankLauncher : std::uint8_t {
  kNone = 0,
  kTorchrun = 1,  // RANK, LOCAL_RANK, WORLD_SIZE (torchrun, torch.distributed.launch)
  kOpenMpi = 2,   // OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_LOCAL_RANK, OMPI_COMM_WORLD_SIZE
  kSlurm = 3,     // SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS (srun)
  kPmi = 4,       // PMI_RANK, PMI_SIZE (MPICH/Intel MPI Hydra); no local rank
};

// Written right after the ProcessRecord when a launcher set a rank. Logs of older
// collectors have none: their ProcessRecord's rank/local_rank came from $RANK/$LOCAL_RANK.
struct RankRecord {
  std::int32_t rank;        // >= 0
  std::int32_t local_rank;  // -1 = the launcher gave none
  std::int32_t world_size;  // -1 = the launcher gave none
  std::uint8_t launcher;    // RankLauncher
  std::uint8_t pad[3];
};
enum class TorchOpEventType : std::uint8_t {
  kOpBegin = 1,      // an operator call starts (RecordFunction's start callback)
  kEnd = 2,          // the innermost open operator or module range of the thread ends
  kModuleBegin = 3,  // an nn.Module call starts; name_string is its "nn.Module: PATH (CLASS)" text
};

// gpuscope's PyTorch observer (src/collect/python/gpuscope_torch_ops.cpp, through the collector's C
// ABI, collect/torch_ops_abi.hpp): one record per range edge, per thread in call order. The
// importer reads them as NVTX push/pop ranges of the default domain with the text PyTorch's
// NVTX observer would have written (core/pytorch_ranges.hpp: "NAME, seq = N, op_id = M[, sizes =
// ...]"), so traces of either route hold the same nvtx_events and torch_ops rows.
struct TorchOpRecord {
  std::uint64_t ts_ns;          // collector clock (as NvtxRecord)
  std::int64_t seq;             // kOpBegin: RecordFunction::seqNr() (-1 = none); else 0
  std::uint64_t op_id;          // kOpBegin: RecordFunction::handle() (0 = none); else 0
  std::uint64_t name_string;    // kOpBegin: operator name; kModuleBegin: the range's text; kEnd: 0
  std::uint64_t shapes_string;  // kOpBegin with --pytorch=shapes: "[[32, 64], []]"; else 0
  std::uint32_t thread_id;      // gettid
  std::uint8_t type;            // TorchOpEventType
  std::uint8_t pad[3];
};

// Measured once per process by the observer when it starts: CPU time one recorded operator
// call (its begin and end records) and one module range add to the program (ns, the median of
// timed blocks of calls with and without recording), for the analyses to take out.
struct TorchOpCostRecord {
  double op_ns;                 // per operator call, NaN = not measured
  double module_ns;             // per module call, NaN = not measured
  std::uint64_t method_string;  // one line: how it was measured
};

// Python call sites (GPUSCOPE_PYTHON_CALLSITES; collect/python_frames.hpp): the stacks of the
// program's Python threads at the CUDA calls asked for, interned as a prefix tree. Ids are
// per log, from 1. A PyStackRecord comes after its parent's; its frame's PyFrameRecord may come
// later (frames are resolved to text afterwards, with the GIL) or never (counted as
// py_frames_unresolved); an ApiRecord may name a stack whose record follows it.
struct PyFrameRecord {
  std::uint32_t frame_id;
  std::int32_t line;        // PyCode_Addr2Line of the frame's instruction, -1 if none
  std::int32_t first_line;  // co_firstlineno, -1 if unknown
  std::uint32_t pad;
  std::uint64_t file_string;      // co_filename
  std::uint64_t function_string;  // co_qualname
};

struct PyStackRecord {
  std::uint32_t stack_id;
  std::uint32_t parent_id;  // the caller's stack, 0 for an outermost frame
  std::uint32_t frame_id;   // PyFrameRecord.frame_id
  std::uint32_t depth;      // 0 for an outermost frame
};

// Periodic Python samples (GPUSCOPE_PYTHON_SAMPLING=RATE; collect/python_sampler.hpp): at each
// tick of the sampler thread, one record per Python thread of the process, its stack read
// without the GIL (stacks and frames are the call sites' PyStackRecord / PyFrameRecord). A
// torn read is not recorded (data loss py_stacks_torn).
enum PySampleFlags : std::uint8_t {
  kPySampleHoldsGil = 1,  // the thread held the GIL (the GIL's last holder, while locked)
  kPySampleOnCpu = 2,     // the thread was running (state R in /proc/self/task/TID/stat)
};
struct PySampleRecord {
  std::uint64_t ts_ns;     // trace clock, when the thread's stack was read
  std::uint32_t tid;       // OS thread id (PyThreadState.native_thread_id)
  std::uint32_t stack_id;  // PyStackRecord.stack_id of the innermost frame, 0: no Python frame
  std::uint8_t flags;      // PySampleFlags
  std::uint8_t pad[7];
};
#pragma pack(pop)

}  // namespace gpuscope::core::log

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
