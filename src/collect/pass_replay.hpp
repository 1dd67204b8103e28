// pass_replay (internal): gpuscope's own replay of one profiled kernel launch, for the Range
// Profiler's user replay (CUPTI_UserReplay), so that every counter pass of a launch starts
// from the same device memory and the same (empty) L2 cache: `gpuscope kernels
// --cache-control all`, as Nsight Compute's default `--cache-control all`.
//
// Why: with CUPTI's kernel replay the passes after the first one start from CUPTI's restore of
// device memory, whose writes sit dirty in L2 and are written back while the next pass runs;
// metrics of different passes then describe different cache states (an L2 hit rate above
// 100 %, DRAM writes of 5.6 MB for a kernel that writes 0.5 KB: docs/validation.md).
//
// Per pass: restore the checkpoint (cupti_checkpoint.h: cuptiCheckpointSave before the first
// pass, cuptiCheckpointRestore before each later one; libcheckpoint.so, loaded at run time
// from the CUDA library folder), flush L2, run the kernel, synchronize.
//
// The L2 flush reads a scratch buffer of 3 x the device's L2 size (CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
// one 4-byte load per 32-byte sector (ld.global.cg: L2 only), with a small PTX kernel that the
// driver JIT-compiles once per context: every line the restore left dirty is evicted (and
// written back) during the flush, and the profiled kernel starts with nothing of its own data
// in L2. L1 needs no flush: it does not keep global data across kernel launches.
//
// What it costs (H100, 2026-11-27, docs/validation.md): the passes run in CUPTI's user replay
// with auto range, whose in-kernel range triggers add about 8 instructions per warp and one
// global store per kernel, and which leaves SASS-patched metrics (smsp__sass_*) at 0; so it
// is the choice for memory-hierarchy counters of multi-pass sets, not for instruction counts.
//
// Errors: every failing driver or checkpoint call throws PassReplayError naming the call; the
// caller turns profiling off for the process and says to use --cache-control none.
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpuscope::collect::detail {

/// A driver call that failed while replaying (what() names the call and its error).
struct PassReplayError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One kernel launch as the driver received it, to launch it again with the same grid, block,
/// shared memory, stream and parameters. The parameter pointers are the caller's: valid only
/// inside the launch call (its API callbacks, enter to exit).
struct DriverLaunch {
  enum class Kind : std::uint8_t { kNone, kLaunch, kCooperative, kEx };
  Kind kind = Kind::kNone;
  CUfunction f = nullptr;
  unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  unsigned shared_bytes = 0;
  CUstream stream = nullptr;
  void** params = nullptr;
  void** extra = nullptr;
  CUlaunchConfig config{};  // kEx: the caller's configuration (its attributes pointer included)

  /// The launch of a driver callback (cuLaunchKernel, cuLaunchCooperativeKernel, cuLaunchKernelEx
  /// and their _ptsz forms); Kind::kNone for any other call. A _ptsz launch on stream 0 keeps
  /// its meaning (the per-thread default stream).
  [[nodiscard]] static DriverLaunch from_driver_callback(CUpti_CallbackId cbid, const void* function_params);
  /// Launches it again (throws PassReplayError on a driver error; kNone throws too).
  void launch() const;
};

/// Per CUDA context: the L2 flush kernel, its scratch buffer and the checkpoint.
class PassReplay {
 public:
  /// Loads the flush kernel into `ctx` (current on the calling thread) and allocates its buffer.
  explicit PassReplay(CUcontext ctx);
  ~PassReplay();
  PassReplay(const PassReplay&) = delete;
  PassReplay& operator=(const PassReplay&) = delete;

  /// Runs the flush kernel on the legacy default stream and synchronizes the context.
  void flush_l2();
  /// Saves the context's device memory (after synchronizing it).
  void save();
  /// Restores what save() kept (synchronizes the context).
  void restore();
  /// Launches `launch` again and synchronizes the context (one replayed pass).
  void run(const DriverLaunch& launch);
  /// Frees the saved copy (device or host memory the checkpoint took).
  void release() noexcept;

  [[nodiscard]] std::uint64_t scratch_bytes() const { return m_scratch_bytes; }

 private:
  CUcontext m_ctx = nullptr;
  CUmodule m_module = nullptr;
  CUfunction m_flush = nullptr;
  CUdeviceptr m_scratch = 0, m_sink = 0;
  std::uint64_t m_scratch_bytes = 0;
  unsigned m_blocks = 0;
  void* m_checkpoint = nullptr;  // CUpti_Checkpoint, from libcheckpoint.so
  bool m_saved = false;
};

}  // namespace gpuscope::collect::detail
