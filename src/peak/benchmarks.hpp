// Internal to src/peak: the benchmark groups of `gpuscope peak`. Each group allocates what
// its ceilings share on construction (and frees it on destruction) and returns one
// verified, timed Ceiling per call, with theoretical and datasheet values still unset
// (the runner adds them). A ceiling that cannot be measured on this machine throws
// NotMeasured with the reason; any other failure throws.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/machine_profile.hpp"
#include "peak/context.hpp"
#include "peak/kernels.hpp"

namespace gpuscope::peak::detail {

/// A ceiling this machine cannot measure ("one GPU: peer-to-peer needs two").
class NotMeasured : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// dram_read, dram_write, dram_copy, l2_read, shared_memory (memory_bench.cpp).
class MemoryBench {
 public:
  explicit MemoryBench(const Context& ctx);
  [[nodiscard]] Ceiling dram_read();
  [[nodiscard]] Ceiling dram_write();
  [[nodiscard]] Ceiling dram_copy();
  [[nodiscard]] Ceiling l2_read();
  [[nodiscard]] Ceiling shared_memory();

 private:
  // The DRAM kernels run with 4 and with 8 accesses in flight per thread; the faster is
  // the ceiling. `launch(unroll, grid, stream)` enqueues one call.
  using DramLaunch = std::function<void(int unroll, int grid, cudaStream_t stream)>;
  [[nodiscard]] Ceiling fastest_unroll(std::string_view name, double work, const DramLaunch& launch,
                                       const std::string& what, int* best_unroll);
  [[nodiscard]] int grid_of(int unroll) const { return unroll == 8 ? m_grid8 : m_grid4; }
  const Context& m_ctx;
  Stream m_stream;
  int m_block = 256;
  int m_grid4 = 0, m_grid8 = 0;       // one full wave of the slowest-to-fit DRAM kernel per unroll
  std::size_t m_vectors = 0;          // per buffer; a multiple of both grids × block × 8
  DeviceBuffer m_a, m_b, m_checksum;  // m_checksum: 4 bytes, the sums of the read kernels
};

/// fp64_fma, fp32_fma, fp16_fma, bf16_fma, int32_imad, sfu_expf (compute_bench.cpp).
class ComputeBench {
 public:
  explicit ComputeBench(const Context& ctx);
  [[nodiscard]] Ceiling measure(CoreOp op, std::string_view ceiling);

 private:
  const Context& m_ctx;
  Stream m_stream;
};

/// tensor_fp16, tensor_bf16, tensor_tf32, tensor_fp8, tensor_int8 through cuBLASLt
/// (tensor_bench.cpp). Throws NotMeasured when cuBLASLt cannot be loaded.
class TensorBench {
 public:
  explicit TensorBench(const Context& ctx);
  ~TensorBench();
  TensorBench(const TensorBench&) = delete;
  TensorBench& operator=(const TensorBench&) = delete;
  [[nodiscard]] Ceiling measure(std::string_view ceiling);

 private:
  struct State;
  const Context& m_ctx;
  std::unique_ptr<State> m_state;
};

/// h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable, bidir_pinned, p2p (transfer_bench.cpp).
class TransferBench {
 public:
  explicit TransferBench(const Context& ctx);
  ~TransferBench();
  TransferBench(const TransferBench&) = delete;
  TransferBench& operator=(const TransferBench&) = delete;
  [[nodiscard]] Ceiling h2d(bool pinned);
  [[nodiscard]] Ceiling d2h(bool pinned);
  [[nodiscard]] Ceiling bidirectional();
  [[nodiscard]] Ceiling peer_to_peer();

 private:
  struct State;
  const Context& m_ctx;
  std::unique_ptr<State> m_state;
};

/// launch_rate, launch_latency, graph_kernel_cost, stream_sync (latency_bench.cpp).
class LatencyBench {
 public:
  explicit LatencyBench(const Context& ctx);
  [[nodiscard]] Ceiling launch_rate();
  [[nodiscard]] Ceiling launch_latency();
  [[nodiscard]] Ceiling graph_kernel_cost();
  [[nodiscard]] Ceiling stream_sync();

 private:
  [[nodiscard]] std::uint32_t counter_value();
  // Host-timed samples of `per_sample` back-to-back count launches and one
  // cudaStreamSynchronize, per launch; the device counter must grow by every launch made.
  [[nodiscard]] Ceiling launches_then_sync(std::string_view name, int per_sample, int warmup, int min_reps,
                                           bool as_rate, std::string method);
  const Context& m_ctx;
  Stream m_stream;
  DeviceBuffer m_counter;
  PinnedBuffer m_flag;
};

}  // namespace gpuscope::peak::detail
