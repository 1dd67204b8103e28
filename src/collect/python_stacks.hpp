// Interning of Python stacks for the trace: a stack is a call site in a prefix tree
// (Perfetto's stack_profile_callsite model: each node is a frame and its caller's node),
// so a stack id names the innermost call site and shared callers are stored once.
//
// frame id: one per distinct (code object, instruction byte offset); resolved later to file,
// line and function (PyFrameWalker::resolve, on the writer thread with the GIL).
// stack id: one per distinct (caller stack id, frame id); 0 = no stack. Both start at 1.
//
// Thread-safe (one mutex): intern() runs on the program's threads at the CUDA calls it is
// asked for; take_new() on the writer thread hands over the stacks added since its last call,
// take_frames_to_resolve() the resolver the frames. intern() names the code objects it meets
// for the first time, so that they can be kept alive until their frames are resolved.
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collect/python_frames.hpp"

namespace gpuscope::collect::detail {

struct PyInternedFrame {
  std::uint32_t id = 0;
  PyRawFrame frame;
};

struct PyInternedStack {
  std::uint32_t id = 0;
  std::uint32_t parent = 0;  // the caller's stack id, 0 for an outermost frame
  std::uint32_t frame = 0;   // frame id
  std::uint32_t depth = 0;   // 0 for an outermost frame
};

struct PyStackAdditions {
  std::vector<PyInternedStack> stacks;
};

class PyStackTable {
 public:
  // The stack id of frames (innermost first, as PyFrameWalker walks them); 0 for none.
  // new_codes (capacity frames.size()) receives the code objects first seen in this call and
  // *n_new_codes their count; *added_frame says whether a frame was new. Both optional.
  [[nodiscard]] std::uint32_t intern(std::span<const PyRawFrame> frames, std::uintptr_t* new_codes = nullptr,
                                     std::size_t* n_new_codes = nullptr, bool* added_frame = nullptr);

  // What intern() added since the last call, in id order (callers before callees).
  void take_new(PyStackAdditions& out);

  // The frames intern() added since this function's last call (for the resolver thread, which
  // resolves them while the interpreter runs; take_new lists them too, for the writer).
  void take_frames_to_resolve(std::vector<PyInternedFrame>& out);

  [[nodiscard]] std::size_t frame_count() const;
  [[nodiscard]] std::size_t stack_count() const;

 private:
  struct FrameKeyHash {
    std::size_t operator()(const PyRawFrame& f) const noexcept {
      return std::hash<std::uintptr_t>{}(f.code) ^ (std::size_t{f.instr_offset} * 0x9e3779b97f4a7c15ULL);
    }
  };
  mutable std::mutex m_mutex;
  std::unordered_map<PyRawFrame, std::uint32_t, FrameKeyHash> m_frames;
  std::unordered_map<std::uint64_t, std::uint32_t> m_stacks;  // (parent << 32 | frame) -> id
  std::unordered_set<std::uintptr_t> m_codes;
  std::vector<std::uint32_t> m_depths;  // by stack id - 1
  PyStackAdditions m_new;
  std::vector<PyInternedFrame> m_to_resolve;
};

}  // namespace gpuscope::collect::detail
