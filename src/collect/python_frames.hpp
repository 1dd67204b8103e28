// The CPython frame walker of the collector: the calling thread's Python stack, read
// without taking the GIL, for CPython 3.11, 3.12 and 3.13 (non-free-threaded builds).
//
// How: the interpreter's own symbols are looked up in the process with
// dlsym(RTLD_DEFAULT) (so the library links no libpython and stays inert in programs with
// no Python); the thread's PyThreadState comes from PyGILState_GetThisThreadState (a
// thread-local read, no lock); its current _PyInterpreterFrame chain is followed through
// the per-version offsets of PyThreadState, _PyCFrame and _PyInterpreterFrame (CPython's
// Include/internal/pycore_frame.h and Include/cpython/pystate.h of each minor version).
// Frames owned by the C stack (3.12+ entry shims), frames whose executable is not a code
// object (3.13) and frames not yet started are skipped.
//
// The layout is trusted only after it was checked against a live frame by a thread that
// holds the GIL (verify_with_live_frame): for the first thread with a Python frame, the
// walker's innermost frame must be the one PyThreadState_GetFrame reports, with the same code
// object (PyFrame_GetCode) and the same line (PyFrame_GetLineNumber; on 3.12+ also
// PyUnstable_InterpreterFrame_GetCode/GetLine).
// An unknown version, a free-threaded build or a failed check leave a note and no stacks.
//
// A frame is recorded raw, as (code object address, instruction byte offset); file, line
// and function come later from resolve(), which calls the interpreter and needs the GIL.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace gpuscope::collect::detail {

// One Python frame as the walker saw it: the code object's address and the byte offset of
// the instruction the frame is at (prev_instr / instr_ptr minus the code's first unit).
struct PyRawFrame {
  std::uintptr_t code = 0;
  std::uint32_t instr_offset = 0;
  friend bool operator==(const PyRawFrame&, const PyRawFrame&) = default;
};

// A resolved frame: file (co_filename), first line of the function, line of the
// instruction (PyCode_Addr2Line; -1 when the code has no line for it), function
// (co_qualname).
struct PyFrameInfo {
  std::string file;
  std::string function;
  std::int32_t line = -1;
  std::int32_t first_line = -1;
};

enum class PyWalkerState : std::uint8_t {
  no_python,    // no CPython in this process: nothing is done, no note
  unsupported,  // a CPython this walker does not know (version, free-threaded build): note()
  unverified,   // layout known, not yet checked against a live frame
  ready,        // checked: walk() returns stacks
  failed,       // the check disagreed: note(), no stacks
};

// Why a walk stopped early (a torn stack when another thread's frames changed under it).
enum class PyWalkEnd : std::uint8_t { complete, truncated, torn };

struct PyWalkResult {
  std::size_t frames = 0;
  PyWalkEnd end = PyWalkEnd::complete;
};

class PyFrameWalker {
 public:
  // Looks the interpreter up in this process; never throws, never calls into Python.
  PyFrameWalker();

  [[nodiscard]] PyWalkerState state() const { return m_state; }
  // Why there are no stacks (unsupported / failed), empty otherwise.
  [[nodiscard]] const std::string& note() const { return m_note; }
  // CPython's version as PY_VERSION_HEX (0 without Python).
  [[nodiscard]] std::uint64_t version_hex() const { return m_version_hex; }

  // True when the calling thread holds the GIL (PyGILState_Check); false without Python.
  [[nodiscard]] bool this_thread_holds_gil() const;

  // Checks the layout against a live frame when the calling thread holds the GIL and some
  // thread has a Python frame; moves unverified to ready or failed. Returns whether it is
  // ready. Calls PyThreadState_GetFrame (which may create frame objects): not on a hot path.
  bool verify_with_live_frame();

  // The calling thread's Python frames, innermost first, into out (at most out.size()).
  // No GIL, no lock, no allocation, no system call: plain reads of the thread's own frames
  // (which cannot change while it runs this). 0 frames unless ready, or off a Python thread.
  [[nodiscard]] PyWalkResult walk_this_thread(std::span<PyRawFrame> out) const;

  // Another thread's frames, innermost first (the sampler's; python_sampler.hpp): the same walk
  // read through process_vm_readv on this process, so frames freed or changed under the read
  // give a torn result (a failed read, an impossible owner, a chain too long), never a crash.
  // A torn walk's frames are not to be used. 0 frames unless ready.
  struct PyThreadInfo;
  [[nodiscard]] PyWalkResult walk_other_thread(const PyThreadInfo& thread, std::span<PyRawFrame> out) const;

  // A Python thread of the interpreter: its PyThreadState, OS thread id (native_thread_id) and
  // the state's first kThreadStateBytes as list_threads read them (every field the walk needs
  // of it: one read a thread).
  static constexpr std::size_t kThreadStateBytes = 320;
  struct PyThreadInfo {
    std::uintptr_t tstate = 0;
    std::uint32_t tid = 0;
    unsigned char head[kThreadStateBytes] = {};
  };
  // The main interpreter's threads (at most out.size()), read without the GIL through
  // process_vm_readv, and the PyThreadState holding the GIL in *gil_holder (0: not held).
  // Returns the count, or -1 when the list changed under the read (torn). 0 unless threads_ready().
  [[nodiscard]] int list_threads(std::span<PyThreadInfo> out, std::uintptr_t* gil_holder) const;
  // Reads a listed thread's state again (after a torn walk: its frames moved on since
  // list_threads): false when the read fails or the state now belongs to another thread.
  [[nodiscard]] bool reread_thread(PyThreadInfo& thread) const;

  // With the GIL, after verify_with_live_frame: checks the sampler's offsets (thread list,
  // native thread id, the GIL's holder, a code object's file, name and first line) against the
  // interpreter's own answers. Returns whether they hold (threads_ready()); a mismatch leaves
  // threads_note() and no samples for good.
  bool verify_threads();
  [[nodiscard]] bool threads_ready() const { return m_threads_ready.load(std::memory_order_acquire); }
  [[nodiscard]] bool threads_failed() const { return m_threads_failed.load(std::memory_order_acquire); }
  [[nodiscard]] const std::string& threads_note() const { return m_threads_note; }

  // What identifies a code object seen without the GIL: its file and qualified-name objects and
  // first line, read through process_vm_readv. The code may die before the GIL is taken and its
  // address be reused: keep_alive_if_same checks the identity first.
  struct PyCodeFingerprint {
    std::uintptr_t code = 0;
    std::uintptr_t filename = 0;
    std::uintptr_t qualname = 0;
    std::int32_t first_line = 0;
  };
  [[nodiscard]] bool fingerprint(std::uintptr_t code, PyCodeFingerprint& out) const;
  // With the GIL (no object is freed meanwhile): keeps the code alive (one reference) when the
  // address still holds a live code object (ob_type PyCode_Type, a count below 2^32: a freed
  // block's first words hold the allocator's links) with the fingerprint's file, name and first
  // line; false otherwise (its frames are then never resolved).
  [[nodiscard]] bool keep_alive_if_same(const PyCodeFingerprint& f) const;

  // File, line and function of a frame. The caller holds the GIL and keeps the code object
  // alive (keep_alive). false when the object is not a code object any more.
  [[nodiscard]] bool resolve(const PyRawFrame& frame, PyFrameInfo& out) const;

  // Py_IncRef / Py_DecRef of a code object; the caller holds the GIL.
  void keep_alive(std::uintptr_t code) const;
  void release(std::uintptr_t code) const;

  // Takes the GIL from a thread that may not hold it (PyGILState_Ensure) when the
  // interpreter is running and not finalizing; returns false (and takes nothing) otherwise.
  [[nodiscard]] bool acquire_gil(int& token) const;
  // Whether the calling thread holds the GIL (PyGILState_Check); false without an interpreter.
  [[nodiscard]] bool holds_gil() const;
  void release_gil(int token) const;

  struct Layout {
    int tstate_cframe = -1;  // PyThreadState.cframe (3.11, 3.12); -1: frame is in tstate
    int cframe_current = 0;  // _PyCFrame.current_frame, or PyThreadState.current_frame (3.13)
    int frame_code = 0;      // _PyInterpreterFrame.f_code / f_executable
    int frame_previous = 0;  // _PyInterpreterFrame.previous
    int frame_instr = 0;     // prev_instr (3.11, 3.12) / instr_ptr (3.13)
    int frame_owner = 0;     // _PyInterpreterFrame.owner (char)
    int code_units = 0;      // PyCodeObject.co_code_adaptive
    int owner_cstack = -1;   // FRAME_OWNED_BY_CSTACK (3.12+), -1: none
    // The sampler's (list_threads, fingerprint):
    int tstate_next = 0;          // PyThreadState.next
    int tstate_native_tid = 0;    // PyThreadState.native_thread_id
    int interp_threads_head = 0;  // PyInterpreterState.threads.head
    int runtime_gil = -1;         // _PyRuntime.ceval.gil (3.11: the GIL's state itself), -1: none
    int interp_gil = -1;          // PyInterpreterState.ceval.gil (3.12+: a pointer), -1: none
    int gil_last_holder = 0;      // _gil_runtime_state.last_holder
    int gil_locked = 0;           // _gil_runtime_state.locked (int)
    int code_filename = 0;        // PyCodeObject.co_filename
    int code_qualname = 0;        // PyCodeObject.co_qualname
    int code_first_line = 0;      // PyCodeObject.co_firstlineno (int)
    int tstate_datastack = 0;     // PyThreadState.datastack_chunk (datastack_top follows)
  };
  // The layout for a PY_VERSION_HEX, or nullptr for a version this walker does not know.
  [[nodiscard]] static const Layout* layout_for(std::uint64_t version_hex);

 private:
  [[nodiscard]] PyWalkResult walk(std::uintptr_t tstate, std::span<PyRawFrame> out) const;
  template <typename Memory>
  [[nodiscard]] PyWalkResult walk_with(const Memory& memory, std::uintptr_t tstate, std::span<PyRawFrame> out) const;
  [[nodiscard]] bool agrees_with(std::uintptr_t tstate, void* frame_object) const;

  struct Api;
  const Api* m_api = nullptr;
  const Layout* m_layout = nullptr;
  std::uint64_t m_version_hex = 0;
  PyWalkerState m_state = PyWalkerState::no_python;
  std::string m_note;
  std::uintptr_t m_interp = 0;               // the main interpreter (verify_threads)
  std::uintptr_t m_gil = 0;                  // its _gil_runtime_state
  std::atomic<bool> m_threads_ready{false};  // set by the resolver, read by the sampler
  std::atomic<bool> m_threads_failed{false};
  std::string m_threads_note;
};

}  // namespace gpuscope::collect::detail
