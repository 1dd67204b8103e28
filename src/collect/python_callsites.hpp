// Python call sites of CUDA calls (GPUSCOPE_PYTHON_CALLSITES, `gpuscope trace
// --python-callsites`): the calling thread's Python stack at the API calls asked for,
// as api_calls.py_stack_id, with the stacks and frames as PyStackRecord / PyFrameRecord.
//
// Three threads; only a program thread that meets a code object for the first time without
// the GIL waits (for the resolver to keep it alive, at most 50 ms, once per code object):
//  - the program's thread, in the CUPTI callback (take): one walk of its own frames
//    (python_frames.hpp: no GIL, no lock, no allocation) and one interning under a mutex
//    (python_stacks.hpp: hash look-ups; an allocation only for a stack never seen before);
//  - the collector's writer (write_new): writes the new stacks before the API records that
//    name them, hands new frames to the resolver and writes those it resolved;
//  - a resolver thread of its own, the only one that takes the GIL (PyGILState_Ensure):
//    checks the walker's layout on a live frame, then resolves frames to file, line and
//    function. It is detached: if the interpreter ends the thread (a thread taking the GIL
//    during finalization is exited by CPython 3.11-3.13, through pthread_exit's unwind, which
//    resolver_main lets through) nothing waits for it; frames it
//    never resolved are written unresolved and counted (data_loss py_frames_unresolved).
//
// Periodic samples (GPUSCOPE_PYTHON_SAMPLING=RATE, `gpuscope trace --python-sampling`): a
// fourth thread, the sampler, reads every Python thread's frames RATE times a second without
// the GIL (PyFrameWalker::list_threads / walk_other_thread, through process_vm_readv), interns
// them in the same table and records a PySampleRecord per thread. A code object it meets first
// is fingerprinted and kept alive by the resolver only if it is still that object when the GIL
// is taken (PyFrameWalker::keep_alive_if_same); otherwise its frames stay unresolved. Torn reads
// are counted (data_loss py_stacks_torn), never recorded.
//
// Until the layout is checked, no stack is taken (calls have none). Every code object a stack
// names is kept alive for good (take() says how), so no frame is resolved from freed memory or
// from another code object at a reused address; one not kept alive in time is never resolved.
#pragma once

#include <cupti.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collect/collector_config.hpp"
#include "collect/python_frames.hpp"
#include "collect/python_stacks.hpp"
#include "core/event_log_format.hpp"
#include "store/event_log_writer.hpp"

namespace gpuscope::collect::detail {

class PythonCallSites {
 public:
  // nullptr when mode is none and sampling_hz 0, or the process has no CPython; *note says why
  // a CPython gets no stacks (unknown version, free-threaded build), empty otherwise.
  // sampling_hz > 0 starts the sampler, which stamps samples with clock() (the trace clock, ns).
  static std::unique_ptr<PythonCallSites> create(collect::PythonCallsites mode, std::string* note,
                                                 std::uint32_t sampling_hz = 0, std::uint64_t (*clock)() = nullptr);
  ~PythonCallSites();
  PythonCallSites(const PythonCallSites&) = delete;
  PythonCallSites& operator=(const PythonCallSites&) = delete;

  // Stops the sampler (joined); the writer's last write_new follows. Idempotent.
  void stop_sampling() noexcept;
  // Pauses (true) or resumes (false) the sampler without ending it: a paused sampler takes no
  // sample and reads nothing (validation/python_sampling_check.py's in-process A/B).
  void pause_sampling(bool paused) noexcept { m_sampler_paused.store(paused, std::memory_order_relaxed); }
  [[nodiscard]] bool sampling() const noexcept { return m_sampling_hz > 0; }
  // Pauses (true) or resumes (false) the call sites: a paused take() walks nothing and returns 0
  // (validation/observer_cost.py --kinds callsites: their cost inside one process).
  void pause_callsites(bool paused) noexcept { m_callsites_paused.store(paused, std::memory_order_relaxed); }
  [[nodiscard]] bool callsites() const noexcept { return m_mode != collect::PythonCallsites::kNone; }

  // At setup, before the callbacks run: the callback ids of a domain that take a stack.
  void select(CUpti_CallbackDomain domain, const std::vector<CUpti_CallbackId>& cbids);
  [[nodiscard]] bool selected(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) const noexcept {
    const auto& s = m_selected[domain == CUPTI_CB_DOMAIN_DRIVER_API ? 1 : 0];
    return cbid < s.size() && s[cbid];
  }
  [[nodiscard]] collect::PythonCallsites mode() const { return m_mode; }

  // Program thread: the stack id of the caller's Python stack, 0 for none.
  [[nodiscard]] std::uint32_t take() noexcept;

  // Writer thread: new stacks (always before the API records that name them), the samples
  // taken since the last call and the frames resolved since the last call. `final`: the last call; frames still
  // unresolved are counted as lost.
  void write_new(store::EventLogWriter& writer, std::uint64_t now_ns, bool final);

  // Any thread but the resolver, without the GIL (Python's atexit, through ctypes): waits up to
  // timeout_ms until the resolver has handled every frame interned so far. Frames are resolved
  // while the interpreter runs; once it finalizes no code object can be read, so the frames of
  // a program's last moments would be lost without this.
  void flush(int timeout_ms) noexcept;

 private:
  explicit PythonCallSites(collect::PythonCallsites mode);
  // Not noexcept: CPython ends a thread that takes the GIL during finalization with
  // pthread_exit, whose forced unwind must pass through (a noexcept frame would terminate the
  // process). Every other exception ends the resolver quietly.
  void resolver_main();
  void resolve_loop();
  void write_frame(store::EventLogWriter& writer, std::uint32_t id, const PyFrameInfo& info);
  // Program thread without the GIL: has the resolver keep `codes` alive (it takes the GIL),
  // waiting up to kKeepAliveWait; past that they join m_abandoned_codes.
  void keep_alive_by_resolver(std::span<const std::uintptr_t> codes);
  void sampler_main(std::uint32_t hz) noexcept;
  void sample_once(std::vector<PyFrameWalker::PyThreadInfo>& threads) noexcept;
  // Whether OS thread tid is running (state R in /proc/self/task/TID/stat); fds kept per thread.
  bool on_cpu(std::uint32_t tid) noexcept;

  const collect::PythonCallsites m_mode;
  PyFrameWalker m_walker;
  PyStackTable m_table;
  std::vector<bool> m_selected[2];  // [0] runtime, [1] driver; by cbid

  std::mutex m_mutex;                    // guards what the writer, the resolver and flush() exchange
  std::condition_variable m_cv;          // wakes the resolver (flush)
  std::condition_variable m_done_cv;     // the resolver handled a batch (flush waits on it)
  std::vector<PyInternedFrame> m_retry;  // frames taken while the GIL was out of reach
  std::vector<std::pair<std::uint32_t, PyFrameInfo>> m_resolved;
  std::uint64_t m_unresolvable = 0;                                // frames whose code object was gone, not yet written
  std::uint64_t m_handled = 0;                                     // frames the resolver resolved or gave up on, in all
  bool m_wake_resolver = false;                                    // take() saw a new frame, or flush() waits
  std::uint64_t m_written = 0;                                     // frames written (writer thread)
  std::uint64_t m_unresolvable_out = 0;                            // frames written as unresolvable (writer thread)
  std::vector<std::uintptr_t> m_keep_pending;                      // code objects seen without the GIL, to keep alive
  std::uint64_t m_keep_requested = 0;                              // batches of m_keep_pending asked for
  std::uint64_t m_keep_done = 0;                                   // batches the resolver kept alive
  std::unordered_set<std::uintptr_t> m_abandoned_codes;            // not kept alive in time: frames never resolved
  std::string m_failure_note;                                      // the resolver's layout check failed (once)
  bool m_failure_written = false;                                  // writer thread
  std::vector<PyFrameWalker::PyCodeFingerprint> m_verify_pending;  // code objects the sampler met first

  // The sampler (GPUSCOPE_PYTHON_SAMPLING).
  std::uint32_t m_sampling_hz = 0;
  std::uint64_t (*m_clock)() = nullptr;
  std::thread m_sampler;
  std::atomic<bool> m_stop_sampler{false};
  std::atomic<bool> m_sampler_paused{false};
  std::atomic<bool> m_callsites_paused{false};
  std::mutex m_samples_mutex;                         // guards m_samples and m_samples_torn
  std::vector<log::PySampleRecord> m_samples;         // taken, not yet written
  std::uint64_t m_samples_torn = 0;                   // torn reads since the last write
  std::unordered_map<std::uint32_t, int> m_stat_fds;  // sampler thread: /proc/self/task/TID/stat
  std::string m_sampling_note;                        // why there are no samples (written once)
  bool m_sampling_note_written = false;
};

}  // namespace gpuscope::collect::detail
