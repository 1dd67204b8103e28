// The collector's hot path: everything that runs on the traced program's threads for the
// CUDA calls it makes, and for CUPTI's activity buffers. Nothing here decodes, converts,
// interns or writes (the writer thread does: collector_writer.cpp). What each entry costs:
//  - on_callback (every enabled runtime/driver callback): one atomic load
//    (Collector::active) and a dispatch; in kernels mode the range profiler's own callback
//    instead (kernel_profiler_callbacks.cpp), which does its work inside the launch by design;
//  - on_api_callback (GPUSCOPE_API_CALLS=gpu, the GPU-work calls only): a thread-local depth
//    counter, two clock reads (CLOCK_REALTIME when it is CUPTI's clock, else
//    cuptiGetTimestamp) and one push into the thread's own ring (no lock, no system call);
//    a thread's first recorded call also makes and registers its ring (one allocation,
//    one mutex) and reads its id (gettid); at the calls GPUSCOPE_PYTHON_CALLSITES selects,
//    in a Python process, before the entry clock read: a walk of the thread's own Python
//    frames (plain reads, a few per frame) and their interning (one mutex, one hash
//    look-up per frame; python_callsites.hpp);
//  - buffer_requested (the thread whose records need a buffer): one buffer from the pool
//    (a mutex; an allocation only when the pool is empty, which setup_cupti's prefill and
//    the writer's returns make rare);
//  - buffer_completed (CUPTI's thread): cuptiActivityGetNumDroppedRecords, one queue push
//    under a mutex, a wake-up of the writer; an empty buffer goes back to the pool instead
//    (cleared there when buffers are handed out zeroed);
//  - post / post_message (NVTX handlers, messages): one mutex-protected append.
// Capture edges the program drives (cudaProfilerStart/Stop) go from on_callback to
// collector_capture.cpp, only at those calls.
#include <cstddef>

#include "collect/api_ring.hpp"
#include "collect/collector.hpp"
#include "collect/cupti_check.hpp"
#include "collect/kernel_profiler.hpp"
#include "collect/os_reads.hpp"
#include "collect/python_callsites.hpp"

namespace gpuscope::collect::detail {
namespace {

constexpr std::size_t kBacklogWarnBuffers = 64;
constexpr std::size_t kMaxHostEvents = std::size_t{1} << 20;  // ~100 MB worst case

// Per application thread: the call being timed (outermost enabled call only: a runtime
// call's nested driver calls are part of it) and the thread's ring.
struct ApiThreadState {
  std::uint32_t depth = 0;
  std::uint32_t epoch = 0;  // Collector::m_api_epoch when depth was last valid
  std::uint64_t start_ns = 0;
  std::uint32_t tid = 0;
  std::uint32_t py_stack = 0;                        // the call's Python stack (GPUSCOPE_PYTHON_CALLSITES), 0 = none
  collect::ThreadRing<collect::ApiCallRecord> ring;  // orphaned when the thread ends
};
thread_local ApiThreadState t_api;

}  // namespace

// ---------------------------------------------------------------- CUPTI callbacks (app threads)

void CUPTIAPI Collector::on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                     const void* cbdata) {
  try {
    auto* c = static_cast<Collector*>(userdata);
    if (c == nullptr || active() != c || cbdata == nullptr) return;
    if (c->m_kernels) {
      if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
        c->m_kernels->on_context_destroy(static_cast<const CUpti_ResourceData*>(cbdata)->context);
      } else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        c->m_kernels->on_api(domain, cbid, static_cast<const CUpti_CallbackData*>(cbdata));
      }
      return;
    }
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
    const auto* data = static_cast<const CUpti_CallbackData*>(cbdata);
    if (c->m_api_callbacks.load(std::memory_order_relaxed)) c->on_api_callback(domain, cbid, *data);
    const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    const bool is_start = runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000
                                  : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
    const bool is_stop = runtime ? cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000
                                 : cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
    // Edges at API entry: cudaProfilerStart enters before its nested
    // cuProfilerStart, so the reason names the call the program made; the
    // nested call's edge is ignored by the controller.
    if (is_start && data->callbackSite == CUPTI_API_ENTER) {
      c->range_start(runtime ? "cudaProfilerStart" : "cuProfilerStart");
    } else if (is_stop && data->callbackSite == CUPTI_API_ENTER) {
      c->range_stop(runtime ? "cudaProfilerStop" : "cuProfilerStop");
    }
  } catch (...) {
  }
}

void Collector::on_api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const CUpti_CallbackData& data) noexcept {
  ApiThreadState& t = t_api;
  // Callbacks switched off between a call's entry and exit (a session's stop) leave its depth
  // behind: a new epoch (they came on again) starts from depth 0.
  const std::uint32_t epoch = m_api_epoch.load(std::memory_order_relaxed);
  if (t.epoch != epoch) {
    t.epoch = epoch;
    t.depth = 0;
  }
  if (data.callbackSite == CUPTI_API_ENTER) {
    if (t.depth++ == 0) {
      // The stack first, so that its walk is not timed as part of the call.
      t.py_stack = m_python != nullptr && recording() && m_python->selected(domain, cbid) ? m_python->take() : 0;
      t.start_ns = trace_clock_ns();
    }
    return;
  }
  if (t.depth == 0 || --t.depth != 0) return;  // exit without entry (enabled mid-call), or nested
  const std::uint64_t end = trace_clock_ns();
  if (!recording()) return;
  if (t.ring.ring == nullptr) {
    t.tid = current_tid();
    if (t.tid == m_writer_tid.load(std::memory_order_relaxed)) return;  // our own calls
    t.ring.ring = m_api_rings.add_ring();
    if (t.ring.ring == nullptr) return;
  }
  collect::ApiCallRecord r;
  r.start_ns = t.start_ns;
  r.end_ns = end;
  r.thread_id = t.tid;
  r.correlation_id = data.correlationId;
  r.cbid = cbid;
  r.driver = domain == CUPTI_CB_DOMAIN_DRIVER_API ? 1 : 0;
  r.py_stack_id = t.py_stack;
  if (data.functionReturnValue != nullptr) {
    r.return_value = r.driver ? static_cast<std::int32_t>(*static_cast<const CUresult*>(data.functionReturnValue))
                              : static_cast<std::int32_t>(*static_cast<const int*>(data.functionReturnValue));
  }
  bool wake = false;
  t.ring.ring->push(r, &wake);
  if (wake) {
    m_wake.store(true, std::memory_order_release);
    m_wake_cv.notify_one();
  }
}

// ---------------------------------------------------------------- activity buffers (CUPTI's thread)

void CUPTIAPI Collector::buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_num_records) {
  *buffer = nullptr;
  *size = 0;
  *max_num_records = 0;  // as many as fit
  Collector* c = s_instance;
  if (c == nullptr) return;
  if (std::uint8_t* b = c->m_pool.acquire()) {
    *buffer = b;
    *size = c->m_pool.buffer_bytes();
  }
}

void CUPTIAPI Collector::buffer_completed(CUcontext ctx, std::uint32_t stream_id, std::uint8_t* buffer,
                                          std::size_t /*size*/, std::size_t valid_size) {
  Collector* c = s_instance;
  if (c == nullptr || buffer == nullptr) return;
  try {
    // A fork child or a buffer arriving after the final drain: nothing can
    // write it any more; give the memory back.
    if (static_cast<std::uint32_t>(::getpid()) != c->m_pid || (c->m_writer_tid.load() == 0 && c->m_stop.load())) {
      c->m_pool.release(buffer);
      return;
    }
    collect::CompletedBuffer b;
    b.data = buffer;
    b.valid_size = valid_size;
    std::size_t dropped = 0;
    if (GPUSCOPE_CUPTI_LOG_CALL(cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped)) == CUPTI_SUCCESS) {
      b.dropped = dropped;
    }
    if (dropped > 0 && ctx != nullptr) {
      GPUSCOPE_CUPTI_LOG_CALL(cuptiGetContextId(ctx, &b.context_id));
    }
    b.stream_id = stream_id;
    if (valid_size == 0 && dropped == 0) {
      c->m_pool.release(buffer);
      return;
    }
    bool rejected = false;
    const std::size_t depth = c->m_completed.push(b, &rejected);
    if (rejected) {
      c->m_pool.release(buffer);
      return;
    }
    // Keep the buffers (never block CUPTI) but tell the user the writer lags.
    if (depth > kBacklogWarnBuffers && !c->m_backlog_warned.exchange(true)) {
      c->post_message(log::Severity::kWarning,
                      "writer thread is behind: more than 64 CUPTI buffers queued; memory grows");
    }
    c->m_wake.store(true, std::memory_order_release);
    c->m_wake_cv.notify_one();
  } catch (...) {
  }
}

// ---------------------------------------------------------------- host events (app threads)

std::uint64_t Collector::now_ns() noexcept {
  std::uint64_t ts = 0;
  GPUSCOPE_CUPTI_LOG_CALL(cuptiGetTimestamp(&ts));
  return ts;
}

void Collector::post(HostEvent&& e) noexcept {
  try {
    std::lock_guard lock(m_events_mutex);
    if (m_events.size() >= kMaxHostEvents) {
      m_events_dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    m_events.push_back(std::move(e));
  } catch (...) {
    m_events_dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

void Collector::post_message(log::Severity severity, std::string text) noexcept {
  HostEvent e;
  e.kind = HostEvent::Kind::kMessage;
  e.type = static_cast<std::uint8_t>(severity);
  e.ts_ns = now_ns();
  e.text = std::move(text);
  post(std::move(e));
}

}  // namespace gpuscope::collect::detail
