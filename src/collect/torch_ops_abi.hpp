// The collector's C ABI for gpuscope's PyTorch observer (`gpuscope trace --pytorch=ops,modules`):
// the observer (src/collect/python/gpuscope_torch_ops.cpp, built against the program's own torch)
// opens libgpuscope_inject.so (CUDA_INJECTION64_PATH) and resolves these functions with dlsym;
// tests resolve them from a fake collector of their own. Exported by exports.map.
//
// Each call records one edge of a range on the calling thread, into a ring of that thread's own
// (collect/api_ring.hpp: no lock, no system call, no text copied); the writer thread turns them
// into TorchOpRecords (core/event_log_format.hpp). Names are interned once per distinct text
// (gpuscope_torch_intern: a mutex and a hash lookup), so a call costs two timestamps (the TSC
// where it is invariant, converted on the writer thread: collect/tsc_clock.hpp) and two ring
// writes. Outside capture windows nothing is recorded. No function throws or blocks on the
// writer; a full ring drops the edge and counts it (data_loss torch_op_records_dropped).
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

/// The version of this ABI the observer was written for; gpuscope_torch_attach returns it.
inline constexpr int kGpuscopeTorchAbiVersion = 1;

/// Starts the collector if the CUDA or NVTX injection has not yet (it is loaded at `import
/// torch`, before CUDA starts). Returns kGpuscopeTorchAbiVersion, or 0 when the collector is
/// off (GPUSCOPE_LOG_DIR unset, the log could not be created): record nothing then.
int gpuscope_torch_attach(void) noexcept;

/// The id (> 0) of `text` (`len` bytes of UTF-8), the same for the same text for the process's
/// life; 0 when memory runs out. An operator's name, a module range's text, a shapes text.
std::uint32_t gpuscope_torch_intern(const char* text, std::size_t len) noexcept;

/// An operator call starts: name and shapes ids from gpuscope_torch_intern (shapes 0 = none);
/// seq = RecordFunction::seqNr() (-1 = none); op_id = the call's id, unique in the process
/// (gpuscope's observer: the thread's number << 40 + the thread's count of calls).
void gpuscope_torch_op_begin(std::uint32_t name_id, std::int64_t seq, std::uint64_t op_id,
                             std::uint32_t shapes_id) noexcept;

/// An nn.Module call starts; name_id is the id of its "nn.Module: PATH (CLASS)" text.
void gpuscope_torch_module_begin(std::uint32_t name_id) noexcept;

/// The innermost range this thread began ends.
void gpuscope_torch_end(void) noexcept;

/// What recording costs the program per operator call and per module call (ns; NaN = not
/// measured), measured by the observer; `method` says how (one line). Stored in the trace's
/// meta table (tracer_torch_op_cost_ns, tracer_torch_module_cost_ns, tracer_torch_cost_method).
void gpuscope_torch_cost(double op_ns, double module_ns, const char* method) noexcept;
}
