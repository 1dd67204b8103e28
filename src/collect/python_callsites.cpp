// Python call sites of CUDA calls (python_callsites.hpp).
#include "collect/python_callsites.hpp"

#include <cxxabi.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <unordered_set>

#include "core/event_log_format.hpp"
#include "store/data_loss_kinds.hpp"

namespace gpuscope::collect::detail {
namespace {

// Deeper stacks keep their innermost frames (the calls being blamed).
constexpr std::size_t kMaxFrames = 128;
// How often the resolver looks for work while none is announced (the layout check retries
// at this pace until a Python frame exists).
constexpr auto kResolverPeriod = std::chrono::milliseconds(100);
// How long a thread without the GIL waits for the resolver to keep a new code object alive
// (once per code object; the GIL changes hands every 5 ms by default).
constexpr auto kKeepAliveWait = std::chrono::milliseconds(50);
// The largest share of one core the sampler takes: past it, the sampling rate drops.
constexpr double kSamplerDuty = 0.25;
// The sampler reads at most this many Python threads per tick.
constexpr std::size_t kMaxSampledThreads = 256;

void write_loss(store::EventLogWriter& writer, std::uint64_t now_ns, store::DataLossKind kind, std::uint64_t count) {
  log::DataLossRecord d{};
  d.ts_ns = now_ns;
  d.count = count;
  d.what_string = writer.intern(store::data_loss_name(kind));
  writer.add(log::RecordKind::kDataLoss, d);
}

void write_warning(store::EventLogWriter& writer, std::uint64_t now_ns, const std::string& text) {
  log::MessageRecord m{};
  m.ts_ns = now_ns;
  m.severity = static_cast<std::uint8_t>(log::Severity::kWarning);
  m.text_string = writer.intern(text);
  writer.add(log::RecordKind::kMessage, m);
}

}  // namespace

std::unique_ptr<PythonCallSites> PythonCallSites::create(collect::PythonCallsites mode, std::string* note,
                                                         std::uint32_t sampling_hz, std::uint64_t (*clock)()) {
  if (mode == collect::PythonCallsites::kNone && sampling_hz == 0) return nullptr;
  std::unique_ptr<PythonCallSites> sites(new PythonCallSites(mode));
  const PyWalkerState state = sites->m_walker.state();
  if (state == PyWalkerState::no_python) return nullptr;
  if (state != PyWalkerState::unverified) {
    if (note != nullptr) *note = sites->m_walker.note();
    return nullptr;
  }
  // Never joined: see the file comment of python_callsites.hpp.
  std::thread(&PythonCallSites::resolver_main, sites.get()).detach();
  if (sampling_hz > 0 && clock != nullptr) {
    sites->m_sampling_hz = sampling_hz;
    sites->m_clock = clock;
    sites->m_sampler = std::thread(&PythonCallSites::sampler_main, sites.get(), sampling_hz);
  }
  return sites;
}

PythonCallSites::PythonCallSites(collect::PythonCallsites mode) : m_mode(mode) {}

PythonCallSites::~PythonCallSites() {
  stop_sampling();
  for (const auto& [tid, fd] : m_stat_fds) ::close(fd);
}

void PythonCallSites::stop_sampling() noexcept {
  m_stop_sampler.store(true);
  try {
    if (m_sampler.joinable() && m_sampler.get_id() != std::this_thread::get_id()) m_sampler.join();
  } catch (...) {
  }
}

void PythonCallSites::sampler_main(std::uint32_t hz) noexcept {
  try {
    const auto period = std::chrono::nanoseconds(1'000'000'000 / hz);
    std::vector<PyFrameWalker::PyThreadInfo> threads(kMaxSampledThreads);
    auto next = std::chrono::steady_clock::now();
    while (!m_stop_sampler.load(std::memory_order_relaxed)) {
      const auto tick = std::chrono::steady_clock::now();
      if (m_sampler_paused.load(std::memory_order_relaxed)) {
        // paused: nothing read, nothing recorded
      } else if (m_walker.threads_ready()) {
        sample_once(threads);
      } else if (m_walker.threads_failed() || m_walker.state() == PyWalkerState::failed) {
        std::lock_guard lock(m_samples_mutex);
        m_sampling_note = m_walker.threads_failed() ? m_walker.threads_note() : m_walker.note();
        return;
      }
      // At most kSamplerDuty of one core: a tick that took longer (many threads, deep stacks)
      // stretches the wait, so the rate drops instead of the program's share of the CPU.
      const auto now = std::chrono::steady_clock::now();
      const auto rest = std::chrono::duration_cast<std::chrono::nanoseconds>((now - tick) * (1.0 / kSamplerDuty - 1.0));
      next = std::max(next + period, now + rest);
      std::this_thread::sleep_until(next);
    }
  } catch (...) {
  }
}

void PythonCallSites::sample_once(std::vector<PyFrameWalker::PyThreadInfo>& threads) noexcept {
  std::uintptr_t gil_holder = 0;
  const int n = m_walker.list_threads(threads, &gil_holder);
  const std::uint64_t ts = m_clock();
  if (n < 0) {
    std::lock_guard lock(m_samples_mutex);
    ++m_samples_torn;
    return;
  }
  PyRawFrame frames[kMaxFrames];
  std::uintptr_t codes[kMaxFrames];
  std::uint64_t torn = 0;
  std::vector<log::PySampleRecord> taken;
  taken.reserve(static_cast<std::size_t>(n));
  bool wake = false;
  for (int i = 0; i < n; ++i) {
    PyWalkResult walked = m_walker.walk_other_thread(threads[i], frames);
    // Torn: the thread's frames moved on since list_threads read its state. Once more from a
    // fresh read of the state (microseconds later); torn twice is counted, never recorded.
    if (walked.end == PyWalkEnd::torn && m_walker.reread_thread(threads[i]))
      walked = m_walker.walk_other_thread(threads[i], frames);
    if (walked.end == PyWalkEnd::torn) {
      ++torn;
      continue;
    }
    log::PySampleRecord r{};
    r.ts_ns = ts;
    r.tid = threads[i].tid;
    if (walked.frames > 0) {
      std::size_t n_codes = 0;
      bool new_frame = false;
      // Interned and its new code objects queued in one step under m_mutex: the resolver takes
      // the table's new frames under it too, so it never sees a frame before its code's fingerprint.
      std::lock_guard lock(m_mutex);
      r.stack_id = m_table.intern(std::span<const PyRawFrame>(frames, walked.frames), codes, &n_codes, &new_frame);
      for (std::size_t c = 0; c < n_codes; ++c) {
        PyFrameWalker::PyCodeFingerprint f;
        if (m_walker.fingerprint(codes[c], f)) {
          m_verify_pending.push_back(f);
        } else {
          m_abandoned_codes.insert(codes[c]);
        }
      }
      wake = wake || new_frame || n_codes > 0;
      if (wake) m_wake_resolver = true;
    }
    if (gil_holder != 0 && gil_holder == threads[i].tstate) r.flags |= log::kPySampleHoldsGil;
    if (on_cpu(r.tid)) r.flags |= log::kPySampleOnCpu;
    taken.push_back(r);
  }
  if (wake) m_cv.notify_one();
  std::lock_guard lock(m_samples_mutex);
  m_samples.insert(m_samples.end(), taken.begin(), taken.end());
  m_samples_torn += torn;
}

bool PythonCallSites::on_cpu(std::uint32_t tid) noexcept {
  try {
    auto [it, added] = m_stat_fds.try_emplace(tid, -1);
    if (added) {
      const std::string path = "/proc/self/task/" + std::to_string(tid) + "/stat";
      it->second = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    }
    if (it->second < 0) return false;
    char buf[256];
    const ssize_t got = ::pread(it->second, buf, sizeof buf - 1, 0);
    if (got <= 0) {  // the thread ended (its tid may be reused: open again next time)
      ::close(it->second);
      m_stat_fds.erase(it);
      return false;
    }
    buf[got] = '\0';
    const char* paren = std::strrchr(buf, ')');  // "pid (comm) S ...": comm may hold spaces and ')'
    return paren != nullptr && paren[1] == ' ' && paren[2] == 'R';
  } catch (...) {
    return false;
  }
}

void PythonCallSites::select(CUpti_CallbackDomain domain, const std::vector<CUpti_CallbackId>& cbids) {
  auto& s = m_selected[domain == CUPTI_CB_DOMAIN_DRIVER_API ? 1 : 0];
  for (CUpti_CallbackId cbid : cbids) {
    if (cbid >= s.size()) s.resize(cbid + 1, false);
    s[cbid] = true;
  }
}

std::uint32_t PythonCallSites::take() noexcept {
  if (m_callsites_paused.load(std::memory_order_relaxed)) return 0;
  try {
    PyRawFrame frames[kMaxFrames];
    const PyWalkResult walked = m_walker.walk_this_thread(frames);
    if (walked.frames == 0) return 0;
    std::uintptr_t codes[kMaxFrames];
    std::size_t n_codes = 0;
    bool new_frame = false;
    const std::uint32_t id =
        m_table.intern(std::span<const PyRawFrame>(frames, walked.frames), codes, &n_codes, &new_frame);
    // Every code object a frame names is kept alive (one reference, never dropped) before its
    // frames can be resolved: a script's <module> code is freed as soon as its body ends, and
    // a freed code object's address can be reused by another (the frame would then name the
    // wrong function). With the GIL, here; without it (the caller released it, as PyTorch does
    // around its CUDA calls), by the resolver while this thread waits: its frames are alive
    // until it returns.
    if (n_codes > 0 && m_walker.holds_gil()) {
      for (std::size_t i = 0; i < n_codes; ++i) m_walker.keep_alive(codes[i]);
    } else if (n_codes > 0) {
      keep_alive_by_resolver(std::span<const std::uintptr_t>(codes, n_codes));
      return id;  // keep_alive_by_resolver woke the resolver: it takes the new frames as well
    }
    if (new_frame) {
      {
        std::lock_guard lock(m_mutex);
        m_wake_resolver = true;
      }
      m_cv.notify_one();
    }
    return id;
  } catch (...) {
    return 0;  // an allocation failed: this call has no stack
  }
}

void PythonCallSites::keep_alive_by_resolver(std::span<const std::uintptr_t> codes) {
  std::unique_lock lock(m_mutex);
  m_keep_pending.insert(m_keep_pending.end(), codes.begin(), codes.end());
  const std::uint64_t ticket = ++m_keep_requested;
  m_wake_resolver = true;
  m_cv.notify_one();
  if (!m_done_cv.wait_for(lock, kKeepAliveWait, [&] { return m_keep_done >= ticket || !m_failure_note.empty(); })) {
    // The GIL stayed out of reach (another thread held it, or the interpreter is not running):
    // these code objects may die once this call returns, so their frames are never resolved
    // (counted unresolved). The resolver checks this set after it takes the GIL, so a code
    // object it kept alive before this point stays valid.
    m_abandoned_codes.insert(codes.begin(), codes.end());
  }
}

void PythonCallSites::resolver_main() {
  try {
    resolve_loop();
  } catch (abi::__forced_unwind&) {
    throw;  // pthread_exit (CPython ending this thread at finalization): the thread ends
  } catch (...) {
    // An allocation failed: the frames left are written unresolved and counted.
  }
}

void PythonCallSites::resolve_loop() {
  std::vector<PyInternedFrame> work;
  std::vector<std::uintptr_t> keep;                      // code objects to keep alive (keep_alive_by_resolver)
  std::vector<PyFrameWalker::PyCodeFingerprint> verify;  // the sampler's, kept alive if still themselves
  std::uint64_t keep_ticket = 0;
  std::vector<std::pair<std::uint32_t, PyFrameInfo>> done;
  for (;;) {
    {
      std::unique_lock lock(m_mutex);
      m_cv.wait_for(lock, kResolverPeriod, [&] { return m_wake_resolver; });  // take()'s new frame, flush()
      m_wake_resolver = false;
      work.swap(m_retry);
      keep.swap(m_keep_pending);
      keep_ticket = m_keep_requested;
      verify.insert(verify.end(), m_verify_pending.begin(), m_verify_pending.end());
      m_verify_pending.clear();
      // New frames straight from the table, not through the writer: the writer's period can be
      // longer than a short program, whose frames would then meet a finalizing interpreter.
      // Under m_mutex, so that the sampler's frames come with their codes' fingerprints.
      m_table.take_frames_to_resolve(work);
    }
    const bool unverified = m_walker.state() == PyWalkerState::unverified ||
                            (m_sampling_hz > 0 && !m_walker.threads_ready() && !m_walker.threads_failed());
    if (work.empty() && keep.empty() && verify.empty() && !unverified) {
      m_done_cv.notify_all();
      continue;
    }
    if (m_walker.state() == PyWalkerState::failed) return;
    int gil = 0;
    if (!m_walker.acquire_gil(gil)) {
      // Not running yet, or finalizing: keep the frames for a later try.
      std::lock_guard lock(m_mutex);
      m_retry.insert(m_retry.end(), work.begin(), work.end());
      m_keep_pending.insert(m_keep_pending.end(), keep.begin(), keep.end());
      m_verify_pending.insert(m_verify_pending.end(), verify.begin(), verify.end());
      work.clear();
      keep.clear();
      verify.clear();
      continue;
    }
    if (m_walker.state() == PyWalkerState::unverified) m_walker.verify_with_live_frame();
    if (m_sampling_hz > 0 && m_walker.state() == PyWalkerState::ready) m_walker.verify_threads();
    std::unordered_set<std::uintptr_t> abandoned;
    {
      std::lock_guard lock(m_mutex);  // with the GIL held: no thread can free a code object from here on
      abandoned = m_abandoned_codes;
    }
    for (const std::uintptr_t code : keep)
      if (!abandoned.contains(code)) m_walker.keep_alive(code);
    keep.clear();
    std::vector<std::uintptr_t> lost;
    for (const PyFrameWalker::PyCodeFingerprint& f : verify) {
      if (!abandoned.contains(f.code) && !m_walker.keep_alive_if_same(f)) lost.push_back(f.code);
    }
    verify.clear();
    if (!lost.empty()) {
      abandoned.insert(lost.begin(), lost.end());
      std::lock_guard lock(m_mutex);
      m_abandoned_codes.insert(lost.begin(), lost.end());
    }
    std::uint64_t unresolvable = 0;
    for (const PyInternedFrame& f : work) {
      PyFrameInfo info;
      if (abandoned.contains(f.frame.code)) {
        ++unresolvable;
      } else if (m_walker.resolve(f.frame, info)) {
        done.emplace_back(f.id, std::move(info));
      } else {
        ++unresolvable;
      }
    }
    m_walker.release_gil(gil);
    {
      std::lock_guard lock(m_mutex);
      m_handled += work.size();
      m_resolved.insert(m_resolved.end(), std::make_move_iterator(done.begin()), std::make_move_iterator(done.end()));
      done.clear();
      m_unresolvable += unresolvable;
      m_keep_done = std::max(m_keep_done, keep_ticket);
      if (m_walker.state() == PyWalkerState::failed) m_failure_note = m_walker.note();
    }
    work.clear();
    m_done_cv.notify_all();
    if (m_walker.state() == PyWalkerState::failed) return;
  }
}

void PythonCallSites::flush(int timeout_ms) noexcept {
  try {
    const std::uint64_t target = m_table.frame_count();
    std::unique_lock lock(m_mutex);
    m_wake_resolver = true;
    m_cv.notify_one();
    m_done_cv.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                       [&] { return m_handled >= target || !m_failure_note.empty(); });
  } catch (...) {
  }
}

void PythonCallSites::write_frame(store::EventLogWriter& writer, std::uint32_t id, const PyFrameInfo& info) {
  log::PyFrameRecord r{};
  r.frame_id = id;
  r.line = info.line;
  r.first_line = info.first_line;
  r.file_string = writer.intern(info.file);
  r.function_string = writer.intern(info.function);
  writer.add(log::RecordKind::kPyFrame, r);
}

void PythonCallSites::write_new(store::EventLogWriter& writer, std::uint64_t now_ns, bool final) {
  PyStackAdditions added;
  m_table.take_new(added);
  for (const PyInternedStack& s : added.stacks) {
    log::PyStackRecord r{};
    r.stack_id = s.id;
    r.parent_id = s.parent;
    r.frame_id = s.frame;
    r.depth = s.depth;
    writer.add(log::RecordKind::kPyStack, r);
  }
  std::vector<log::PySampleRecord> samples;
  std::uint64_t torn = 0;
  std::string sampling_note;
  {
    std::lock_guard lock(m_samples_mutex);
    samples.swap(m_samples);
    torn = m_samples_torn;
    m_samples_torn = 0;
    if (!m_sampling_note_written) sampling_note.swap(m_sampling_note);
  }
  for (const log::PySampleRecord& s : samples) writer.add(log::RecordKind::kPySample, s);
  if (torn > 0) write_loss(writer, now_ns, store::DataLossKind::kPyStacksTorn, torn);
  if (!sampling_note.empty()) {
    write_warning(writer, now_ns, sampling_note);
    m_sampling_note_written = true;
  }
  std::vector<std::pair<std::uint32_t, PyFrameInfo>> resolved;
  std::uint64_t unresolvable = 0;
  std::string failure;
  {
    std::lock_guard lock(m_mutex);
    resolved.swap(m_resolved);
    unresolvable = m_unresolvable;
    m_unresolvable = 0;
    if (!m_failure_written) failure = m_failure_note;
  }
  for (const auto& [id, info] : resolved) write_frame(writer, id, info);
  m_written += resolved.size();
  m_unresolvable_out += unresolvable;
  if (!failure.empty()) {
    write_warning(writer, now_ns, failure);
    m_failure_written = true;
  }
  // At the end, frames interned but never handled (the resolver had no GIL in time) are lost too.
  const std::uint64_t interned = m_table.frame_count();
  const std::uint64_t handled = m_written + m_unresolvable_out;
  const std::uint64_t lost = unresolvable + (final && interned > handled ? interned - handled : 0);
  if (lost > 0) write_loss(writer, now_ns, store::DataLossKind::kPyFramesUnresolved, lost);
}

}  // namespace gpuscope::collect::detail
