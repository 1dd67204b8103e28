// The NVTX messages gpuscope's PyTorch hooks produce (src/collect/python/sitecustomize.py,
// `gpuscope trace --pytorch`), read back: pure string functions, no state.
//
// Operators come from PyTorch's own RecordFunction observer for NVTX (the one
// torch.autograd.profiler.emit_nvtx installs; torch/csrc/profiler/util.cpp, getNvtxStr):
//   "aten::conv2d, seq = 12, op_id = 345"
//   "aten::add, op_id = 346, sizes = [[32, 64], [32, 64], []], input_op_ids = [...]"
//   "autograd::engine::evaluate_function: ConvolutionBackward0, seq = 12, op_id = 400"
// The sequence number of a backward call is the one its forward operator carried when
// it created the autograd node (torch.profiler and nsys's autograd-nvtx tie them the same way).
// Modules: "nn.Module: PATH (CLASS)"; the outermost module's range may add the model's bytes,
// "nn.Module: PATH (CLASS), weight_bytes = N, weight_dtype = D[, kv_bytes = N, kv_tokens = T |
// kv_static = 1]" (docs/trace-schema.md, "Model bytes"; read by analyze/llm/llm_generations.hpp).
// Steps: the mark "gpuscope.step". Hugging Face generate() calls: the push/pop range
// "gpuscope.generate" around transformers' GenerationMixin.generate (where the user's request
// starts: analyze/llm/llm_generations.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::core {

inline constexpr std::string_view kStepMark = "gpuscope.step";
inline constexpr std::string_view kGenerateRange = "gpuscope.generate";
inline constexpr std::string_view kModulePrefix = "nn.Module: ";
inline constexpr std::string_view kModuleBytesField = ", weight_bytes = ";
/// The field every operator range's text carries ("NAME, seq = N, op_id = M"): how the import
/// and the reports tell an operator range from the program's own ranges.
inline constexpr std::string_view kOpIdField = ", op_id = ";

/// One operator range's message, parsed.
struct OpRange {
  std::string name;                   // "aten::conv2d", "autograd::engine::evaluate_function: ConvolutionBackward0"
  std::optional<std::int64_t> seq;    // autograd sequence number; nullopt when absent
  std::optional<std::int64_t> op_id;  // RecordFunction handle: unique per call
  std::string sizes;                  // "[[32, 64], []]" with --pytorch=ops,shapes; "" otherwise
  bool backward = false;              // run by the autograd engine (a backward node or inside one)
};

/// The operator range `text` describes, or nullopt when it is not one. An operator message
/// carries ", op_id = N" (every call has an id: the hooks ask for ids); any user range that
/// does not is left alone.
[[nodiscard]] std::optional<OpRange> parse_op_range(std::string_view text);

/// The text PyTorch's NVTX observer writes for an operator call (torch/csrc/profiler/util.cpp,
/// getNvtxStr, without input_op_ids): "NAME[, seq = N][, op_id = M][, sizes = SIZES]"; seq is
/// written when >= 0, op_id when > 0, sizes when not empty; seq < -1 with no sizes gives NAME
/// alone, as there. The importer makes it from gpuscope's own observer's records
/// (log::TorchOpRecord), so both routes give the same nvtx_events text; parse_op_range reads it.
[[nodiscard]] std::string op_range_text(std::string_view name, std::int64_t seq, std::uint64_t op_id,
                                        std::string_view sizes);

/// A module range "nn.Module: PATH (CLASS)" (the model's bytes after it left out).
struct ModuleRange {
  std::string path;        // "layer1.0.conv1"; the outermost module called is its class name
  std::string class_name;  // "Conv2d"
};
[[nodiscard]] std::optional<ModuleRange> parse_module_range(std::string_view text);

/// True for a backward node's name: "...Backward0", "autograd::engine::evaluate_function: ...".
[[nodiscard]] bool is_backward_op_name(std::string_view name);

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
