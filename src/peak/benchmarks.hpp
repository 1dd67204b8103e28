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
#include <vector>

#include "core/machine_profile.hpp"
#include "peak/context.hpp"
#include "peak/kernels.hpp"
#include "peak/sweep.hpp"

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
  // The coarse-to-fine sweep (peak/sweep.hpp) of one DRAM ceiling: trials[i] is enqueued
  // by enqueue[i]; check(i) runs trial i once from a reset state and returns "" or what
  // its result got wrong. `work` is the bytes one call moves.
  using Enqueue = std::function<void(cudaStream_t stream)>;
  [[nodiscard]] Ceiling sweep(std::string_view name, double work, std::vector<Trial> trials,
                              const std::vector<Enqueue>& enqueue,
                              const std::function<std::string(std::size_t)>& check);
  // The kernel configurations of `op` as trials of the family `family` (appended).
  void add_kernel_trials(DramOp op, const std::string& family, const void* src, void* dst, std::uint32_t seed,
                         std::vector<Trial>& trials, std::vector<Enqueue>& enqueue);
  const Context& m_ctx;
  Stream m_stream;
  std::size_t m_vectors = 0;          // per buffer; a multiple of SMs × kDramBlock × 2 × 8 × 8
  DeviceBuffer m_a, m_b, m_checksum;  // m_checksum: 4 bytes, the sums of the read kernels
  DeviceBuffer m_cub_temp;            // cub::DeviceReduce's temporary storage for m_vectors × 4 words
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
