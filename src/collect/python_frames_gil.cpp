// The CPython frame walker's part that holds the GIL (python_frames.hpp): the checks of the
// layouts against the interpreter's own answers, keeping code objects alive, and the resolution
// of frames to file, line and function.
#include <unistd.h>

#include "collect/python_frames.hpp"
#include "collect/python_frames_memory.hpp"

namespace gpuscope::collect::detail {
using namespace pyframes;  // NOLINT(google-build-using-namespace): this walker's own helpers

bool PyFrameWalker::keep_alive_if_same(const PyCodeFingerprint& f) const {
  // With the GIL no object is freed or created while this runs. A freed block has its first word
  // (ob_refcnt) overwritten by the allocator's free-list link (pymalloc, glibc's tcache) and
  // glibc's tcache key in ob_type: a live code object has a small count and PyCode_Type.
  if (m_api == nullptr || m_layout == nullptr || f.code == 0) return false;
  const CheckedMemory memory;
  std::uintptr_t head[2];  // ob_refcnt, ob_type
  PyCodeFingerprint now;
  if (!memory.load(f.code, head, sizeof head) || head[1] != m_api->code_type || head[0] == 0 || (head[0] >> 32) != 0 ||
      !fingerprint(f.code, now) || now.filename != f.filename || now.qualname != f.qualname ||
      now.first_line != f.first_line)
    return false;
  m_api->inc_ref(reinterpret_cast<void*>(f.code));
  return true;
}

bool PyFrameWalker::verify_threads() {
  if (threads_ready()) return true;
  if (m_state != PyWalkerState::ready || threads_failed() || !this_thread_holds_gil()) return false;
  const Layout& l = *m_layout;
  const CheckedMemory memory;
  auto fail = [&](const char* what) {
    m_threads_note = std::string("Python sampling: this CPython's ") + what +
                     " differs from the sampler's layout (checked with the GIL); no samples";
    m_threads_failed.store(true, std::memory_order_release);
    return false;
  };
  void* interp = m_api->interpreter_main();
  std::uintptr_t head = 0;
  if (!load_word(memory, reinterpret_cast<std::uintptr_t>(interp) + l.interp_threads_head, head) ||
      head != reinterpret_cast<std::uintptr_t>(m_api->thread_head(interp)))
    return fail("thread list");
  bool code_checked = false;
  for (void* t = m_api->thread_head(interp); t != nullptr; t = m_api->thread_next(t)) {
    std::uintptr_t next = 0;
    if (!load_word(memory, reinterpret_cast<std::uintptr_t>(t) + l.tstate_next, next) ||
        next != reinterpret_cast<std::uintptr_t>(m_api->thread_next(t)))
      return fail("thread list");
    void* frame_object = code_checked ? nullptr : m_api->thread_get_frame(t);  // new reference
    if (frame_object == nullptr) continue;
    void* code = m_api->frame_get_code(frame_object);  // new reference
    m_api->dec_ref(frame_object);
    PyCodeFingerprint f;
    void* filename = m_api->get_attr(code, "co_filename");
    void* qualname = m_api->get_attr(code, "co_qualname");
    void* first = m_api->get_attr(code, "co_firstlineno");
    const bool same = fingerprint(reinterpret_cast<std::uintptr_t>(code), f) &&
                      f.filename == reinterpret_cast<std::uintptr_t>(filename) &&
                      f.qualname == reinterpret_cast<std::uintptr_t>(qualname) && first != nullptr &&
                      f.first_line == m_api->long_as_long(first);
    for (void* o : {filename, qualname, first, code})
      if (o != nullptr) m_api->dec_ref(o);
    m_api->err_clear();
    if (!same) return fail("code object layout");
    code_checked = true;
  }
  const auto self = reinterpret_cast<std::uintptr_t>(m_api->this_thread_state());
  unsigned long tid = 0;
  if (!memory.load(self + l.tstate_native_tid, &tid, sizeof tid) || tid != static_cast<unsigned long>(gettid()))
    return fail("thread id field");
  std::uintptr_t gil = 0;
  if (l.runtime_gil >= 0 && m_api->runtime != 0) {
    gil = m_api->runtime + static_cast<std::uintptr_t>(l.runtime_gil);
  } else if (l.interp_gil < 0 || !load_word(memory, reinterpret_cast<std::uintptr_t>(interp) + l.interp_gil, gil)) {
    return fail("GIL");
  }
  int locked = 0;
  std::uintptr_t holder = 0;
  if (!memory.load(gil + l.gil_locked, &locked, sizeof locked) || !load_word(memory, gil + l.gil_last_holder, holder) ||
      locked == 0 || holder != self)
    return fail("GIL");
  if (!code_checked) return false;  // no Python frame to check a code object on yet: later
  m_interp = reinterpret_cast<std::uintptr_t>(interp);
  m_gil = gil;
  m_threads_ready.store(true, std::memory_order_release);
  return true;
}

bool PyFrameWalker::verify_with_live_frame() {
  if (m_state == PyWalkerState::ready) return true;
  if (m_state != PyWalkerState::unverified || !this_thread_holds_gil()) return false;
  // With the GIL every thread is parked: check the walk of the first thread that has a frame.
  for (void* tstate = m_api->thread_head(m_api->interpreter_main()); tstate != nullptr;
       tstate = m_api->thread_next(tstate)) {
    void* frame_object = m_api->thread_get_frame(tstate);  // new reference
    if (frame_object == nullptr) continue;
    const bool agrees = agrees_with(reinterpret_cast<std::uintptr_t>(tstate), frame_object);
    m_api->dec_ref(frame_object);
    if (!agrees) {
      m_state = PyWalkerState::failed;
      m_note =
          "Python stacks: this CPython's frame layout differs from the walker's (checked on a live frame); "
          "no stacks";
      return false;
    }
    m_state = PyWalkerState::ready;
    return true;
  }
  return false;  // no Python frame on any thread yet: later
}

bool PyFrameWalker::agrees_with(std::uintptr_t tstate, void* frame_object) const {
  PyRawFrame top[1];
  if (walk(tstate, top).frames == 0) return false;
  auto* live =
      reinterpret_cast<void*>(word_at(reinterpret_cast<std::uintptr_t>(frame_object) + kFrameObjectInterpreterFrame));
  void* code = m_api->frame_get_code(frame_object);  // new reference
  const int line = m_api->frame_get_line(frame_object);
  bool agrees = code != nullptr && reinterpret_cast<std::uintptr_t>(code) == top[0].code &&
                m_api->code_addr2line(code, static_cast<int>(top[0].instr_offset)) == line;
  if (code != nullptr) m_api->dec_ref(code);
  if (agrees && m_api->iframe_get_code != nullptr && m_api->iframe_get_line != nullptr) {
    void* unstable_code = m_api->iframe_get_code(live);  // new reference
    agrees = reinterpret_cast<std::uintptr_t>(unstable_code) == top[0].code && m_api->iframe_get_line(live) == line;
    if (unstable_code != nullptr) m_api->dec_ref(unstable_code);
  }
  return agrees;
}

bool PyFrameWalker::resolve(const PyRawFrame& frame, PyFrameInfo& out) const {
  if (m_api == nullptr || frame.code == 0 || word_at(frame.code + kObType) != m_api->code_type) return false;
  auto* code = reinterpret_cast<void*>(frame.code);
  auto text = [&](const char* name) {
    std::string value;
    if (void* object = m_api->get_attr(code, name)) {
      if (const char* utf8 = m_api->unicode_as_utf8(object)) value = utf8;
      m_api->dec_ref(object);
    }
    m_api->err_clear();
    return value;
  };
  out.file = text("co_filename");
  out.function = text("co_qualname");
  out.line = m_api->code_addr2line(code, static_cast<int>(frame.instr_offset));
  out.first_line = -1;
  if (void* first = m_api->get_attr(code, "co_firstlineno")) {
    out.first_line = static_cast<std::int32_t>(m_api->long_as_long(first));
    m_api->dec_ref(first);
  }
  m_api->err_clear();
  return true;
}

void PyFrameWalker::keep_alive(std::uintptr_t code) const {
  if (m_api != nullptr && code != 0 && word_at(code + kObType) == m_api->code_type)
    m_api->inc_ref(reinterpret_cast<void*>(code));
}

void PyFrameWalker::release(std::uintptr_t code) const {
  if (m_api != nullptr && code != 0) m_api->dec_ref(reinterpret_cast<void*>(code));
}

bool PyFrameWalker::acquire_gil(int& token) const {
  if (m_api == nullptr || m_api->is_initialized() == 0 || m_api->is_finalizing() != 0) return false;
  token = m_api->gil_ensure();
  return true;
}

bool PyFrameWalker::holds_gil() const {
  return m_api != nullptr && m_api->is_initialized() != 0 && m_api->is_finalizing() == 0 && m_api->gil_check() == 1;
}

void PyFrameWalker::release_gil(int token) const {
  if (m_api != nullptr) m_api->gil_release(token);
}

}  // namespace gpuscope::collect::detail
