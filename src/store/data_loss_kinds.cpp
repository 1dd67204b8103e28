#include "store/data_loss_kinds.hpp"

namespace gpuscope::store {

std::string describe_data_loss(DataLossKind kind, std::uint64_t count, std::optional<std::uint32_t> pid,
                               std::string_view detail, std::string_view what) {
  const DataLossKindDef& def = data_loss_def(kind);
  if (what.empty()) what = def.name;
  std::string out;
  std::string_view rest = def.wording;
  while (!rest.empty()) {
    const std::size_t open = rest.find('{');
    const std::size_t close = open == std::string_view::npos ? open : rest.find('}', open);
    if (close == std::string_view::npos) {
      out += rest;
      break;
    }
    out += rest.substr(0, open);
    const std::string_view key = rest.substr(open + 1, close - open - 1);
    if (key == "count") {
      out += std::to_string(count);
    } else if (key == "pid") {
      out += pid ? std::to_string(*pid) : std::string("?");
    } else if (key == "what") {
      out += what;
    } else if (key == "detail") {
      out += detail;
    } else {
      out += rest.substr(open, close - open + 1);  // not a placeholder: keep as written
    }
    rest.remove_prefix(close + 1);
  }
  return out;
}

}  // namespace gpuscope::store
