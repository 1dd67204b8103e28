// Internal to the CPython frame walker (python_frames.cpp, python_frames_gil.cpp): the
// interpreter's functions the walker calls (PyFrameWalker::Api) and the reads both halves make
// of the interpreter's memory.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "collect/python_frames.hpp"

namespace gpuscope::collect::detail {
namespace pyframes {

// PyObject_HEAD / PyObject_VAR_HEAD of a build with the GIL: ob_refcnt, ob_type, ob_size.
inline constexpr int kObType = 8;
inline constexpr int kObSize = 16;
// PyFrameObject.f_frame (3.11-3.13: after PyObject_HEAD and f_back).
inline constexpr int kFrameObjectInterpreterFrame = 24;

inline std::uintptr_t word_at(std::uintptr_t address) { return *reinterpret_cast<const std::uintptr_t*>(address); }

// Memory of this process read through process_vm_readv: another thread's frames may be freed
// (a stack chunk unmapped) while they are read, which then fails (EFAULT) instead of crashing.
// A snapshot of one address range (the thread's frame stack, copied in one read) serves the
// reads that fall inside it: the same bytes, read once.
struct CheckedMemory {
  struct Snapshot {
    const unsigned char* bytes = nullptr;
    std::uintptr_t lo = 0;
    std::uintptr_t hi = 0;
  };
  Snapshot snapshots[2];  // the thread state's first bytes, the frame stack
  pid_t pid = getpid();   // once a walk (a forked child has no sampler)

  bool load(std::uintptr_t address, void* out, std::size_t bytes) const {
    if (address == 0) return false;
    for (const Snapshot& s : snapshots) {
      // Without `address + bytes`, which a torn read's garbage address can wrap past zero.
      if (address >= s.lo && address < s.hi && bytes <= s.hi - address) {
        std::memcpy(out, s.bytes + (address - s.lo), bytes);
        return true;
      }
    }
    iovec local{out, bytes};
    iovec remote{reinterpret_cast<void*>(address), bytes};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(bytes);
  }
  // n reads in one system call per kIovBatch; false if any failed.
  bool load_each(const std::uintptr_t* addresses, std::size_t n, std::size_t bytes, void* out) const {
    constexpr std::size_t kIovBatch = 512;  // below IOV_MAX (1024)
    iovec local[kIovBatch];
    iovec remote[kIovBatch];
    auto* dst = static_cast<unsigned char*>(out);
    for (std::size_t done = 0; done < n;) {
      const std::size_t k = std::min(kIovBatch, n - done);
      for (std::size_t i = 0; i < k; ++i) {
        if (addresses[done + i] == 0) return false;
        local[i] = {dst + (done + i) * bytes, bytes};
        remote[i] = {reinterpret_cast<void*>(addresses[done + i]), bytes};
      }
      if (process_vm_readv(pid, local, k, remote, k, 0) != static_cast<ssize_t>(k * bytes)) return false;
      done += k;
    }
    return true;
  }
};

template <typename Memory>
bool load_word(const Memory& memory, std::uintptr_t address, std::uintptr_t& out) {
  return memory.load(address, &out, sizeof out);
}

}  // namespace pyframes

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
  std::uintptr_t runtime = 0;  // _PyRuntime (3.11 keeps the GIL there)

  bool complete() const {
    return is_initialized && get_version && this_thread_state && gil_check && gil_ensure && gil_release &&
           frame_get_code && frame_get_line && code_addr2line && get_attr && unicode_as_utf8 && long_as_long &&
           err_clear && inc_ref && dec_ref && is_finalizing && interpreter_main && thread_head && thread_next &&
           thread_get_frame && code_type != 0;
  }
};

}  // namespace gpuscope::collect::detail
