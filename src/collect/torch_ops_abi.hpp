// The collector's interface for gpuscope's PyTorch observer (`gpuscope trace --pytorch=ops,modules`):
// the observer (src/collect/python/gpuscope_torch_ops.cpp, built against the program's own torch)
// opens libgpuscope_inject.so (CUDA_INJECTION64_PATH) and resolves these functions with dlsym;
// tests resolve them from a fake collector of their own. Exported by exports.map. The observer
// compiles this header and spsc_ring.hpp too (sitecustomize.py ships them beside it), so both
// sides share the ring's layout: C++17, no gpuscope include but the ring's (same folder).
//
// Each thread the observer sees asks once for a ring of its own (gpuscope_torch_open_thread)
// and then writes its range edges into it itself: a time-stamp counter read (the TSC where it is
// invariant, converted on the writer thread: collect/tsc_clock.hpp) and a ring write per edge,
// no call into the collector, no lock, no system call, no text copied. The writer thread turns
// the edges into TorchOpRecords (core/event_log_format.hpp). Names are interned once per
// distinct text (gpuscope_torch_intern: a mutex and a hash lookup). Outside capture windows
// nothing is written (the channel's recording flag). A full ring drops the edge and counts it
// (data_loss torch_op_records_dropped); nothing blocks on the writer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "spsc_ring.hpp"

namespace gpuscope::collect {

/// One edge of a PyTorch operator or module range, as the observer writes it.
struct TorchOpEvent {
  std::uint64_t ts = 0;         // read_tsc() ticks when the channel says tsc, else the clock's ns
  std::int64_t seq = -1;        // begin: RecordFunction::seqNr() (-1 = none)
  std::uint64_t op_id = 0;      // begin: the call's id, unique in the process (0 = none)
  std::uint32_t name_id = 0;    // begin: gpuscope_torch_intern's id (op name or module text)
  std::uint32_t shapes_id = 0;  // begin: interned input shapes, 0 = not recorded
  std::uint8_t type = 0;        // TorchEdge (core::log::TorchOpEventType's values)
};

/// TorchOpEvent::type.
enum TorchEdge : std::uint8_t { kTorchOpBegin = 1, kTorchEnd = 2, kTorchModuleBegin = 3 };

using TorchOpRing = Ring<TorchOpEvent>;

}  // namespace gpuscope::collect

/// What a thread writes its edges with (gpuscope_torch_open_thread).
struct GpuscopeTorchChannel {
  gpuscope::collect::TorchOpRing* ring;  // null: record nothing on this thread
  const std::atomic<bool>* recording;    // write an edge only while true (capture windows)
  bool tsc;                              // stamp with the TSC (__rdtsc) else gpuscope_torch_clock()
};

extern "C" {

/// The version of this interface the observer was written for; gpuscope_torch_attach returns it.
inline constexpr int kGpuscopeTorchAbiVersion = 2;

/// Starts the collector if the CUDA or NVTX injection has not yet (it is loaded at `import
/// torch`, before CUDA starts). Returns kGpuscopeTorchAbiVersion, or 0 when the collector is
/// off (GPUSCOPE_LOG_DIR unset, the log could not be created): record nothing then.
int gpuscope_torch_attach(void) noexcept;

/// The id (> 0) of `text` (`len` bytes of UTF-8), the same for the same text for the process's
/// life; 0 when memory runs out. An operator's name, a module range's text, a shapes text.
std::uint32_t gpuscope_torch_intern(const char* text, std::size_t len) noexcept;

/// A ring for the calling thread (the collector drains it; ring null when the collector is off
/// or memory ran out). The thread pushes its edges into it (TorchOpRing::push) and, when a push
/// reports half full, calls gpuscope_torch_wake; at its end it calls gpuscope_torch_close_thread.
GpuscopeTorchChannel gpuscope_torch_open_thread(void) noexcept;

/// The thread that opened `ring` has ended: nothing more is pushed; the writer frees it once drained.
void gpuscope_torch_close_thread(gpuscope::collect::TorchOpRing* ring) noexcept;

/// A push reported its ring half full (or dropping): the writer thread drains now.
void gpuscope_torch_wake(void) noexcept;

/// The trace clock (ns), for edges when the channel's tsc is false.
std::uint64_t gpuscope_torch_clock(void) noexcept;

/// What recording costs the program per operator call and per module call (ns; NaN = not
/// measured), measured by the observer; `method` says how (one line). Stored in the trace's
/// meta table (tracer_torch_op_cost_ns, tracer_torch_module_cost_ns, tracer_torch_cost_method).
void gpuscope_torch_cost(double op_ns, double module_ns, const char* method) noexcept;
}
