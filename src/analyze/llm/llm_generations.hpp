// llm_generations: the generate loops of a PyTorch trace (`gpuscope trace
// --pytorch=ops,modules[,shapes]`): each forward pass of the model, classified prefill or
// decode, grouped into generations, with the times a token-level report needs (TTFT, the
// decode-step intervals). analyze/llm/llm_reports.hpp turns them into `stats -r llm_sum`;
// docs/llm.md says what the numbers mean.
//
// Forward pass: one call of the model, the top-level nn.Module (torch_modules row with no
// parent) called most often in its process (the module range gpuscope's hooks put around
// nn.Module.__call__). A process that trains (optimizer steps or backward operators) has no
// generate loop.
//
// Prefill or decode, best source first (the one every forward of the process supports):
//   1. kShapes: with --pytorch=...,shapes, the indices of the forward's first aten::embedding
//      ([B, S]): batch B, S tokens per sequence; prefill iff S > 1.
//   2. kTokens: with shapes but no embedding (torch.compile lowers it into a Triton kernel),
//      the rows of the forward's first matrix product (aten::mm, addmm, linear, matmul:
//      the product of the activation's leading dimensions = B x S tokens); prefill iff it
//      processes more tokens than the next forward (or, last, than the previous one); the
//      generation's batch is the token count of its first decode step.
//   3. kKernels: without shapes, the set of kernel names the forward launches: decode steps
//      all launch the most common set; a forward that launches another set and is followed
//      by one with the common set is a prefill. A forward with the common set before any
//      prefill is a decode step (the capture began mid-generation).
// A prefill starts a generation; the decode steps after it belong to it.
//
// Times (ns, the trace's clock):
//   token_end: when the token a forward produces is done, from the GPU work (kernels, copies,
//     sets) launched on the forward's thread from its call until the next forward's call:
//     the end of the first device-to-host copy launched after the forward returned (the token
//     going to the host: a streamer's .cpu(), .item(), a stopping check), or without one the
//     latest end of that work (the sampling included). The last forward of a generation
//     looks no further than 2 x the longest such tail of the generation's other forwards +
//     50 µs past its own end, so the next generation's preparation is not counted.
//   request start: where the user's request began. For Hugging Face generate(), the start of
//     the innermost "gpuscope.generate" range (gpuscope's hook around GenerationMixin.generate,
//     on by default) on the prefill's thread that holds the prefill's call, for the first
//     generation whose prefill lies in it (a later prefill in the same call starts at its own
//     model call); without one (a hand-written loop, --pytorch=none, an older trace) the
//     prefill's model call. (A server's requests are timed from the client by `gpuscope bench
//     serve`: the requests table.)
//   TTFT = prefill's token_end - the request start (generate()'s own preparation before the
//     prefill, input checks and cache set-up, is part of what the user waits for).
//   Wall = last forward's token_end - the request start.
//   prefill time = prefill's token_end - prefill's call start (its own work: Prefill Rate).
//   decode interval k = token_end(k) - token_end(k-1): one per decode step.
//   GPU busy of a decode step: the union of the GPU work launched in its window, clipped to
//     its interval; of a generation's first forward (the prefill), clipped to its call → its
//     token_end (the TTFT interval).
// Bytes and FLOPs (issue 24, item 2):
//   The model's range text carries its bytes (docs/trace-schema.md, torch_modules "Model
//   bytes": weight_bytes, and the KV cache passed in: kv_bytes with kv_tokens or kv_static).
//   step_read_bytes() = weight_bytes + kv_bytes + the KV of the tokens the step adds (a dynamic
//   cache holding T > 0 positions: kv_bytes x S / T, S the tokens per sequence processed, 1 for
//   a decode step; a static cache's allocated bytes already hold them).
//   FLOPs of a forward: Σ matmul_flops() over the outermost matrix products inside its call
//   (aten::mm, addmm, bmm, baddbmm, linear, matmul, scaled_dot_product_attention; one nested
//   in another, as linear's addmm, is not counted twice); nullopt when none was recorded with
//   its shapes (no --pytorch=...,shapes; compiled code whose products are Triton kernels).
// CPU time by cause (issue 24, item 2: a cold generation explained):
//   A forward's CPU window runs from its call to the next forward's call in its generation
//   (the last one: to its token's GPU end, its latest CUDA call's return or the end of its call,
//   whichever is latest; calls looked at as for token_end). The window is
//   split, on the forward's thread, into (cpu_split): time inside CUDA API calls by ApiCause
//   (a moment under nested calls goes to the first cause in ApiCause order: module loading
//   before allocation before synchronisation before launches), time inside PyTorch operators
//   (torch_ops ranges) outside any API call ("framework": dispatch, shape checks, cuDNN plan
//   building, which is host code), and the rest ("other": Python, the model's own code,
//   gpuscope's module hooks). The parts add up to the window.
// Errors: store::DatabaseError on a database without the schema.
// Files: find_generations in llm_generations.cpp, its pieces in the files
// llm_generations_parts.hpp lists (analyze/llm/README.md has the map).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

enum class ForwardPhase { kPrefill, kDecode };

/// What the model's range text says it reads (all nullopt/empty when not recorded).
struct ModelBytes {
  std::optional<std::int64_t> weight_bytes;  // parameters + non-bool buffers, bytes
  std::string weight_dtype;                  // "float16", "bfloat16", ...; "" if unknown
  std::optional<std::int64_t> kv_bytes;      // the KV cache passed in, bytes
  std::optional<std::int64_t> kv_tokens;     // positions per sequence it held (dynamic cache)
  bool kv_static = false;                    // a preallocated cache: kv_bytes is its allocation
};
enum class PhaseSource { kShapes, kTokens, kKernels };

/// Why a CUDA API call holds the CPU, from its name (api_cause), in attribution order.
enum class ApiCause {
  kModuleLoad,  // cuModuleLoad*, cuLibraryLoad*, cudaLibraryLoad*, cuModuleGetFunction, cuLibraryGetKernel,
                // cudaGetFuncBySymbol, cuLink*, nvrtc*, nvJitLink* (loading or JIT-compiling GPU code)
  kAlloc,       // *Malloc*, *Free*, cuMemAlloc*, cuMemCreate, cuMemMap, cuMemAddressReserve, cuMemRelease,
                // *HostAlloc*, *HostRegister*
  kSync,        // *Synchronize*, *Memcpy*, *Memset* without Async, cudaMemcpy*Async to the host (the CPU
                // waits for the GPU: a .item(), .cpu(), a stopping check)
  kLaunch,      // *Launch* (kernels, cooperative, graphs)
  kOther,       // any other API call
};
inline constexpr std::size_t kApiCauses = 5;

/// The CPU window of a forward split by cause, ns (file comment). Σ of the parts = window_ns.
struct CpuCauses {
  std::int64_t window_ns = 0;
  std::int64_t api_ns[kApiCauses] = {};  // by ApiCause
  std::int64_t framework_ns = 0;         // inside PyTorch operators, outside API calls
  std::int64_t other_ns = 0;             // the rest: Python and other host code
};

/// The cause of a CUDA API call named `name` (cudaLaunchKernel, cuModuleLoadData, ...). Pure.
[[nodiscard]] ApiCause api_cause(std::string_view name);

/// One CUDA API call for cpu_split: CPU interval and cause.
struct ApiSpan {
  std::int64_t start_ns, end_ns;
  ApiCause cause;
};
/// Splits [from, to) by cause from the thread's API calls and operator ranges (any order,
/// clipped to the window). Pure.
[[nodiscard]] CpuCauses cpu_split(std::int64_t from, std::int64_t to, std::span<const ApiSpan> api,
                                  std::span<const std::pair<std::int64_t, std::int64_t>> ops);

/// One call of the model.
struct ForwardPass {
  std::int64_t pid = 0, tid = 0;
  std::int64_t start_ns = 0, end_ns = 0;   // the module call (CPU)
  std::optional<std::int64_t> batch, seq;  // kShapes: the embedding's indices [B, S]
  std::optional<std::int64_t> tokens;      // B x S (kShapes) or the first matmul's rows (kTokens)
  std::uint64_t kernel_set = 0;            // hash of the sorted kernel names it launched itself
  std::int64_t kernels = 0;                // kernels launched inside the call
  std::int64_t token_end_ns = 0;           // GPU end of its token (0: no GPU work)
  std::int64_t gpu_busy_ns = 0;            // busy time inside its token interval (the previous token's
                                           // end to its own; a generation's first forward: from its call)
  std::int64_t tail_ns = 0;                // last launch in its window - end_ns
  ForwardPhase phase = ForwardPhase::kDecode;
  ModelBytes bytes;              // from the model range's text
  std::optional<double> flops;   // Σ 2MNK of its outermost matrix products (shapes)
  std::int64_t flop_ops = 0;     // how many were counted
  CpuCauses cpu;                 // its CPU window by cause (file comment)
  std::int64_t gpu_work_ns = 0;  // union of the GPU work launched in its CPU window
};

/// Consecutive forwards of one process: a prefill (when seen) and its decode steps.
struct Generation {
  std::int64_t pid = 0;
  std::size_t first = 0, count = 0;  // forwards[first, first + count)
  bool has_prefill = false;
  std::optional<std::int64_t> batch;          // sequences
  std::optional<std::int64_t> prompt_len;     // tokens per sequence (the prefill's S, padding included)
  std::int64_t start_ns = 0;                  // prefill call start (first forward's without prefill)
  std::optional<std::int64_t> request_ns;     // the enclosing generate() call's start, when recorded
  std::int64_t first_token_ns = 0;            // prefill's token_end
  std::int64_t end_ns = 0;                    // last forward's token_end
  std::vector<std::int64_t> decode_ns;        // decode-step intervals, in order
  std::vector<std::int64_t> decode_busy_ns;   // GPU busy inside each
  std::vector<std::int64_t> decode_bytes;     // step_read_bytes() of each decode step that has it
  std::vector<std::int64_t> decode_kv_bytes;  // their KV part (read bytes - weights)
  std::optional<double> prefill_flops;        // the prefill's FLOPs (shapes)
  std::int64_t prefill_flop_ops = 0;          // the matrix products counted
  std::string weight_dtype;                   // the model's, as recorded

  [[nodiscard]] std::int64_t output_len() const { return static_cast<std::int64_t>(count); }
  /// Where the user's request began: the generate() call, else the prefill's model call.
  [[nodiscard]] std::int64_t request_start_ns() const { return request_ns.value_or(start_ns); }
  /// Request start → the first token done (file comment); nullopt without a prefill or its token.
  [[nodiscard]] std::optional<std::int64_t> ttft_ns() const {
    return has_prefill && first_token_ns > 0 ? std::optional(first_token_ns - request_start_ns()) : std::nullopt;
  }
  /// The prefill's model call → the first token done: the prefill's own time.
  [[nodiscard]] std::optional<std::int64_t> prefill_ns() const {
    return has_prefill && first_token_ns > 0 ? std::optional(first_token_ns - start_ns) : std::nullopt;
  }
  /// Request start → the last token done; 0 when unknown.
  [[nodiscard]] std::int64_t wall_ns() const { return end_ns > request_start_ns() ? end_ns - request_start_ns() : 0; }
};

/// Everything found: the model of each process, its forwards and generations.
struct LlmTrace {
  std::vector<ForwardPass> forwards;  // by process, in call order
  std::vector<Generation> generations;
  struct Model {
    std::int64_t pid = 0;
    std::string path, class_name;
    PhaseSource source = PhaseSource::kKernels;
    std::size_t forwards = 0;
  };
  std::vector<Model> models;
  std::vector<std::int64_t> training_pids;  // left out: they train
  bool has_modules = false;                 // the trace has module records at all
};

/// Finds the generations of every process (see the file comment).
[[nodiscard]] LlmTrace find_generations(store::Database& db);

/// The mean of integer values (ns, bytes) as a double; NaN when there are none.
[[nodiscard]] double mean_of(std::span<const std::int64_t> values);

/// Classifies one process's forwards (in call order) from `source` (file comment). Pure.
void classify_forwards(std::span<ForwardPass> forwards, PhaseSource source);

/// The best source every forward supports (kShapes, kTokens, kKernels). Pure.
[[nodiscard]] PhaseSource phase_source(std::span<const ForwardPass> forwards);

/// The generations of one process's classified forwards; `offset` is the index of
/// forwards[0] in LlmTrace::forwards. Token ends and busy times must be filled. Pure.
[[nodiscard]] std::vector<Generation> group_generations(std::span<const ForwardPass> forwards, std::size_t offset);

/// The model bytes in a module range's text ("nn.Module: GPT (GPT), weight_bytes = 248912640,
/// weight_dtype = float16, kv_bytes = 1179648, kv_tokens = 32"). Pure.
[[nodiscard]] ModelBytes parse_model_bytes(std::string_view text);

/// Bytes a forward must read (file comment); nullopt without weight_bytes. Pure.
[[nodiscard]] std::optional<std::int64_t> step_read_bytes(const ForwardPass& f);

/// FLOPs of one matrix product from its recorded input shapes (2 per multiply-add; bias adds
/// and scaling left out), nullopt for another operator or shapes that do not fit:
///   aten::mm        (A[M,K], B[K,N])                2MKN
///   aten::addmm     (bias, A[M,K], B[K,N])          2MKN
///   aten::bmm       (A[b,M,K], B[b,K,N])            2bMKN
///   aten::baddbmm   (C, A[b,M,K], B[b,K,N])         2bMKN
///   aten::linear    (X[..., K], W[N, K], bias)      2 x prod(X[:-1]) x K x N
///   aten::matmul    (A[..., M, K], B[..., K, N])    2 x batch x MKN, batch the broadcast of the
///                   leading dimensions; a 1-D operand counts as a row or a column
///   aten::scaled_dot_product_attention (Q[..., L, E], K[..., S, E], V[..., S, Ev])
///                   2 x batch x L x S x (E + Ev): QKᵀ and the weights times V, every
///                   position pair counted (a causal mask's skipped half too). Pure.
[[nodiscard]] std::optional<double> matmul_flops(std::string_view name,
                                                 const std::vector<std::vector<std::int64_t>>& sizes);

/// Percentile p (0..100) of `samples` by linear interpolation between closest ranks (numpy's
/// default: rank p/100 x (n-1)). Empty → NaN.
[[nodiscard]] double percentile(std::vector<double> samples, double p);

/// "[[50257, 768], [1, 7], []]" → {{50257, 768}, {1, 7}, {}}; nullopt if it is not that shape.
[[nodiscard]] std::optional<std::vector<std::vector<std::int64_t>>> parse_sizes(std::string_view text);

}  // namespace gpuscope::analyze
