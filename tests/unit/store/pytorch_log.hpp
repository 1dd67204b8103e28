// A hand-built event log of what `gpuscope trace --pytorch=ops,modules` records, shared by
// the store test of the PyTorch tables and the analyze tests of the PyTorch reports.
// Times in µs (x1000 ns). Step 0: a model's forward (modules Net > conv1, fc; operators
// aten::conv2d > aten::convolution with seq 5, aten::linear with seq 6) at 10..60 µs on the
// main thread, its backward on the autograd thread at 70..110 µs as PyTorch records it (the
// engine's range, no seq, around the node's range with the forward op's seq, around the
// node's operators), a user range "step 0", optimizer.step() marks at 120 and 300 µs.
// Step 1: the same forward at 200..250 µs. Kernels: conv_fwd_kernel 20 µs and gemm_fwd 5 µs
// per forward, gemm_bwd 7 µs (aten::mm in AddmmBackward0), conv_bwd_kernel 30 µs
// (ConvolutionBackward0).
#pragma once

#include <cstdint>
#include <string>

#include "log_builder.hpp"

namespace gpuscope::store::test {

inline constexpr std::uint32_t kTorchPid = 77, kTorchMain = 77, kTorchAutograd = 78;

inline void write_pytorch_log(const std::string& log) {
  constexpr std::uint32_t kPid = kTorchPid, kMain = kTorchMain, kAutograd = kTorchAutograd;
  LogBuilder b(log, kPid);
  b.process(0);
  std::uint32_t corr = 1;
  auto launch = [&](std::uint64_t at_us, std::uint32_t tid, const char* kernel, std::uint64_t gpu_us) {
    b.api(at_us * 1000, at_us * 1000 + 500, tid, corr, "cudaLaunchKernel");
    b.kernel(at_us * 1000 + 2000, (at_us + gpu_us) * 1000 + 2000, corr, kernel);
    ++corr;
  };
  for (std::uint64_t base : {0ull, 190ull}) {
    b.push((base + 10) * 1000, kMain, "nn.Module: Net (Net)");
    b.push((base + 12) * 1000, kMain, "nn.Module: conv1 (Conv2d)");
    b.push((base + 13) * 1000, kMain, "aten::conv2d, seq = 5, op_id = 1");
    b.push((base + 14) * 1000, kMain, "aten::convolution, seq = 5, op_id = 2");
    launch(base + 15, kMain, "conv_fwd_kernel", 20);
    b.pop((base + 30) * 1000, kMain);
    b.pop((base + 31) * 1000, kMain);
    b.pop((base + 32) * 1000, kMain);
    b.push((base + 40) * 1000, kMain, "nn.Module: fc (Linear)");
    b.push((base + 41) * 1000, kMain, "aten::linear, seq = 6, op_id = 3");
    launch(base + 42, kMain, "gemm_fwd", 5);
    b.pop((base + 50) * 1000, kMain);
    b.pop((base + 51) * 1000, kMain);
    b.pop((base + 60) * 1000, kMain);
  }
  // Backward of step 0 on the autograd thread, as PyTorch records it: the engine's range
  // (no seq) around the node's (the forward op's seq) around the node's operators.
  b.push(70'000, kAutograd, "autograd::engine::evaluate_function: AddmmBackward0, op_id = 10");
  b.push(70'500, kAutograd, "AddmmBackward0, seq = 6, op_id = 11");
  b.push(71'000, kAutograd, "aten::mm, op_id = 12");
  launch(72, kAutograd, "gemm_bwd", 7);
  b.pop(80'000, kAutograd);
  b.pop(80'500, kAutograd);
  b.pop(81'000, kAutograd);
  b.push(90'000, kAutograd, "autograd::engine::evaluate_function: ConvolutionBackward0, op_id = 13");
  b.push(90'500, kAutograd, "ConvolutionBackward0, seq = 5, op_id = 14");
  launch(91, kAutograd, "conv_bwd_kernel", 30);
  b.pop(109'000, kAutograd);
  b.pop(110'000, kAutograd);
  b.push(112'000, kMain, "step 0");  // a user range: not an operator
  b.pop(118'000, kMain);
  b.nvtx(log::NvtxEventType::kMark, 120'000, kMain, "gpuscope.step");
  b.nvtx(log::NvtxEventType::kMark, 300'000, kMain, "gpuscope.step");
  b.end(400'000);
}

}  // namespace gpuscope::store::test
