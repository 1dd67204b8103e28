// The CPython frame walker (python_frames.hpp): symbol look-up, per-version layouts, the walks
// (this thread's, another's for the sampler) and the thread list; the checks and resolution
// that hold the GIL are in python_frames_gil.cpp.
#include "collect/python_frames.hpp"
#include "collect/python_frames_memory.hpp"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace gpuscope::collect::detail {
using namespace pyframes;  // NOLINT(google-build-using-namespace): this walker's own helpers
namespace {

constexpr int kCodeUnitBytes = 2;  // sizeof(_Py_CODEUNIT)
// A chain longer than this is a cycle read from a torn stack (CPython's default recursion
// limit is 1000 Python frames; each may add a C-stack shim on 3.12+).
constexpr std::size_t kMaxFrameHops = 4096;
// The most frames one walk returns (callers' own limits are lower).
constexpr std::size_t kMaxWalkFrames = 256;
constexpr char kOwnerMax = 3;

// Offsets from CPython's headers of each minor version (offsetof on x86-64 and aarch64,
// non-debug build), checked on a live frame before use (verify_with_live_frame).
// clang-format off
// Fields in Layout's order: tstate_cframe, cframe_current, frame_code, frame_previous,
// frame_instr, frame_owner, code_units, owner_cstack; then the sampler's: tstate_next,
// tstate_native_tid, interp_threads_head, runtime_gil, interp_gil, gil_last_holder, gil_locked,
// code_filename, code_qualname, code_first_line, tstate_datastack.
constexpr PyFrameWalker::Layout kLayout311{56,  8, 32, 48, 56, 69, 184, -1,  8, 160,   16, 360,  -1, 8, 16, 112, 128, 72, 296};
constexpr PyFrameWalker::Layout kLayout312{56,  0,  0,  8, 56, 70, 192,  3,  8, 144,   72,  -1, 384, 8, 16, 112, 128, 68, 232};
constexpr PyFrameWalker::Layout kLayout313{-1, 72,  0,  8, 56, 70, 200,  3,  8, 160, 7344,  -1,  16, 8, 16, 112, 128, 68, 232};
// clang-format on

// The first bytes of a PyThreadState that hold every field the sampler reads (list_threads
// reads no more: 3.12's whole PyThreadState is 288 bytes).
constexpr std::size_t thread_state_bytes(const PyFrameWalker::Layout& l) {
  const int word = static_cast<int>(sizeof(std::uintptr_t));
  return static_cast<std::size_t>(
      std::max({l.tstate_next + word, l.tstate_native_tid + word,
                (l.tstate_cframe >= 0 ? l.tstate_cframe : l.cframe_current) + word, l.tstate_datastack + 2 * word}));
}
static_assert(thread_state_bytes(kLayout311) <= PyFrameWalker::kThreadStateBytes &&
              thread_state_bytes(kLayout312) <= PyFrameWalker::kThreadStateBytes &&
              thread_state_bytes(kLayout313) <= PyFrameWalker::kThreadStateBytes);

// Memory of this process read in place: the calling thread's own frames, which cannot change
// while it reads them.
struct DirectMemory {
  bool load(std::uintptr_t address, void* out, std::size_t bytes) const {
    std::memcpy(out, reinterpret_cast<const void*>(address), bytes);
    return true;
  }
  // n reads of `bytes` each, from addresses[i] into out + i * bytes.
  bool load_each(const std::uintptr_t* addresses, std::size_t n, std::size_t bytes, void* out) const {
    for (std::size_t i = 0; i < n; ++i) load(addresses[i], static_cast<unsigned char*>(out) + i * bytes, bytes);
    return true;
  }
};

// The largest frame-stack snapshot a sample copies (the innermost frames; older ones are read
// one by one).
constexpr std::uintptr_t kSnapshotBytes = 64 * 1024;
// _PyStackChunk.data: where a chunk's frames start (after previous, size, top).
constexpr std::uintptr_t kChunkData = 24;

// One read of the first bytes of the thread state at `tstate` (every field the sampler needs of
// it) into `out`, with its address and OS thread id.
bool read_thread_state(const CheckedMemory& memory, const PyFrameWalker::Layout& l, std::uintptr_t tstate,
                       PyFrameWalker::PyThreadInfo& out) {
  if (!memory.load(tstate, out.head, thread_state_bytes(l))) return false;
  unsigned long tid = 0;
  std::memcpy(&tid, out.head + l.tstate_native_tid, sizeof tid);
  out.tstate = tstate;
  out.tid = static_cast<std::uint32_t>(tid);
  return true;
}

template <typename F>
F symbol(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

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
  api.runtime = reinterpret_cast<std::uintptr_t>(dlsym(RTLD_DEFAULT, "_PyRuntime"));
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
  return walk_with(DirectMemory{}, tstate, out);
}

PyWalkResult PyFrameWalker::walk_other_thread(const PyThreadInfo& thread, std::span<PyRawFrame> out) const {
  const std::uintptr_t tstate = thread.tstate;
  if (m_state != PyWalkerState::ready || tstate == 0) return {};
  // The thread's current stack chunk, from its data start (or kSnapshotBytes below the top) to
  // the top, in one read: the frames of ordinary calls live there, innermost last.
  thread_local std::vector<unsigned char> snapshot(kSnapshotBytes);
  CheckedMemory memory;
  memory.snapshots[0] = {thread.head, tstate, tstate + thread_state_bytes(*m_layout)};  // as list_threads read it
  std::uintptr_t stack[2] = {0, 0};  // datastack_chunk, datastack_top
  if (memory.load(tstate + m_layout->tstate_datastack, stack, sizeof stack) && stack[0] != 0 &&
      stack[1] > stack[0] + kChunkData) {
    const std::uintptr_t lo = std::max(stack[0] + kChunkData, stack[1] - std::min(stack[1], kSnapshotBytes));
    if (memory.load(lo, snapshot.data(), stack[1] - lo)) {
      memory.snapshots[1] = {snapshot.data(), lo, stack[1]};
    }
  }
  return walk_with(memory, tstate, out);
}

template <typename Memory>
PyWalkResult PyFrameWalker::walk_with(const Memory& memory, std::uintptr_t tstate, std::span<PyRawFrame> out) const {
  PyWalkResult result;
  if (tstate == 0) return result;
  const Layout& l = *m_layout;
  auto torn = [&] {
    result.end = PyWalkEnd::torn;
    return result;
  };
  std::uintptr_t frame = 0;
  if (l.tstate_cframe >= 0) {
    std::uintptr_t cframe = 0;
    if (!load_word(memory, tstate + l.tstate_cframe, cframe)) return torn();
    if (cframe == 0) return result;
    if (!load_word(memory, cframe + l.cframe_current, frame)) return torn();
  } else if (!load_word(memory, tstate + l.cframe_current, frame)) {
    return torn();
  }
  // One read of the fields the walk needs from each frame; then the code objects' headers, all
  // in one read, to check each is a code object and its instruction lies inside it.
  const int frame_bytes =
      std::max(std::max({l.frame_code, l.frame_previous, l.frame_instr}) + static_cast<int>(sizeof(std::uintptr_t)),
               l.frame_owner + 1);
  unsigned char f[96];
  std::uintptr_t codes[kMaxWalkFrames];
  std::uintptr_t instrs[kMaxWalkFrames];
  const std::size_t cap = std::min(out.size(), kMaxWalkFrames);
  std::size_t n = 0;
  bool full = false;
  for (std::size_t hops = 0; frame != 0; ++hops) {
    if (hops == kMaxFrameHops || !memory.load(frame, f, static_cast<std::size_t>(frame_bytes))) return torn();
    auto field = [&](int offset) {
      std::uintptr_t v = 0;
      std::memcpy(&v, f + offset, sizeof v);
      return v;
    };
    const char owner = static_cast<char>(f[l.frame_owner]);
    if (owner < 0 || owner > kOwnerMax) return torn();
    const std::uintptr_t code = owner == l.owner_cstack ? 0 : field(l.frame_code);
    if (code != 0) {
      if (n == cap) {
        full = true;
        break;
      }
      codes[n] = code + kObType;
      instrs[n++] = field(l.frame_instr);
    }
    frame = field(l.frame_previous);
  }
  std::uintptr_t headers[kMaxWalkFrames][2];  // ob_type, ob_size
  if (n > 0 && !memory.load_each(codes, n, sizeof headers[0], headers)) return torn();
  for (std::size_t i = 0; i < n; ++i) {
    if (headers[i][0] != m_api->code_type) continue;  // 3.13: an executable that is not code
    const std::uintptr_t code = codes[i] - kObType;
    const std::uintptr_t first = code + l.code_units;
    const std::uintptr_t bytes = headers[i][1] * kCodeUnitBytes;
    // A frame not started yet points one unit before its code: skipped, as CPython does.
    if (instrs[i] >= first && instrs[i] < first + bytes)
      out[result.frames++] = {code, static_cast<std::uint32_t>(instrs[i] - first)};
  }
  if (full) result.end = PyWalkEnd::truncated;
  return result;
}

int PyFrameWalker::list_threads(std::span<PyThreadInfo> out, std::uintptr_t* gil_holder) const {
  if (!threads_ready()) return 0;
  const Layout& l = *m_layout;
  const CheckedMemory memory;
  if (gil_holder != nullptr) {
    *gil_holder = 0;
    std::uintptr_t gil = m_gil;
    int locked = 0;
    std::uintptr_t holder = 0;
    if (gil != 0 && memory.load(gil + l.gil_locked, &locked, sizeof locked) &&
        load_word(memory, gil + l.gil_last_holder, holder) && locked != 0)
      *gil_holder = holder;
  }
  std::uintptr_t tstate = 0;
  if (!load_word(memory, m_interp + l.interp_threads_head, tstate)) return -1;
  std::size_t n = 0;
  for (std::size_t hops = 0; tstate != 0 && n < out.size(); ++hops) {
    PyThreadInfo& t = out[n++];
    if (hops == kMaxFrameHops || !read_thread_state(memory, l, tstate, t)) return -1;
    std::memcpy(&tstate, t.head + l.tstate_next, sizeof tstate);
  }
  return static_cast<int>(n);
}

bool PyFrameWalker::reread_thread(PyThreadInfo& thread) const {
  PyThreadInfo fresh;
  if (!threads_ready() || !read_thread_state(CheckedMemory{}, *m_layout, thread.tstate, fresh) ||
      fresh.tid != thread.tid)
    return false;
  thread = fresh;
  return true;
}

bool PyFrameWalker::fingerprint(std::uintptr_t code, PyCodeFingerprint& out) const {
  if (m_layout == nullptr) return false;
  const CheckedMemory memory;
  out.code = code;
  return load_word(memory, code + m_layout->code_filename, out.filename) &&
         load_word(memory, code + m_layout->code_qualname, out.qualname) &&
         memory.load(code + m_layout->code_first_line, &out.first_line, sizeof out.first_line);
}

}  // namespace gpuscope::collect::detail
