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
// TorchRoute::kObserver writes the same calls as gpuscope's own observer records them
// (TorchOpRecords: each operator text parsed back into name, seq and op_id; module ranges by
// their text), the user's range and the step marks as NVTX either way.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/pytorch_ranges.hpp"
#include "log_builder.hpp"

namespace gpuscope::store::test {

inline constexpr std::uint32_t kTorchPid = 77, kTorchMain = 77, kTorchAutograd = 78;

enum class TorchRoute { kNvtx, kObserver };

// Push/pop of a range's text, as `route` records it.
class TorchRangeWriter {
 public:
  TorchRangeWriter(LogBuilder& b, TorchRoute route) : m_b(b), m_route(route) {}
  void push(std::uint64_t ts, std::uint32_t tid, std::string_view text) {
    bool observer = false;
    if (m_route == TorchRoute::kObserver) {
      if (const auto op = core::parse_op_range(text)) {
        m_b.torch_op(log::TorchOpEventType::kOpBegin, ts, tid, op->name, op->seq.value_or(-1),
                     static_cast<std::uint64_t>(op->op_id.value_or(0)), op->sizes);
        observer = true;
      } else if (text.rfind(core::kModulePrefix, 0) == 0) {
        m_b.torch_op(log::TorchOpEventType::kModuleBegin, ts, tid, text);
        observer = true;
      }
    }
    if (!observer) m_b.push(ts, tid, text);
    m_open[tid].push_back(observer);
  }
  void pop(std::uint64_t ts, std::uint32_t tid) {
    std::vector<bool>& open = m_open[tid];
    const bool observer = !open.empty() && open.back();
    if (!open.empty()) open.pop_back();
    if (observer) {
      m_b.torch_op(log::TorchOpEventType::kEnd, ts, tid);
    } else {
      m_b.pop(ts, tid);
    }
  }

 private:
  LogBuilder& m_b;
  TorchRoute m_route;
  std::map<std::uint32_t, std::vector<bool>> m_open;  // per thread: open ranges, true = the observer's
};

inline void write_pytorch_log(const std::string& log, TorchRoute route = TorchRoute::kNvtx) {
  constexpr std::uint32_t kPid = kTorchPid, kMain = kTorchMain, kAutograd = kTorchAutograd;
  LogBuilder b(log, kPid);
  TorchRangeWriter r(b, route);
  b.process(0);
  std::uint32_t corr = 1;
  auto launch = [&](std::uint64_t at_us, std::uint32_t tid, const char* kernel, std::uint64_t gpu_us) {
    b.api(at_us * 1000, at_us * 1000 + 500, tid, corr, "cudaLaunchKernel");
    b.kernel(at_us * 1000 + 2000, (at_us + gpu_us) * 1000 + 2000, corr, kernel);
    ++corr;
  };
  for (std::uint64_t base : {0ull, 190ull}) {
    r.push((base + 10) * 1000, kMain, "nn.Module: Net (Net)");
    r.push((base + 12) * 1000, kMain, "nn.Module: conv1 (Conv2d)");
    r.push((base + 13) * 1000, kMain, "aten::conv2d, seq = 5, op_id = 1");
    r.push((base + 14) * 1000, kMain, "aten::convolution, seq = 5, op_id = 2");
    launch(base + 15, kMain, "conv_fwd_kernel", 20);
    r.pop((base + 30) * 1000, kMain);
    r.pop((base + 31) * 1000, kMain);
    r.pop((base + 32) * 1000, kMain);
    r.push((base + 40) * 1000, kMain, "nn.Module: fc (Linear)");
    r.push((base + 41) * 1000, kMain, "aten::linear, seq = 6, op_id = 3");
    launch(base + 42, kMain, "gemm_fwd", 5);
    r.pop((base + 50) * 1000, kMain);
    r.pop((base + 51) * 1000, kMain);
    r.pop((base + 60) * 1000, kMain);
  }
  // Backward of step 0 on the autograd thread, as PyTorch records it: the engine's range
  // (no seq) around the node's (the forward op's seq) around the node's operators.
  r.push(70'000, kAutograd, "autograd::engine::evaluate_function: AddmmBackward0, op_id = 10");
  r.push(70'500, kAutograd, "AddmmBackward0, seq = 6, op_id = 11");
  r.push(71'000, kAutograd, "aten::mm, op_id = 12");
  launch(72, kAutograd, "gemm_bwd", 7);
  r.pop(80'000, kAutograd);
  r.pop(80'500, kAutograd);
  r.pop(81'000, kAutograd);
  r.push(90'000, kAutograd, "autograd::engine::evaluate_function: ConvolutionBackward0, op_id = 13");
  r.push(90'500, kAutograd, "ConvolutionBackward0, seq = 5, op_id = 14");
  launch(91, kAutograd, "conv_bwd_kernel", 30);
  r.pop(109'000, kAutograd);
  r.pop(110'000, kAutograd);
  r.push(112'000, kMain, "step 0");  // a user range: not an operator
  r.pop(118'000, kMain);
  b.nvtx(log::NvtxEventType::kMark, 120'000, kMain, "gpuscope.step");
  b.nvtx(log::NvtxEventType::kMark, 300'000, kMain, "gpuscope.step");
  b.end(400'000);
}

}  // namespace gpuscope::store::test
