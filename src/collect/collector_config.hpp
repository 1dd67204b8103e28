// Collector configuration: the environment variables that `gpuscope trace`
// sets for the traced process, defined in ONE table (kConfigOptions) with
// their defaults and help text; parse_collector_config() reads them.
//
// Invalid values never stop the target: each one yields a warning (the caller
// prints it prefixed "gpuscope: ") and the option keeps its default.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::collect {

struct ConfigOption {
  std::string_view name;
  std::string_view default_value;  // "" = unset
  std::string_view help;
};

// clang-format off
inline constexpr std::array<ConfigOption, 30> kConfigOptions{{
  {"GPUSCOPE_LOG_DIR", "",
   "Absolute directory for the event log <dir>/<hostname>-<pid>.gslog (a -1, -2, ... suffix "
   "if it exists). Required: when unset the collector does nothing."},
  {"GPUSCOPE_TRACE", "cuda,nvtx",
   "Comma list of sources: cuda (kernels, memcpy, memset, runtime+driver API, sync, overhead, "
   "devices, contexts) and nvtx (ranges and marks through NVTX_INJECTION64_PATH)."},
  {"GPUSCOPE_POLLING_CALLS", "0",
   "1 keeps polling API calls (cudaGetDevice, cudaEventQuery, cudaStreamQuery, "
   "cudaGetLastError, cuCtxGetCurrent, ..., and the per-launch cuKernelGetName CUPTI "
   "issues itself); 0 mutes them (list: api_filter.cpp)."},
  {"GPUSCOPE_CUDA_RECORDS", "kernel,memcpy,memcpy_peer,memset,runtime,driver,overhead",
   "With cuda tracing: what is recorded (comma list of kernel, memcpy, memcpy_peer, memset, "
   "runtime, driver, sync, overhead, memory; runtime/driver = the API calls, see GPUSCOPE_API_CALLS). sync (CUPTI "
   "SYNCHRONIZATION records) is off by default: on H100 it cost about 5 us per PyTorch op. memory "
   "(CUPTI MEMORY2 and MEMORY_POOL records: every allocation and free, memory pools; gpuscope trace "
   "--cuda-memory-usage) is off by default: it adds CUPTI work to every allocation call, and is "
   "recorded from the start whatever the capture range (memory in use needs every allocation). "
   "Devices and contexts are always recorded."},
  {"GPUSCOPE_API_CALLS", "gpu",
   "Which CUDA API calls get a record. gpu: only calls that put work on the GPU, move or "
   "allocate memory, or wait (launches, memcpy, memset, synchronize, event record, stream "
   "wait, malloc/free, graph launch; api_filter.cpp), timed by gpuscope's own CUPTI callbacks "
   "into a ring per thread (no CUPTI activity record per call). all: every call but the muted "
   "polling calls, as CUPTI RUNTIME and DRIVER activity records (H100: +1-5 us per PyTorch op "
   "against gpu; docs/performance.md)."},
  {"GPUSCOPE_PYTHON_CALLSITES", "none",
   "In a Python process (CPython 3.11-3.13; nothing happens in others), with GPUSCOPE_API_CALLS=gpu: "
   "the calling thread's Python stack at CUDA calls, walked without the GIL (api_calls.py_stack_id). "
   "sync: synchronize calls, copies, memsets, allocations and frees; all: every GPU-work call, "
   "launches included; none (the default until its cost and safety are measured on a GPU): no stacks."},
  {"GPUSCOPE_ZERO_BUFFERS", "1",
   "1: gpuscope hands CUPTI activity buffers it zeroed itself on its writer thread "
   "(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER); 0: CUPTI zeroes each new buffer on the "
   "thread that fills it."},
  {"GPUSCOPE_TSC", "1",
   "1: the PyTorch observer's range edges are stamped with the CPU's time-stamp counter where it is "
   "invariant (x86-64), converted to the trace clock on the writer thread; 0: each edge reads the "
   "clock (clock_gettime), as API calls do."},
  {"GPUSCOPE_THREAD_ID_TYPE", "system",
   "Thread id in API records: system (gettid, as NVTX records) | default (CUPTI's)."},
  {"GPUSCOPE_CAPTURE_RANGE", "none",
   "none (record from start) | cudaProfilerApi (cudaProfilerStart/Stop, cuProfilerStart/Stop) | "
   "nvtx (the range named by GPUSCOPE_NVTX_CAPTURE) | session (gpuscope start / stop, GPUSCOPE_SESSION_DIR)."},
  {"GPUSCOPE_NVTX_CAPTURE", "",
   "NAME or NAME@DOMAIN: exact NVTX message that opens a window (NAME alone = default domain)."},
  {"GPUSCOPE_SESSION_DIR", "",
   "With GPUSCOPE_CAPTURE_RANGE=session: the session folder (gpuscope launch). The collector polls "
   "its 'control' file (gpuscope start / stop) and answers in 'ack.PID' once a start or stop is applied "
   "and, after a stop, the window's records are in the log."},
  {"GPUSCOPE_CAPTURE_RANGE_END", "stop",
   "stop (nothing is recorded after the first window closes) | repeat (every start/stop pair "
   "opens a window)."},
  {"GPUSCOPE_LAUNCH_REALTIME_NS", "0",
   "CLOCK_REALTIME ns when the launcher started; origin of the delay (0 = collector start)."},
  {"GPUSCOPE_DELAY_NS", "0", "Record only from launch + delay."},
  {"GPUSCOPE_DURATION_NS", "0", "Record for this long after launch + delay (0 = to the end)."},
  {"GPUSCOPE_FLUSH_PERIOD_MS", "200",
   "CUPTI periodic flush (cuptiActivityFlushPeriod) and writer flush period, 1..60000 ms: a "
   "crash loses about this much activity."},
  {"GPUSCOPE_BUFFER_BYTES", "4194304",
   "CUPTI activity buffer size in bytes, 65536..268435456 (rounded up to 8)."},
  {"GPUSCOPE_VERBOSE", "0", "1 prints collector diagnostics to stderr."},
  {"GPUSCOPE_KERNEL_METRICS", "",
   "Kernels mode (gpuscope kernels): comma list of Nsight Compute metric names collected per "
   "kernel launch with the CUPTI Range Profiler (auto range, kernel replay). Unset = tracing."},
  {"GPUSCOPE_KERNEL_SET", "custom", "Name of the metric set, recorded with each profiled launch."},
  {"GPUSCOPE_KERNEL_REGEX", "",
   "Kernels mode: profile only kernels whose demangled or base name matches this ECMAScript "
   "regex (searched, as ncu's -k regex:)."},
  {"GPUSCOPE_LAUNCH_SKIP", "0", "Kernels mode: skip this many matching launches first (ncu --launch-skip)."},
  {"GPUSCOPE_LAUNCH_COUNT", "0", "Kernels mode: profile at most this many matching launches (0 = all)."},
  {"GPUSCOPE_NVTX_INCLUDE", "",
   "Kernels mode: NAME or NAME@DOMAIN; profile only launches made while an NVTX range with that "
   "exact message is open (push/pop on the launching thread, or start/end on any thread)."},
  {"GPUSCOPE_KERNEL_REPLAY", "kernel",
   "Kernels mode: 'kernel' = kernel replay, one range-profiler session per profiled launch (CUPTI "
   "saves and restores device memory and runs the kernel once per pass; as ncu). 'none' = one pass "
   "only, no replay: a session stays open across consecutive profiled launches and each kernel "
   "runs once with the counters armed (about 3x faster; adds about 8 instructions per warp and "
   "0.3-0.7 us per kernel to what is counted)."},
  {"GPUSCOPE_CACHE_CONTROL", "none",
   "Kernels mode with kernel replay: 'none' = CUPTI's kernel replay, no flush (later passes start "
   "from CUPTI's restore of device memory, still in L2). 'all' = gpuscope replays each profiled "
   "launch itself (CUPTI user replay, auto range): device memory is saved before the first pass "
   "(cupti_checkpoint.h) and restored before each later one, and L2 is flushed before every pass, "
   "so every pass starts from the same memory and an empty cache (as ncu --cache-control all); "
   "CUPTI's range triggers then add about 8 instructions per warp, and SASS-patched metrics "
   "(smsp__sass_*) are not collected."},
  {"GPUSCOPE_RANGE_REPLAY", "user",
   "Validation only (validation/replay_modes_check.py): how GPUSCOPE_KERNEL_REPLAY=none's single "
   "pass is asked of CUPTI: 'user' (CUPTI_UserReplay, auto range: one range per kernel), "
   "'application' (CUPTI_ApplicationReplay, auto range: the same one pass, asked as the first "
   "pass of an application replay) or 'userrange' (CUPTI_UserReplay with CUPTI_UserRange: "
   "gpuscope pushes a range before each profiled launch and pops it after), to measure what "
   "each adds to the counts."},
  {"GPUSCOPE_KERNEL_BATCH", "64",
   "Kernels mode with GPUSCOPE_KERNEL_REPLAY=none: profiled launches per session (1-4096). A "
   "session ends early before any other GPU work (an unprofiled launch, a memset, memcpy or graph "
   "launch); a killed target loses the open session's launches."},
  {"GPUSCOPE_MEMORY_DUTY_MS", "0",
   "Validation only (validation/duty_cost.py): with memory records on, record them while "
   "floor(CUPTI clock / this) is even and not while it is odd, so one run holds steps with and "
   "without them (memory in use is then wrong). 0 = always."},
}};
// clang-format on

/// kSession: `gpuscope launch --session`: nothing is recorded until `gpuscope start`; the
/// per-launch CUPTI work is off until the first window, and the API callbacks outside the windows
/// (kernel records stay on from the first window: collector_capture.cpp).
enum class CaptureRange : std::uint8_t { kNone, kCudaProfilerApi, kNvtx, kSession };

/// GPUSCOPE_CUDA_RECORDS bits: which CUPTI activity kinds `--trace=cuda` records.
enum CudaRecord : std::uint32_t {
  kRecordKernel = 1u << 0,      // CONCURRENT_KERNEL
  kRecordMemcpy = 1u << 1,      // MEMCPY
  kRecordMemset = 1u << 2,      // MEMSET
  kRecordRuntime = 1u << 3,     // RUNTIME
  kRecordDriver = 1u << 4,      // DRIVER
  kRecordSync = 1u << 5,        // SYNCHRONIZATION
  kRecordOverhead = 1u << 6,    // OVERHEAD
  kRecordMemcpyPeer = 1u << 7,  // MEMCPY2 (peer-to-peer copies)
  kRecordMemory = 1u << 8,      // MEMORY2 + MEMORY_POOL (allocations, frees, pools)
};
inline constexpr std::uint32_t kAllCudaRecords = 0x1ff;
/// The default: everything but kRecordSync (measured: docs/performance.md) and kRecordMemory
/// (gpuscope trace --cuda-memory-usage).
inline constexpr std::uint32_t kDefaultCudaRecords = kAllCudaRecords & ~kRecordSync & ~kRecordMemory;

/// GPUSCOPE_API_CALLS.
enum class ApiCalls : std::uint8_t { kAll, kGpu };
/// GPUSCOPE_PYTHON_CALLSITES: at which API calls the caller's Python stack is taken.
enum class PythonCallsites : std::uint8_t { kNone, kSync, kAll };
/// GPUSCOPE_PYTHON_SAMPLING's largest rate (samples per second per Python thread).
inline constexpr std::uint64_t kMaxPythonSamplingHz = 10000;
enum class CaptureEnd : std::uint8_t { kStop, kRepeat };
// How --replay-mode none's single pass is asked of CUPTI's range profiler (validation only):
// user = CUPTI_UserReplay + CUPTI_AutoRange, application = CUPTI_ApplicationReplay +
// CUPTI_AutoRange, user_range = CUPTI_UserReplay + CUPTI_UserRange (a pushed range per launch).
enum class RangeReplay : std::uint8_t { kUser, kApplication, kUserRange };

struct CollectorConfig {
  std::string log_dir;  // empty = collector disabled
  bool trace_cuda = true;
  bool trace_nvtx = true;
  bool polling_calls = false;
  std::uint32_t cuda_records = kDefaultCudaRecords;  // CudaRecord bits
  ApiCalls api_calls = ApiCalls::kGpu;
  PythonCallsites python_callsites = PythonCallsites::kNone;
  // GPUSCOPE_PYTHON_CALLSITES_DEFAULT=1: the mode is gpuscope trace's default, not asked for (a
  // Python the walker cannot read is then a note in the trace, not a warning on every run)
  bool python_callsites_by_default = false;
  std::uint32_t python_sampling_hz = 0;  // GPUSCOPE_PYTHON_SAMPLING: Python samples per second, 0 = none
  bool zero_buffers = true;
  bool tsc = true;  // GPUSCOPE_TSC: torch observer edges stamped with the TSC where usable
  bool system_thread_ids = true;
  CaptureRange capture_range = CaptureRange::kNone;
  std::string nvtx_capture_message;  // with kNvtx: exact message
  std::string nvtx_capture_domain;   // "" = default domain
  std::string session_dir;           // with kSession: the folder holding 'control' (collect/session_control.hpp)
  CaptureEnd capture_end = CaptureEnd::kStop;
  std::uint64_t launch_realtime_ns = 0;
  std::uint64_t delay_ns = 0;
  std::uint64_t duration_ns = 0;
  std::uint32_t flush_period_ms = 200;
  std::uint64_t buffer_bytes = 4u << 20;
  bool verbose = false;
  // Kernels mode (gpuscope kernels).
  std::vector<std::string> kernel_metrics;  // empty = tracing mode
  std::string kernel_set = "custom";
  std::string kernel_regex;
  std::uint64_t launch_skip = 0;
  std::uint64_t launch_count = 0;                 // 0 = all
  std::string nvtx_include_message;               // "" = no NVTX filter
  std::string nvtx_include_domain;                // "" = default domain
  bool kernel_replay = true;                      // GPUSCOPE_KERNEL_REPLAY: kernel (true) or none
  bool cache_control_all = false;                 // GPUSCOPE_CACHE_CONTROL: all (own replay, flush) or none
  RangeReplay range_replay = RangeReplay::kUser;  // GPUSCOPE_RANGE_REPLAY (replay none's pass)
  std::uint64_t kernel_batch = 64;                // with replay none: launches per range-profiler session
  std::uint64_t memory_duty_ms = 0;               // validation: memory records on/off by CUPTI-clock phase

  [[nodiscard]] bool enabled() const { return !log_dir.empty(); }
  [[nodiscard]] bool kernels_mode() const { return !kernel_metrics.empty(); }
};

/// Looks up an environment variable; returns nullptr when unset.
using getenv_fn = const char* (*)(const char* name);

/// Parses the GPUSCOPE_* variables through `getenv`. Each invalid value adds a
/// message (without the "gpuscope: " prefix) to *warnings and keeps the default.
[[nodiscard]] CollectorConfig parse_collector_config(getenv_fn getenv, std::vector<std::string>* warnings);

/// Splits "NAME@DOMAIN" at the LAST '@' (NAME may contain '@'; no '@' = default domain).
void split_nvtx_capture(std::string_view spec, std::string* message, std::string* domain);

/// Strict unsigned decimal parse (no sign, no spaces, no overflow).
[[nodiscard]] bool parse_u64(std::string_view text, std::uint64_t* out);

/// "1/true/yes/on" and "0/false/no/off" (case-insensitive).
[[nodiscard]] bool parse_bool(std::string_view text, bool* out);

}  // namespace gpuscope::collect
