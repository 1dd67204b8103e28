// The CPython frame walker (python_frames.hpp): symbol look-up, per-version layouts, the
// live-frame check, the walk and the resolution of frames to file, line and function.
#include "collect/python_frames.hpp"

#include <dlfcn.h>

#include <cstring>

namespace gpuscope::collect::detail {
namespace {

// PyObject_HEAD / PyObject_VAR_HEAD of a build with the GIL: ob_refcnt, ob_type, ob_size.
constexpr int kObType = 8;
constexpr int kObSize = 16;
// PyFrameObject.f_frame (3.11-3.13: after PyObject_HEAD and f_back).
constexpr int kFrameObjectInterpreterFrame = 24;
constexpr int kCodeUnitBytes = 2;  // sizeof(_Py_CODEUNIT)
// A chain longer than this is a cycle read from a torn stack (CPython's default recursion
// limit is 1000 Python frames; each may add a C-stack shim on 3.12+).
constexpr std::size_t kMaxFrameHops = 4096;
constexpr char kOwnerMax = 3;

// Offsets from CPython's headers of each minor version (offsetof on x86-64 and aarch64,
// non-debug build), checked on a live frame before use (verify_with_live_frame).
// clang-format off
// Fields in Layout's order: tstate_cframe, cframe_current, frame_code, frame_previous,
// frame_instr, frame_owner, code_units, owner_cstack.
constexpr PyFrameWalker::Layout kLayout311{56,  8, 32, 48, 56, 69, 184, -1};
constexpr PyFrameWalker::Layout kLayout312{56,  0,  0,  8, 56, 70, 192,  3};
constexpr PyFrameWalker::Layout kLayout313{-1, 72,  0,  8, 56, 70, 200,  3};
// clang-format on

std::uintptr_t word_at(std::uintptr_t address) { return *reinterpret_cast<const std::uintptr_t*>(address); }

template <typename F>
F symbol(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

// The interpreter's functions, found once per process.
struct PyFrameWalker::Api {
  int (*is_initialized)() = nullptr;
  const char* (*get_version)() = nullptr;
  void* (*this_thread_state)() = nullptr;
  int (*gil_check)() = nullptr;
  int (*gil_ensure)() = nullptr;
  void (*gil_release)(int) = nullptr;
  void* (*frame_get_code)(void*) = nullptr;
  int (*frame_get_line)(void*) = nullptr;
  int (*code_addr2line)(void*, int) = nullptr;
  void* (*get_attr)(void*, const char*) = nullptr;
  const char* (*unicode_as_utf8)(void*) = nullptr;
  long (*long_as_long)(void*) = nullptr;
  void (*err_clear)() = nullptr;
  void (*inc_ref)(void*) = nullptr;
  void (*dec_ref)(void*) = nullptr;
  int (*is_finalizing)() = nullptr;
  void* (*interpreter_main)() = nullptr;
  void* (*thread_head)(void*) = nullptr;
  void* (*thread_next)(void*) = nullptr;
  void* (*thread_get_frame)(void*) = nullptr;
  void* (*iframe_get_code)(void*) = nullptr;  // 3.12+
  int (*iframe_get_line)(void*) = nullptr;    // 3.12+
  std::uintptr_t code_type = 0;

  bool complete() const {
    return is_initialized && get_version && this_thread_state && gil_check && gil_ensure && gil_release &&
           frame_get_code && frame_get_line && code_addr2line && get_attr && unicode_as_utf8 && long_as_long &&
           err_clear && inc_ref && dec_ref && is_finalizing && interpreter_main && thread_head && thread_next &&
           thread_get_frame && code_type != 0;
  }
};

const PyFrameWalker::Layout* PyFrameWalker::layout_for(std::uint64_t version_hex) {
  switch ((version_hex >> 16) & 0xffff) {
    case 0x030b:
      return &kLayout311;
    case 0x030c:
      return &kLayout312;
    case 0x030d:
      return &kLayout313;
    default:
      return nullptr;
  }
}

PyFrameWalker::PyFrameWalker() {
  static Api api;
  if (dlsym(RTLD_DEFAULT, "Py_IsInitialized") == nullptr) return;  // no Python: inert
  const auto* version = static_cast<const unsigned long*>(dlsym(RTLD_DEFAULT, "Py_Version"));
  if (version == nullptr) {
    m_state = PyWalkerState::unsupported;
    m_note = "Python stacks: this CPython is older than 3.11 (no Py_Version); stacks need 3.11, 3.12 or 3.13";
    return;
  }
  m_version_hex = *version;
  api.is_initialized = symbol<int (*)()>("Py_IsInitialized");
  api.get_version = symbol<const char* (*)()>("Py_GetVersion");
  api.this_thread_state = symbol<void* (*)()>("PyGILState_GetThisThreadState");
  api.gil_check = symbol<int (*)()>("PyGILState_Check");
  api.gil_ensure = symbol<int (*)()>("PyGILState_Ensure");
  api.gil_release = symbol<void (*)(int)>("PyGILState_Release");
  api.frame_get_code = symbol<void* (*)(void*)>("PyFrame_GetCode");
  api.frame_get_line = symbol<int (*)(void*)>("PyFrame_GetLineNumber");
  api.code_addr2line = symbol<int (*)(void*, int)>("PyCode_Addr2Line");
  api.get_attr = symbol<void* (*)(void*, const char*)>("PyObject_GetAttrString");
  api.unicode_as_utf8 = symbol<const char* (*)(void*)>("PyUnicode_AsUTF8");
  api.long_as_long = symbol<long (*)(void*)>("PyLong_AsLong");
  api.err_clear = symbol<void (*)()>("PyErr_Clear");
  api.inc_ref = symbol<void (*)(void*)>("Py_IncRef");
  api.dec_ref = symbol<void (*)(void*)>("Py_DecRef");
  api.is_finalizing = symbol<int (*)()>("Py_IsFinalizing");  // 3.13
  if (api.is_finalizing == nullptr) api.is_finalizing = symbol<int (*)()>("_Py_IsFinalizing");
  api.interpreter_main = symbol<void* (*)()>("PyInterpreterState_Main");
  api.thread_head = symbol<void* (*)(void*)>("PyInterpreterState_ThreadHead");
  api.thread_next = symbol<void* (*)(void*)>("PyThreadState_Next");
  api.thread_get_frame = symbol<void* (*)(void*)>("PyThreadState_GetFrame");
  api.iframe_get_code = symbol<void* (*)(void*)>("PyUnstable_InterpreterFrame_GetCode");
  api.iframe_get_line = symbol<int (*)(void*)>("PyUnstable_InterpreterFrame_GetLine");
  api.code_type = reinterpret_cast<std::uintptr_t>(dlsym(RTLD_DEFAULT, "PyCode_Type"));
  const unsigned major = (m_version_hex >> 24) & 0xff;
  const unsigned minor = (m_version_hex >> 16) & 0xff;
  const std::string version_text = std::to_string(major) + "." + std::to_string(minor);
  if (!api.complete()) {
    m_state = PyWalkerState::unsupported;
    m_note = "Python stacks: CPython " + version_text + " lacks a function the walker needs; no stacks";
    return;
  }
  const bool free_threaded = std::strstr(api.get_version(), "free-threading") != nullptr ||
                             dlsym(RTLD_DEFAULT, "_Py_MergeZeroLocalRefcount") != nullptr;
  if (free_threaded) {
    m_state = PyWalkerState::unsupported;
    m_note = "Python stacks: CPython " + version_text +
             " is a free-threaded build, whose frames this walker "
             "cannot read safely; no stacks (use a build with the GIL)";
    return;
  }
  m_layout = layout_for(m_version_hex);
  if (m_layout == nullptr) {
    m_state = PyWalkerState::unsupported;
    m_note = "Python stacks: CPython " + version_text + " is not one the walker knows (3.11, 3.12, 3.13); no stacks";
    return;
  }
  m_api = &api;
  m_state = PyWalkerState::unverified;
}

bool PyFrameWalker::this_thread_holds_gil() const {
  return m_api != nullptr && m_api->is_initialized() != 0 && m_api->this_thread_state() != nullptr &&
         m_api->gil_check() != 0;
}

PyWalkResult PyFrameWalker::walk_this_thread(std::span<PyRawFrame> out) const {
  if (m_state != PyWalkerState::ready) return {};
  return walk(reinterpret_cast<std::uintptr_t>(m_api->this_thread_state()), out);
}

PyWalkResult PyFrameWalker::walk(std::uintptr_t tstate, std::span<PyRawFrame> out) const {
  PyWalkResult result;
  if (tstate == 0) return result;
  const Layout& l = *m_layout;
  std::uintptr_t frame = 0;
  if (l.tstate_cframe >= 0) {
    const std::uintptr_t cframe = word_at(tstate + l.tstate_cframe);
    if (cframe == 0) return result;
    frame = word_at(cframe + l.cframe_current);
  } else {
    frame = word_at(tstate + l.cframe_current);
  }
  for (std::size_t hops = 0; frame != 0; ++hops) {
    const char owner = *reinterpret_cast<const char*>(frame + l.frame_owner);
    if (hops == kMaxFrameHops || owner < 0 || owner > kOwnerMax) {
      result.end = PyWalkEnd::torn;
      return result;
    }
    const std::uintptr_t code = owner == l.owner_cstack ? 0 : word_at(frame + l.frame_code);
    if (code != 0 && word_at(code + kObType) == m_api->code_type) {
      const std::uintptr_t first = code + l.code_units;
      const std::uintptr_t bytes = word_at(code + kObSize) * kCodeUnitBytes;
      const std::uintptr_t instr = word_at(frame + l.frame_instr);
      // A frame not started yet points one unit before its code: skipped, as CPython does.
      if (instr >= first && instr < first + bytes) {
        if (result.frames == out.size()) {
          result.end = PyWalkEnd::truncated;
          return result;
        }
        out[result.frames++] = {code, static_cast<std::uint32_t>(instr - first)};
      }
    }
    frame = word_at(frame + l.frame_previous);
  }
  return result;
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
