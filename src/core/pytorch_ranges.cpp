#include "core/pytorch_ranges.hpp"

#include <cctype>
#include <string>

namespace gpuscope::core {
namespace {

// The integer after `key` (", seq = ") in text, if any.
std::optional<std::int64_t> field_int(std::string_view text, std::string_view key) {
  const std::size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + key.size();
  const bool negative = i < text.size() && text[i] == '-';
  if (negative) ++i;
  if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
  std::int64_t v = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    if (v > (INT64_MAX - 9) / 10) return std::nullopt;  // not an id PyTorch writes
    v = v * 10 + (text[i] - '0');
  }
  return negative ? -v : v;
}

}  // namespace

bool is_backward_op_name(std::string_view name) {
  return name.rfind("autograd::engine::", 0) == 0 || name.find("Backward") != std::string_view::npos;
}

std::optional<OpRange> parse_op_range(std::string_view text) {
  const std::size_t op_id_at = text.find(kOpIdField);
  if (op_id_at == std::string_view::npos || op_id_at == 0) return std::nullopt;
  OpRange r;
  r.op_id = field_int(text, kOpIdField);
  if (!r.op_id) return std::nullopt;
  const std::size_t seq_at = text.find(", seq = ");
  const std::size_t name_end = seq_at != std::string_view::npos && seq_at < op_id_at ? seq_at : op_id_at;
  r.name = std::string(text.substr(0, name_end));
  if (seq_at != std::string_view::npos && seq_at < op_id_at) r.seq = field_int(text, ", seq = ");
  constexpr std::string_view kSizes = ", sizes = ";
  if (const std::size_t s = text.find(kSizes, op_id_at); s != std::string_view::npos) {
    std::string_view rest = text.substr(s + kSizes.size());
    if (const std::size_t e = rest.find(", input_op_ids = "); e != std::string_view::npos) rest = rest.substr(0, e);
    r.sizes = std::string(rest);
  }
  r.backward = is_backward_op_name(r.name);
  return r;
}

std::string op_range_text(std::string_view name, std::int64_t seq, std::uint64_t op_id, std::string_view sizes) {
  std::string s(name);
  if (seq < -1 && sizes.empty()) return s;
  if (seq >= 0) s += ", seq = " + std::to_string(seq);
  if (op_id > 0) s += std::string(kOpIdField) + std::to_string(op_id);
  if (!sizes.empty()) {
    s += ", sizes = ";
    s += sizes;
  }
  return s;
}

std::optional<ModuleRange> parse_module_range(std::string_view text) {
  if (text.rfind(kModulePrefix, 0) != 0) return std::nullopt;
  std::string_view rest = text.substr(kModulePrefix.size());
  // The outermost module's range may end with the model's bytes (", weight_bytes = ...").
  if (const std::size_t fields = rest.find(kModuleBytesField); fields != std::string_view::npos)
    rest = rest.substr(0, fields);
  ModuleRange m;
  const std::size_t open = rest.rfind(" (");
  if (open != std::string_view::npos && !rest.empty() && rest.back() == ')') {
    m.class_name = std::string(rest.substr(open + 2, rest.size() - open - 3));
    rest = rest.substr(0, open);
  }
  if (rest.empty()) return std::nullopt;
  m.path = std::string(rest);
  return m;
}

}  // namespace gpuscope::core
