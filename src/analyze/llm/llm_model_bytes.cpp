// What a forward must read: the model bytes its range text carries (parse_model_bytes) and
// the bytes of a step (step_read_bytes).
#include "analyze/llm/llm_generations.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/pytorch_ranges.hpp"
#include "core/saturating.hpp"

namespace gpuscope::analyze {
namespace {

// The number after `key` ("key = 123") in `text`; nullopt when absent or not a number.
std::optional<std::int64_t> field_int(std::string_view text, std::string_view key) {
  const std::size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + key.size();
  if (i >= text.size() || text[i] < '0' || text[i] > '9') return std::nullopt;
  std::int64_t v = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9')
    v = core::sat_add(
        v > std::numeric_limits<std::int64_t>::max() / 10 ? std::numeric_limits<std::int64_t>::max() : v * 10,
        static_cast<std::int64_t>(text[i++] - '0'));
  return v;
}

}  // namespace

ModelBytes parse_model_bytes(std::string_view text) {
  ModelBytes b;
  const std::size_t at = text.find(core::kModuleBytesField);
  if (at == std::string_view::npos) return b;
  const std::string_view fields = text.substr(at);
  b.weight_bytes = field_int(fields, core::kModuleBytesField);
  constexpr std::string_view kDtype = ", weight_dtype = ";
  if (const std::size_t d = fields.find(kDtype); d != std::string_view::npos) {
    std::string_view rest = fields.substr(d + kDtype.size());
    b.weight_dtype = std::string(rest.substr(0, rest.find(',')));
  }
  b.kv_bytes = field_int(fields, ", kv_bytes = ");
  b.kv_tokens = field_int(fields, ", kv_tokens = ");
  b.kv_static = field_int(fields, ", kv_static = ").value_or(0) != 0;
  return b;
}

std::optional<std::int64_t> step_read_bytes(const ForwardPass& f) {
  if (!f.bytes.weight_bytes) return std::nullopt;
  std::int64_t total = *f.bytes.weight_bytes;
  if (f.bytes.kv_bytes) {
    total = core::sat_add(total, *f.bytes.kv_bytes);
    const std::int64_t held = f.bytes.kv_tokens.value_or(0);
    if (!f.bytes.kv_static && held > 0) {  // the new tokens' keys and values, written then read
      const double added = static_cast<double>(*f.bytes.kv_bytes) / static_cast<double>(held) *
                           static_cast<double>(std::max<std::int64_t>(f.seq.value_or(1), 1));
      total = core::sat_add(total, static_cast<std::int64_t>(std::llround(added)));
    }
  }
  return total;
}

}  // namespace gpuscope::analyze
