// The in-process collector (internal): one per traced process, created on the
// first injection entry point (CUDA or NVTX) and deliberately never destroyed,
// so no static destructor can race with the writer thread at exit.
//
// Threads:
//  - application threads: NVTX handlers and CUPTI API callbacks post HostEvents
//    (mutex-protected vector, swapped out by the writer) and drive capture edges;
//  - CUPTI's buffer thread: bufferRequested/bufferCompleted only take a pooled
//    buffer / queue a completed one (never decode, never block for long);
//  - the writer thread: decodes buffers, converts, interns strings, applies the
//    delay/duration timer and flushes the log at least every flush period.
//
// One class, defined by job across these files (src/collect/README.md has the map):
//   collector_setup.cpp     initialisation, CUPTI setup, exit and fork handlers
//   collector_hot_path.cpp  what runs on the program's threads and CUPTI's buffer thread:
//                           CUPTI callbacks, API call timing, buffer request/completion, post
//   collector_capture.cpp   capture edges, CUPTI following the window, session windows, detach
//   collector_writer.cpp    the writer thread's loop and drain
//   collector_convert.cpp   CUPTI activity records and timed API calls -> log records
//   collector_records.cpp   process, device, host-event and profiled-launch records
//   collector_torch_ops.cpp PyTorch observer's C ABI (torch_ops_abi.hpp) and its rings' drain
//
// What a crash loses: records still in CUPTI's buffers since its last periodic
// flush, plus the writer's unflushed batch: about one flush period of activity
// (GPUSCOPE_FLUSH_PERIOD_MS, 200 ms by default). SIGKILL also skips the
// ProcessEndRecord, which tells the importer the target died.
#pragma once

#include <cupti.h>

#include <atomic>
#include <memory>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "collect/activity_buffers.hpp"
#include "collect/api_ring.hpp"
#include "collect/capture_controller.hpp"
#include "collect/collector_config.hpp"
#include "collect/os_reads.hpp"
#include "collect/session_control.hpp"
#include "collect/tsc_clock.hpp"
#include "core/event_log_format.hpp"
#include "store/data_loss_kinds.hpp"
#include "store/event_log_writer.hpp"

namespace gpuscope::collect::detail {

class KernelProfiler;   // kernels mode (kernel_profiler.hpp)
class PythonCallSites;  // GPUSCOPE_PYTHON_CALLSITES (python_callsites.hpp)

/// Something that happened on an application thread, for the writer thread.
struct HostEvent {
  enum class Kind : std::uint8_t { kNvtx, kNvtxDomain, kThreadName, kCapture, kMessage, kTorchOpCost };
  Kind kind = Kind::kNvtx;
  std::uint8_t type = 0;  // kNvtx: log::NvtxEventType; kCapture: log::CaptureState;
                          // kMessage: log::Severity
  std::uint8_t has_color = 0;
  std::uint32_t thread_id = 0;
  std::uint32_t color = 0;
  std::uint32_t category = 0;
  std::uint64_t ts_ns = 0;
  std::uint64_t domain_id = 0;  // kTorchOpCost: the op cost's bits (double)
  std::uint64_t range_id = 0;   // kTorchOpCost: the module cost's bits (double)
  std::string text;             // message / domain name / thread name / reason / cost method
};

class Collector {
 public:
  /// Shared initialisation, once per process (config, log file, ProcessRecord,
  /// writer thread, atexit/atfork handlers). nullptr when disabled
  /// (GPUSCOPE_LOG_DIR unset or the log cannot be created).
  static Collector* get_or_init() noexcept;

  /// The collector if it is recording-capable in this process (initialised,
  /// not a fork child, not shut down); one atomic load.
  static Collector* active() noexcept { return s_active.load(std::memory_order_acquire); }

  /// CUPTI setup (subscribe, buffers, activity kinds, profiler callbacks); once,
  /// from InitializeInjection.
  void setup_cupti() noexcept;

  [[nodiscard]] const collect::CollectorConfig& config() const { return m_config; }
  /// Inside a capture window (relaxed read, for the NVTX hot path).
  [[nodiscard]] bool recording() const noexcept { return m_recording.load(std::memory_order_relaxed); }
  /// CUPTI clock, ns (cuptiGetTimestamp).
  [[nodiscard]] static std::uint64_t now_ns() noexcept;

  /// Queues an event for the writer; drops and counts it when the queue is full.
  void post(HostEvent&& e) noexcept;
  void post_message(log::Severity severity, std::string text) noexcept;

  /// Capture range edges from cudaProfilerStart/Stop or the NVTX capture range.
  /// range_start returns true when this call opened the range (false: already
  /// open, final window over, or capture range none).
  bool range_start(std::string_view reason, std::uint64_t ts_ns = 0) noexcept;  // ts 0 = now
  void range_stop(std::string_view reason) noexcept;

  /// The trace clock (ns) on any thread: CLOCK_REALTIME when it is CUPTI's clock, else CUPTI's.
  [[nodiscard]] std::uint64_t trace_clock_ns() const noexcept { return m_fast_clock ? realtime_ns() : now_ns(); }
  /// PyTorch observer (collector_torch_ops.cpp, collect/torch_ops_abi.hpp), app threads: a
  /// thread's ring and how to stamp its edges, and its end; the writer woken; a name's id; the cost.
  GpuscopeTorchChannel torch_open_thread() noexcept;
  void torch_close_thread(collect::TorchOpRing* ring) noexcept;
  void wake_writer() noexcept;
  [[nodiscard]] std::uint32_t torch_intern(std::string_view text) noexcept;
  void torch_cost(double op_ns, double module_ns, std::string method) noexcept;
  /// Python's atexit (gpuscope_python_flush): waits up to timeout_ms for the Python call
  /// sites' frames to be resolved while the interpreter still runs (python_callsites.hpp).
  void python_flush(int timeout_ms) noexcept;
  /// gpuscope_python_sampling_pause / gpuscope_python_callsites_pause: pause (true) or resume
  /// the Python sampler / call sites; false when this process has none.
  bool python_sampling_pause(bool paused) noexcept;
  bool python_callsites_pause(bool paused) noexcept;

  /// atexit: flush CUPTI, drain, write ProcessEndRecord, close. Idempotent; a
  /// no-op outside the process that initialised the collector.
  void shutdown() noexcept;

 private:
  // collector_setup.cpp
  explicit Collector(collect::CollectorConfig config);
  static void init_process() noexcept;
  static void on_fork_child() noexcept;
  static void on_exit() noexcept;
  bool subscribe();  // the process's one CUPTI subscriber slot; false: no GPU activity
  void setup_kernels_mode();
  void setup_activity_tracing();
  void enable_memory_records() noexcept;  // --cuda-memory-usage (GPUSCOPE_CUDA_RECORDS memory)
  void setup_python_callsites();          // GPUSCOPE_PYTHON_CALLSITES, in a Python process
  static bool clock_matches_cupti() noexcept;

  // collector_hot_path.cpp: CUPTI callbacks (C linkage-compatible statics).
  static void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_num_records);
  static void CUPTIAPI buffer_completed(CUcontext ctx, std::uint32_t stream_id, std::uint8_t* buffer, std::size_t size,
                                        std::size_t valid_size);
  static void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                   const void* cbdata);
  // GPUSCOPE_API_CALLS=gpu: times one enabled API call (app thread).
  void on_api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& data) noexcept;

  // collector_capture.cpp
  void handle_edge_locked(const collect::CaptureEdge& edge, std::uint64_t ts);
  void apply_recording() noexcept;
  void set_gated_kinds(bool on) noexcept;
  void set_launch_callbacks(bool on) noexcept;  // GPUSCOPE_API_CALLS=gpu: our per-call callbacks
  void set_kernel_kinds(bool on) noexcept;      // CONCURRENT_KERNEL (+ OVERHEAD) records
  void check_time_gate() noexcept;              // writer thread
  void maybe_detach_cupti() noexcept;           // writer thread
  // Session mode (gpuscope launch --session, collect/session_control.hpp), writer thread.
  void poll_session() noexcept;
  void finish_session_stop(bool force) noexcept;
  void write_session_ack(const collect::SessionCommand& command) noexcept;

  // collector_writer.cpp: the writer thread.
  void writer_main() noexcept;
  void drain();

  // collector_convert.cpp (writer thread)
  void process_buffer(const collect::CompletedBuffer& b);
  void convert_record(const CUpti_Activity* rec);
  void drain_api_rings();
  void drain_torch_op_rings();  // collector_torch_ops.cpp
  // A DataLossRecord of `count` (none when 0) of a kind the collector reports.
  void write_data_loss(store::DataLossKind kind, std::uint64_t count);
  std::uint64_t kernel_name_id(const char* name);
  std::uint64_t api_name_id(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

  // collector_records.cpp (writer thread; the process record at initialisation)
  void write_process_record();
  void write_process_end();
  /// False when the driver is not initialised yet (retry later) unless `force`.
  bool write_device(const CUpti_ActivityDevice5& d, std::uint64_t name_string, bool force);
  void write_host_event(const HostEvent& e);
  void write_profiled_launches();

  static inline std::atomic<Collector*> s_active{nullptr};
  static inline Collector* s_instance = nullptr;  // set once, never freed

  const collect::CollectorConfig m_config;
  const std::uint32_t m_pid;
  std::uint64_t m_start_ns = 0;
  std::int64_t m_realtime_to_cupti_ns = 0;
  std::vector<std::string> m_config_warnings;

  store::EventLogWriter m_writer;  // writer thread only (init and shutdown aside)
  std::string m_log_path;

  collect::ActivityBufferPool m_pool;
  collect::CompletedQueue m_completed;
  std::atomic<bool> m_backlog_warned{false};

  std::mutex m_events_mutex;
  std::vector<HostEvent> m_events;
  std::atomic<std::uint64_t> m_events_dropped{0};

  std::mutex m_capture_mutex;
  collect::CaptureController m_capture;
  collect::TimeGate m_gate;
  std::atomic<bool> m_recording{false};

  std::atomic<bool> m_cupti_ready{false};
  bool m_memory_kinds = false;           // MEMORY2 enabled (set once in setup_cupti)
  bool m_memory_pool_kind = false;       // MEMORY_POOL enabled
  bool m_memory_duty_on = true;          // writer thread: GPUSCOPE_MEMORY_DUTY_MS phase
  std::uint64_t m_finished_seen_ns = 0;  // writer thread: when finished() was first seen
  // Session mode, writer thread: the last control generation applied; a stop waiting for
  // its grace period (kernels launched in the window complete and are delivered) before
  // kernel records go off and the ack is written.
  std::uint64_t m_session_generation = 0;
  std::optional<collect::SessionCommand> m_session_stop_pending;
  std::uint64_t m_session_stop_ns = 0;
  std::string m_session_refused;  // the last refusal of the control file logged (logged once each)
  // Session mode: kernel records came on with the first window (they stay on: see
  // finish_session_stop), and the windows so far, by which the writer drops the kernel
  // records no window can claim (every session edge is applied on the writer thread).
  std::atomic<bool> m_session_kernel_records{false};
  collect::WindowSpans m_session_windows;
  CUpti_SubscriberHandle m_subscriber = nullptr;
  // GPUSCOPE_API_CALLS=gpu: the GPU-work callback ids our callbacks time.
  std::vector<CUpti_CallbackId> m_api_cbids[2];  // [0] runtime, [1] driver
  std::atomic<bool> m_api_callbacks{false};      // --cuda-api=gpu is on
  std::atomic<std::uint32_t> m_api_epoch{0};     // +1 each time the callbacks come on (sessions)
  bool m_fast_clock = false;                     // CLOCK_REALTIME is CUPTI's clock
  collect::ApiRingRegistry m_api_rings{kApiRingCapacity};
  static constexpr std::size_t kApiRingCapacity = std::size_t{1} << 16;  // 2.5 MiB per thread
  // PyTorch observer: per-thread rings of range edges; names interned once (app threads, under
  // the mutex), and their log string ids (writer thread; index = name id).
  collect::TorchOpRingRegistry m_torch_rings{kTorchRingCapacity};
  static constexpr std::size_t kTorchRingCapacity = std::size_t{1} << 16;  // 2.5 MiB per thread
  std::mutex m_torch_names_mutex;
  std::vector<std::string> m_torch_names;                           // id - 1 -> text
  std::unordered_map<std::string, std::uint32_t> m_torch_name_ids;  // text -> id
  std::vector<std::uint64_t> m_torch_name_strings;                  // writer thread
  // Edges stamped with the TSC (GPUSCOPE_TSC and an invariant TSC, collect/tsc_clock.hpp; set at
  // start) are converted after each drain between the last drain's anchor and this one's.
  bool m_torch_tsc = false;
  collect::TscAnchor m_torch_anchor;                // writer thread
  double m_torch_ns_per_tick = 0;                   // writer thread: the last span's rate
  std::vector<log::TorchOpRecord> m_torch_drained;  // writer thread
  std::unique_ptr<KernelProfiler> m_kernels;        // kernels mode only (gpuscope kernels)
  std::uint64_t m_next_profile_id = 1;              // writer thread
  std::vector<std::uint64_t> m_metric_strings;      // writer thread: interned metric names
  // Python call sites (set once in setup_cupti), else null.
  std::unique_ptr<PythonCallSites> m_python;

  std::mutex m_wake_mutex;
  std::condition_variable m_wake_cv;
  std::atomic<bool> m_wake{false};
  std::atomic<bool> m_stop{false};
  std::atomic<bool> m_shutdown{false};
  std::thread m_thread;
  std::atomic<std::uint32_t> m_writer_tid{0};

  // Writer-thread state.
  struct NameCacheEntry {
    std::uint64_t id;
    std::string text;  // to detect a CUPTI string freed and its address reused
  };
  std::unordered_map<const char*, NameCacheEntry> m_kernel_names;
  std::uint64_t m_buffers = 0;
  std::uint64_t m_cupti_dropped = 0;
  std::uint64_t m_events_dropped_written = 0;
  std::vector<std::uint64_t> m_api_names[2];  // [0] runtime, [1] driver; 0 = not cached
  std::vector<std::uint32_t> m_devices_seen;
  std::vector<std::uint32_t> m_contexts_seen;
  // Device records decoded before cuInit finished, with their interned names.
  std::vector<std::pair<CUpti_ActivityDevice5, std::uint64_t>> m_pending_devices;
};

}  // namespace gpuscope::collect::detail
