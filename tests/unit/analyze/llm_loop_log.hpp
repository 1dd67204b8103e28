// A hand-built log of a generate loop, as `gpuscope trace --pytorch=ops,modules[,shapes]` records
// one, where every time is known (test_llm_reports.cpp and test_token_timeline.cpp use it).
//
// One forward at T µs (write_forward below): the model's range T .. T+10, inside it an
// embedding call (its sizes [[100, 16], [B, S]] with shapes) at T+1 .. T+2 and one launch at
// T+3 of a kernel that runs T+5 .. T+5+D; after it the sampling (aten::argmax at T+11 .. T+13)
// launches at T+12 a kernel that runs T+D+6 .. T+D+8: the token's GPU end is T+D+8. The next
// forward is called at T+D+10. Prefill: D = 300 µs ("gemm_prefill"); decode step k (from 1): D =
// 90 + 10k µs ("gemv_decode"). So TTFT = 308 µs, decode interval k = D_k + 10 µs, GPU busy in it
// D_k + 2 µs (the kernel and the sampling kernel).
//
// With a generate() call (Gen::generate_us = G): the range "gpuscope.generate" (gpuscope's hook
// around transformers' generate) from G µs before the prefill's call to 1 µs after the last
// forward's window; TTFT and Wall then start G µs earlier (308 + G µs).
//
// With model bytes (LoopLog::model_bytes): the model's range says "weight_bytes = W" and the
// KV cache passed in: empty at the prefill (kv_bytes = 0, kv_tokens = 0), P + k - 1 positions
// before decode step k at kKvPerToken bytes each per sequence; a static cache instead says its
// allocation, kv_static = 1. With FLOPs, the prefill also calls (T+4 .. T+9) aten::linear
// [1, S, 4096] x [4096, 4096] with its aten::addmm nested inside (not counted again),
// aten::scaled_dot_product_attention [1, 8, S, 64] x 3 and aten::bmm [8, S, 64] x [8, 64, S].
#pragma once

#include <cstdint>
#include <string>

#include "../store/log_builder.hpp"
#include "../store/pytorch_log.hpp"

namespace gpuscope::analyze::llm_test {

using store::test::LogBuilder;

constexpr std::uint32_t kPid = 300, kTid = 300;

enum class Shapes { kNone, kEmbedding, kMatmul };

struct Gen {
  std::uint64_t start_us;
  int batch, prompt, decode_steps;
  std::uint64_t cold_us = 0;  // a cold generation: each decode step's kernel runs cold_us longer and
                              // its CPU loads a module for cold_us (llm_step_sum's test of it)
  int slow_step = 0;          // decode step slow_step's kernel runs slow_us longer (a step that stands out)
  std::uint64_t slow_us = 0;
  std::uint64_t generate_us = 0;      // > 0: generate() (the range gpuscope.generate) called this long before the
                                      // prefill, returning 1 µs after the generation's last call
  std::uint32_t generate_tid = kTid;  // the thread that calls it
};

constexpr std::int64_t kKvPerToken = 1'000'000;  // bytes per position and sequence (all layers, K and V)

// The prefill's FLOPs (file comment) for S prompt tokens: linear + attention + bmm.
inline double prefill_flops(double s) { return 2 * s * 4096 * 4096 + 2 * 8 * s * s * (64 + 64) + 2 * 8 * s * 64 * s; }

struct ModelBytesSpec {
  std::int64_t weights = 0;
  bool static_cache = false;
  std::int64_t static_len = 64;  // the static cache's allocated positions
  bool flops = false;
};

class LoopLog {
 public:
  LoopLog(const std::string& path, Shapes shapes, bool to_host = false)
      : m_b(path, kPid), m_shapes(shapes), m_to_host(to_host) {
    m_b.process(0);
  }
  void model_bytes(const ModelBytesSpec& spec) {
    m_bytes = spec;
    m_b.device(0, "NVIDIA H100 80GB HBM3");
  }

  // One generation: a prelude kernel (generate()'s preparation) 20 µs before the prefill, the
  // prefill, then the decode steps; with g.generate_us, inside a generate() call. Returns the
  // time after it.
  std::uint64_t generation(const Gen& g) {
    if (g.generate_us > 0) open_generate(g.start_us - g.generate_us, g.generate_tid);
    launch(g.start_us - 20, g.start_us - 19, 1, "prelude_kernel");
    std::uint64_t t = g.start_us;
    t = forward(t, g.batch, g.prompt, 300, "gemm_prefill", 0);
    for (int k = 1; k <= g.decode_steps; ++k)
      t = forward(t, g.batch, 1,
                  90 + 10 * static_cast<std::uint64_t>(k) + g.cold_us + (k == g.slow_step ? g.slow_us : 0),
                  "gemv_decode", g.prompt + k - 1, g.cold_us);
    if (g.generate_us > 0) close_generate(t + 1, g.generate_tid);
    return t + (g.generate_us > 0 ? 2 : 0);
  }
  // A generate() call as gpuscope's hook records it: the range gpuscope.generate on `tid`.
  void open_generate(std::uint64_t at_us, std::uint32_t tid = kTid) {
    m_b.push(at_us * 1000, tid, "gpuscope.generate");
  }
  void close_generate(std::uint64_t at_us, std::uint32_t tid = kTid) { m_b.pop(at_us * 1000, tid); }
  void finish(std::uint64_t at_us) { m_b.end(at_us * 1000); }
  LogBuilder& builder() { return m_b; }

 private:
  void launch(std::uint64_t api_us, std::uint64_t gpu_start_us, std::uint64_t gpu_us, const char* kernel) {
    m_b.api(api_us * 1000, api_us * 1000 + 500, kTid, m_corr, "cudaLaunchKernel");
    m_b.kernel(gpu_start_us * 1000, (gpu_start_us + gpu_us) * 1000, m_corr, kernel);
    ++m_corr;
  }
  std::string op(const char* name, const std::string& sizes) {
    std::string text = std::string(name) + ", op_id = " + std::to_string(m_op++);
    if (m_shapes != Shapes::kNone) text += ", sizes = " + sizes;
    return text;
  }
  std::string model_text(int batch, int held) const {
    std::string text = "nn.Module: GPT (GPT)";
    if (m_bytes.weights == 0) return text;
    text += ", weight_bytes = " + std::to_string(m_bytes.weights) + ", weight_dtype = float16";
    if (m_bytes.static_cache)
      return text + ", kv_bytes = " + std::to_string(kKvPerToken * batch * m_bytes.static_len) + ", kv_static = 1";
    return text + ", kv_bytes = " + std::to_string(kKvPerToken * batch * held) +
           ", kv_tokens = " + std::to_string(held);
  }
  std::uint64_t forward(std::uint64_t t, int batch, int seq, std::uint64_t d, const char* kernel, int held,
                        std::uint64_t load_us = 0) {
    m_b.push(t * 1000, kTid, model_text(batch, held));
    m_b.push(t * 1000 + 500, kTid, "nn.Module: wte (Embedding)");
    const std::string b = std::to_string(batch), s = std::to_string(seq), rows = std::to_string(batch * seq);
    if (m_shapes == Shapes::kMatmul)  // torch.compile: no embedding op, a matrix product of B x S rows
      m_b.push((t + 1) * 1000, kTid, op("aten::addmm", "[[48], [" + rows + ", 16], [16, 48]]"));
    else
      m_b.push((t + 1) * 1000, kTid, op("aten::embedding", "[[100, 16], [" + b + ", " + s + "], [], [], []]"));
    m_b.pop((t + 2) * 1000, kTid);
    m_b.pop((t + 2) * 1000 + 500, kTid);
    launch(t + 3, t + 5, d, kernel);
    if (m_bytes.flops && seq > 1) {
      const std::string sq = std::to_string(seq);
      m_b.push((t + 4) * 1000, kTid, op("aten::linear", "[[1, " + sq + ", 4096], [4096, 4096], [4096]]"));
      m_b.push((t + 4) * 1000 + 200, kTid, op("aten::addmm", "[[4096], [" + sq + ", 4096], [4096, 4096], [], []]"));
      m_b.pop((t + 4) * 1000 + 800, kTid);
      m_b.pop((t + 5) * 1000, kTid);
      const std::string qkv = "[1, 8, " + sq + ", 64]";
      m_b.push((t + 6) * 1000, kTid,
               op("aten::scaled_dot_product_attention", "[" + qkv + ", " + qkv + ", " + qkv + ", [], [], []]"));
      m_b.pop((t + 7) * 1000, kTid);
      m_b.push((t + 8) * 1000, kTid, op("aten::bmm", "[[8, " + sq + ", 64], [8, 64, " + sq + "]]"));
      m_b.pop((t + 9) * 1000, kTid);
    }
    m_b.pop((t + 10) * 1000, kTid);
    m_b.push((t + 11) * 1000, kTid, op("aten::argmax", "[[" + b + ", 100], []]"));
    launch(t + 12, t + d + 6, 2, "argmax_kernel");
    m_b.pop((t + 13) * 1000, kTid);
    if (m_to_host) {  // the token to the host (T+D+8 .. T+D+9), then a stopping check's kernel
      m_b.api((t + 14) * 1000, (t + 14) * 1000 + 500, kTid, m_corr, "cudaMemcpyAsync");
      m_b.memcpy((t + d + 8) * 1000, (t + d + 9) * 1000, m_corr++, 4, log::MemcpyKind::kDtoH, log::MemoryKind::kDevice,
                 log::MemoryKind::kPageable);
      launch(t + 15, t + d + 9, 2, "stop_check");
    }
    if (load_us > 0) {  // cuDNN attention at a new length: an operator T+16 .. T+40+L loading a module T+20 .. T+20+L
      m_b.push((t + 16) * 1000, kTid, op("aten::_scaled_dot_product_cudnn_attention", "[]"));
      m_b.api((t + 20) * 1000, (t + 20 + load_us) * 1000, kTid, 0, "cuModuleLoadData");
      m_b.push((t + 30 + load_us) * 1000, kTid, op("aten::empty", "[]"));  // nested: 1 µs of its own
      m_b.pop((t + 31 + load_us) * 1000, kTid);
      m_b.pop((t + 40 + load_us) * 1000, kTid);
    }
    return t + d + 10;
  }

  LogBuilder m_b;
  Shapes m_shapes;
  bool m_to_host;
  ModelBytesSpec m_bytes;
  std::uint32_t m_corr = 1;
  int m_op = 1;
};

}  // namespace gpuscope::analyze::llm_test
