#include "collect/pass_replay.hpp"

#include <cupti_checkpoint.h>
#include <dlfcn.h>

#include <algorithm>
#include <string>

namespace gpuscope::collect::detail {
namespace {

using NV::Cupti::Checkpoint::CUpti_Checkpoint;
using Checkpoint = CUpti_Checkpoint;

// The L2 flush kernel: thread i of the grid reads one 32-bit word of every 32-byte sector
// i, i + stride, ... of the buffer through L2 only (ld.global.cg) and XORs them; it stores the
// result only if it equals a value the zeroed buffer cannot give, so the loads cannot be
// removed. Generic PTX (sm_50, ISA 7.0): the driver JIT-compiles it for the device.
constexpr const char* kFlushPtx = R"(.version 7.0
.target sm_50
.address_size 64
.visible .entry gpuscope_l2_flush(.param .u64 p_buf, .param .u64 p_sectors, .param .u64 p_sink)
{
  .reg .pred %p<3>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [p_buf];
  ld.param.u64 %rd2, [p_sectors];
  ld.param.u64 %rd3, [p_sink];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd3, %rd3;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mad.lo.u32 %r5, %r1, %r2, %r3;
  cvt.u64.u32 %rd4, %r5;
  mul.wide.u32 %rd5, %r4, %r2;
  mov.u32 %r6, 0;
LOOP:
  setp.ge.u64 %p1, %rd4, %rd2;
  @%p1 bra DONE;
  shl.b64 %rd6, %rd4, 5;
  add.s64 %rd7, %rd1, %rd6;
  ld.global.cg.u32 %r7, [%rd7];
  xor.b32 %r6, %r6, %r7;
  add.s64 %rd4, %rd4, %rd5;
  bra LOOP;
DONE:
  setp.ne.u32 %p2, %r6, -1640531527;
  @%p2 bra END;
  st.global.u32 [%rd3], %r6;
END:
  ret;
}
)";

std::string cu_error(CUresult r) {
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  return name != nullptr ? name : "CUDA error " + std::to_string(static_cast<int>(r));
}

void cu_must(CUresult r, const char* call) {
  if (r != CUDA_SUCCESS) throw PassReplayError(std::string(call) + " failed: " + cu_error(r));
}

// libcheckpoint.so's three functions (extern "C" in cupti_checkpoint.h), loaded once.
struct CheckpointApi {
  using Fn = CUptiResult (*)(Checkpoint*);
  Fn save = nullptr, restore = nullptr, free = nullptr;
  std::string error;

  CheckpointApi() {
    void* lib = ::dlopen("libcheckpoint.so", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      // Beside libcupti (the CUDA library folder), whatever the loader's search path.
      Dl_info info{};
      if (::dladdr(reinterpret_cast<void*>(&cuptiGetVersion), &info) != 0 && info.dli_fname != nullptr) {
        std::string dir = info.dli_fname;
        dir.erase(dir.find_last_of('/') + 1);
        lib = ::dlopen((dir + "libcheckpoint.so").c_str(), RTLD_NOW | RTLD_LOCAL);
      }
    }
    if (lib == nullptr) {
      const char* why = ::dlerror();
      error = std::string("libcheckpoint.so (CUPTI's checkpoint library) could not be loaded: ") +
              (why != nullptr ? why : "not found");
      return;
    }
    save = reinterpret_cast<Fn>(::dlsym(lib, "cuptiCheckpointSave"));
    restore = reinterpret_cast<Fn>(::dlsym(lib, "cuptiCheckpointRestore"));
    free = reinterpret_cast<Fn>(::dlsym(lib, "cuptiCheckpointFree"));
    if (save == nullptr || restore == nullptr || free == nullptr) error = "libcheckpoint.so lacks cuptiCheckpoint*";
  }
};

const CheckpointApi& checkpoint_api() {
  static const CheckpointApi api;
  return api;
}

void cupti_must(CUptiResult r, const char* call) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  throw PassReplayError(std::string(call) + " failed: " + (text != nullptr ? text : std::to_string(r)));
}

bool is_ptsz(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz;
}

// The fields cuLaunchKernel and cuLaunchCooperativeKernel share.
template <class Params>
void copy_launch(const Params& p, DriverLaunch::Kind kind, DriverLaunch& l) {
  l.kind = kind;
  l.f = p.f;
  l.grid[0] = p.gridDimX, l.grid[1] = p.gridDimY, l.grid[2] = p.gridDimZ;
  l.block[0] = p.blockDimX, l.block[1] = p.blockDimY, l.block[2] = p.blockDimZ;
  l.shared_bytes = p.sharedMemBytes;
  l.stream = p.hStream;
  l.params = p.kernelParams;
}

}  // namespace

DriverLaunch DriverLaunch::from_driver_callback(CUpti_CallbackId cbid, const void* function_params) {
  DriverLaunch l;
  if (function_params == nullptr) return l;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
      const auto* p = static_cast<const cuLaunchKernel_params*>(function_params);
      copy_launch(*p, Kind::kLaunch, l);
      l.extra = p->extra;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      copy_launch(*static_cast<const cuLaunchCooperativeKernel_params*>(function_params), Kind::kCooperative, l);
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const auto* p = static_cast<const cuLaunchKernelEx_params*>(function_params);
      if (p->config == nullptr) return l;
      l.kind = Kind::kEx;
      l.f = p->f;
      l.config = *p->config;
      l.stream = p->config->hStream;
      l.params = p->kernelParams;
      l.extra = p->extra;
      break;
    }
    default:
      return l;
  }
  if (is_ptsz(cbid) && l.stream == nullptr) {
    l.stream = CU_STREAM_PER_THREAD;
    l.config.hStream = CU_STREAM_PER_THREAD;
  }
  return l;
}

void DriverLaunch::launch() const {
  switch (kind) {
    case Kind::kLaunch:
      cu_must(cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes, stream, params,
                             extra),
              "cuLaunchKernel (replay)");
      return;
    case Kind::kCooperative:
      cu_must(cuLaunchCooperativeKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes,
                                        stream, params),
              "cuLaunchCooperativeKernel (replay)");
      return;
    case Kind::kEx:
      cu_must(cuLaunchKernelEx(&config, f, params, extra), "cuLaunchKernelEx (replay)");
      return;
    case Kind::kNone:
      break;
  }
  throw PassReplayError("the launch's driver parameters were not seen, so it cannot be launched again");
}

PassReplay::PassReplay(CUcontext ctx) : m_ctx(ctx) {
  CUdevice dev = 0;
  cu_must(cuCtxGetDevice(&dev), "cuCtxGetDevice");
  int l2 = 0, sms = 0;
  cu_must(cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev), "cuDeviceGetAttribute(L2 size)");
  cu_must(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "cuDeviceGetAttribute(SMs)");
  // 3 x L2 (at least 16 MiB): enough reads to replace every line whatever the replacement policy.
  m_scratch_bytes = std::max<std::uint64_t>(3ULL * static_cast<std::uint64_t>(std::max(l2, 0)), 16ULL << 20);
  m_blocks = static_cast<unsigned>(std::max(sms, 1)) * 8;
  cu_must(cuModuleLoadData(&m_module, kFlushPtx), "cuModuleLoadData (L2 flush kernel)");
  cu_must(cuModuleGetFunction(&m_flush, m_module, "gpuscope_l2_flush"), "cuModuleGetFunction (L2 flush kernel)");
  cu_must(cuMemAlloc(&m_scratch, m_scratch_bytes), "cuMemAlloc (L2 flush buffer)");
  cu_must(cuMemAlloc(&m_sink, 64), "cuMemAlloc (L2 flush result)");
  cu_must(cuMemsetD8(m_scratch, 0, m_scratch_bytes), "cuMemsetD8 (L2 flush buffer)");
  cu_must(cuCtxSynchronize(), "cuCtxSynchronize");
}

PassReplay::~PassReplay() {
  release();
  if (m_scratch != 0) cuMemFree(m_scratch);
  if (m_sink != 0) cuMemFree(m_sink);
  if (m_module != nullptr) cuModuleUnload(m_module);
  delete static_cast<Checkpoint*>(m_checkpoint);
}

void PassReplay::flush_l2() {
  unsigned long long sectors = m_scratch_bytes / 32;
  void* args[] = {&m_scratch, &sectors, &m_sink};
  cu_must(cuLaunchKernel(m_flush, m_blocks, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr), "cuLaunchKernel (L2 flush)");
  cu_must(cuCtxSynchronize(), "cuCtxSynchronize (after the L2 flush)");
}

void PassReplay::run(const DriverLaunch& launch) {
  launch.launch();
  cu_must(cuCtxSynchronize(), "cuCtxSynchronize (after a replayed launch)");
}

void PassReplay::save() {
  const CheckpointApi& api = checkpoint_api();
  if (!api.error.empty()) throw PassReplayError(api.error);
  cu_must(cuCtxSynchronize(), "cuCtxSynchronize (before the checkpoint)");
  if (m_checkpoint == nullptr) {
    auto* cp = new Checkpoint{};
    cp->structSize = CUpti_Checkpoint_STRUCT_SIZE;
    cp->ctx = m_ctx;
    cp->reserveDeviceMB = 1024;  // leave the program room to allocate while a copy is held
    cp->reserveHostMB = 0;
    cp->allowOverwrite = 1;
    cp->optimizations = NV::Cupti::Checkpoint::CUPTI_CHECKPOINT_OPT_NONE;
    m_checkpoint = cp;
  }
  cupti_must(api.save(static_cast<Checkpoint*>(m_checkpoint)), "cuptiCheckpointSave");
  m_saved = true;
}

void PassReplay::restore() {
  if (!m_saved) throw PassReplayError("cuptiCheckpointRestore: no checkpoint saved");
  cupti_must(checkpoint_api().restore(static_cast<Checkpoint*>(m_checkpoint)), "cuptiCheckpointRestore");
  cu_must(cuCtxSynchronize(), "cuCtxSynchronize (after the restore)");
}

void PassReplay::release() noexcept {
  if (!m_saved) return;
  m_saved = false;
  auto* cp = static_cast<Checkpoint*>(m_checkpoint);
  checkpoint_api().free(cp);
  cp->pPriv = nullptr;  // the next save() starts a new checkpoint in the same handle
}

}  // namespace gpuscope::collect::detail
