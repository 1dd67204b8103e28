// CUDA-core arithmetic kernels of `gpuscope peak` (see kernels.hpp for the contracts).
//
// Every kernel runs `Op::kChains` independent dependency chains per thread, each advanced
// `Op::kUnroll` times per loop iteration with the loop body fully unrolled, so the loop
// costs 2–3 instructions (counter, compare, branch) per kChains × kUnroll arithmetic
// instructions. Checked in the compiled code (docs/metrics.md, "Checked in the compiled
// kernels"): the PTX holds kChains × kUnroll fma/mad/ex2 per loop body, ptxas gives every
// kernel a register per chain (vector datapath) and a .text of about that many instructions.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gpuscope/bench.hpp"
#include "peak/kernels.hpp"

namespace gpuscope::peak::detail {
namespace {

constexpr int kBlock = 256;

struct Fp64Fma {
  using T = double;
  static constexpr int kChains = 8, kUnroll = 32;
  static constexpr double kOps = 2;
  static T a() { return -1.0; }
  static T b() { return 3.0; }
  __device__ static T init(int c, int) { return c + 1.0; }
  __device__ static T step(T x, T a, T b) { return fma(x, a, b); }
  __device__ static float value(T x) { return static_cast<float>(x); }
};

struct Fp32Fma {
  using T = float;
  static constexpr int kChains = 16, kUnroll = 32;
  static constexpr double kOps = 2;
  static T a() { return -1.0f; }
  static T b() { return 3.0f; }
  __device__ static T init(int c, int) { return c + 1.0f; }
  __device__ static T step(T x, T a, T b) { return fmaf(x, a, b); }
  __device__ static float value(T x) { return x; }
};

// half2 / bf162: the two lanes start at c + 1 and c + 2 (exact in both formats).
struct Fp16Fma {
  using T = __half2;
  static constexpr int kChains = 16, kUnroll = 32;
  static constexpr double kOps = 4;
  static T a() { return __floats2half2_rn(-1.0f, -1.0f); }
  static T b() { return __floats2half2_rn(3.0f, 3.0f); }
  __device__ static T init(int c, int) { return __floats2half2_rn(c + 1.0f, c + 2.0f); }
  __device__ static T step(T x, T a, T b) { return __hfma2(x, a, b); }
  __device__ static float value(T x) { return __low2float(x) + __high2float(x); }
};

struct Bf16Fma {
  using T = __nv_bfloat162;
  static constexpr int kChains = 16, kUnroll = 32;
  static constexpr double kOps = 4;
  static T a() { return __floats2bfloat162_rn(-1.0f, -1.0f); }
  static T b() { return __floats2bfloat162_rn(3.0f, 3.0f); }
  __device__ static T init(int c, int) { return __floats2bfloat162_rn(c + 1.0f, c + 2.0f); }
  __device__ static T step(T x, T a, T b) { return __hfma2(x, a, b); }
  __device__ static float value(T x) { return __low2float(x) + __high2float(x); }
};

// Integer multiply-add through PTX mad.lo.s32: the compiler may not reassociate an
// inline-asm chain (with plain C++ it could fold x·a·a + ... into fewer multiplies).
struct Int32Imad {
  using T = int;
  static constexpr int kChains = 16, kUnroll = 32;
  static constexpr double kOps = 2;
  static T a() { return -1; }
  static T b() { return 3; }
  // `lane_zero` (threadIdx.x × a run-time 0) makes every chain per-thread data: with
  // warp-uniform starts and operands ptxas moved the integer chains to the uniform
  // datapath (12 registers for 16 chains), which is not the IMAD rate of the SM.
  __device__ static T init(int c, int lane_zero) { return c + 1 + lane_zero; }
  __device__ static T step(T x, T a, T b) {
    int r;
    asm("mad.lo.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(a), "r"(b));
    return r;
  }
  __device__ static float value(T x) { return static_cast<float>(x); }
};

// x = __expf(-x): one FMUL (by -log2 e) and one MUFU.EX2 per call; the chain converges
// to the omega constant (x = e^-x, 0.5671432904...) from any start in (0, 1].
struct SfuExp {
  using T = float;
  static constexpr int kChains = 8, kUnroll = 16;
  static constexpr double kOps = 1;
  static T a() { return 0.0f; }
  static T b() { return 0.0f; }
  __device__ static T init(int c, int) { return 0.1f * static_cast<float>(c + 1); }
  __device__ static T step(T x, T, T) { return __expf(-x); }
  __device__ static float value(T x) { return x; }
};

template <class Op>
__global__ void __launch_bounds__(kBlock)
    core_kernel(int iterations, typename Op::T a, typename Op::T b, int zero, float* __restrict__ out) {
  const int lane_zero = static_cast<int>(threadIdx.x) * zero;
  typename Op::T x[Op::kChains];
#pragma unroll
  for (int c = 0; c < Op::kChains; ++c) x[c] = Op::init(c, lane_zero);
#pragma unroll 1
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int j = 0; j < Op::kUnroll; ++j) {
#pragma unroll
      for (int c = 0; c < Op::kChains; ++c) x[c] = Op::step(x[c], a, b);
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int c = 0; c < Op::kChains; ++c) sum += Op::value(x[c]);
  out[static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x] = sum;
}

template <class Op>
CoreKernelShape shape_of() {
  CoreKernelShape s;
  s.chains = Op::kChains;
  s.unroll = Op::kUnroll;
  s.block = kBlock;
  s.ops_per_instruction = Op::kOps;
  GPUSCOPE_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&s.blocks_per_sm, core_kernel<Op>, kBlock, 0));
  return s;
}

template <class Op>
void launch(int iterations, float* out, int grid, cudaStream_t stream) {
  core_kernel<Op><<<grid, kBlock, 0, stream>>>(iterations, Op::a(), Op::b(), /*zero=*/0, out);
}

template <class F>
auto dispatch(CoreOp op, F f) {
  switch (op) {
    case CoreOp::kFp64Fma:
      return f(Fp64Fma{});
    case CoreOp::kFp32Fma:
      return f(Fp32Fma{});
    case CoreOp::kFp16Fma:
      return f(Fp16Fma{});
    case CoreOp::kBf16Fma:
      return f(Bf16Fma{});
    case CoreOp::kInt32Imad:
      return f(Int32Imad{});
    case CoreOp::kSfuExp:
      return f(SfuExp{});
  }
  throw std::invalid_argument("unknown CoreOp");
}

}  // namespace

CoreKernelShape core_kernel_shape(CoreOp op) {
  return dispatch(op, [](auto tag) { return shape_of<decltype(tag)>(); });
}

void launch_core(CoreOp op, int iterations, float* out, int grid, cudaStream_t stream) {
  dispatch(op, [&](auto tag) {
    launch<decltype(tag)>(iterations, out, grid, stream);
    return 0;
  });
  GPUSCOPE_CUDA_CALL(cudaGetLastError());
}

}  // namespace gpuscope::peak::detail
