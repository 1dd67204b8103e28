#include "core/nccl.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace gpuscope::core {
namespace {

using C = NcclCollective;

// Collective tokens as NCCL spells them in kernel names.
constexpr std::array<std::pair<std::string_view, C>, 9> kCollectives = {{{"AllReduce", C::kAllReduce},
                                                                         {"AllGather", C::kAllGather},
                                                                         {"ReduceScatter", C::kReduceScatter},
                                                                         {"AllToAll", C::kAllToAll},
                                                                         {"SendRecv", C::kSendRecv},
                                                                         {"Broadcast", C::kBroadcast},
                                                                         {"Reduce", C::kReduce},
                                                                         {"Send", C::kSend},
                                                                         {"Recv", C::kRecv}}};

constexpr std::array<std::string_view, 7> kRedops = {"Sum", "Prod", "MinMax", "Min", "Max", "PreMulSum", "SumPostDiv"};

struct Type {
  std::string_view token, nccl;
  int bytes;
};
// New spellings, then the C type names old kernel names use ("int8_t" after the '_' split
// is "int8" + "t"; "__nv_bfloat16" is "", "", "nv", "bfloat16").
constexpr std::array<Type, 22> kTypes = {
    {{"i8", "i8", 1},         {"u8", "u8", 1},         {"i32", "i32", 4},    {"u32", "u32", 4},  {"i64", "i64", 8},
     {"u64", "u64", 8},       {"f16", "f16", 2},       {"f32", "f32", 4},    {"f64", "f64", 8},  {"bf16", "bf16", 2},
     {"f8e4m3", "f8e4m3", 1}, {"f8e5m2", "f8e5m2", 1}, {"int8", "i8", 1},    {"uint8", "u8", 1}, {"int32", "i32", 4},
     {"uint32", "u32", 4},    {"int64", "i64", 8},     {"uint64", "u64", 8}, {"half", "f16", 2}, {"float", "f32", 4},
     {"double", "f64", 8},    {"bfloat16", "bf16", 2}}};

constexpr std::array<std::string_view, 3> kProtocols = {"LL128", "LL", "SIMPLE"};
constexpr std::array<std::string_view, 4> kAlgorithms = {"RING", "TREE", "NVLS", "PAT"};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// The identifier of a name: no "void ", no parameters; a mangled "_Z<len><id>..." gives <id>.
std::string_view identifier(std::string_view name) {
  if (starts_with(name, "void ")) name.remove_prefix(5);
  if (starts_with(name, "_Z")) {
    std::size_t i = 2, len = 0;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) != 0)
      len = len * 10 + (name[i++] - '0');
    if (len > 0 && i + len <= name.size()) return name.substr(i, len);
  }
  const std::size_t paren = name.find_first_of("(<");
  return paren == std::string_view::npos ? name : name.substr(0, paren);
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  for (std::size_t b = 0;;) {
    const std::size_t e = s.find('_', b);
    out.push_back(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) return out;
    b = e + 1;
  }
}

template <class A>
bool contains(const A& values, std::string_view v) {
  for (std::string_view x : values)
    if (x == v) return true;
  return false;
}

// Reads redop, type, algorithm and protocol tokens, in any order (the two generations order
// them differently).
void read_tokens(const std::vector<std::string_view>& t, std::size_t from, NcclKernelInfo& info) {
  for (std::size_t i = from; i < t.size(); ++i) {
    const std::string_view tok = t[i];
    if (tok.empty() || tok == "nv" || tok == "t") continue;
    if (contains(kRedops, tok)) {
      info.redop = tok;
    } else if (contains(kProtocols, tok)) {
      info.protocol = tok;
    } else if (tok == "COLLNET" && i + 1 < t.size() && (t[i + 1] == "DIRECT" || t[i + 1] == "CHAIN")) {
      info.algorithm = std::string(tok) + "_" + std::string(t[++i]);
    } else if (tok == "NVLS" && i + 1 < t.size() && t[i + 1] == "TREE") {
      info.algorithm = "NVLS_TREE";
      ++i;
    } else if (contains(kAlgorithms, tok)) {
      info.algorithm = tok;
    } else if (tok == "fp8" && i + 1 < t.size() && (t[i + 1] == "e4m3" || t[i + 1] == "e5m2")) {
      info.datatype = "f8" + std::string(t[++i]);
      info.element_bytes = 1;
    } else {
      for (const Type& ty : kTypes) {
        if (ty.token == tok) {
          info.datatype = ty.nccl;
          info.element_bytes = ty.bytes;
        }
      }
    }
  }
}

// Data-moving collectives run on bytes: the type in an old name is a placeholder.
bool moves_bytes(C c) {
  return c == C::kAllGather || c == C::kBroadcast || c == C::kSendRecv || c == C::kSend || c == C::kRecv ||
         c == C::kAllToAll;
}

std::string lower_without_underscores(std::string_view s) {
  std::string out;
  for (char ch : s)
    if (ch != '_') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  return out;
}

}  // namespace

std::optional<NcclKernelInfo> parse_nccl_kernel(std::string_view name) {
  const std::string_view id = identifier(name);
  if (!starts_with(id, "nccl") || id.find("Kernel") == std::string_view::npos) return std::nullopt;
  NcclKernelInfo info;
  for (std::string_view prefix : {std::string_view("ncclDevKernel_"), std::string_view("ncclKernel_")}) {
    if (!starts_with(id, prefix)) continue;
    const std::vector<std::string_view> t = split(id.substr(prefix.size()));
    if (t.front() == "Generic") {
      info.generic = true;
      return info;
    }
    for (const auto& [tok, c] : kCollectives)
      if (t.front() == tok) info.collective = c;
    read_tokens(t, 1, info);
    if (moves_bytes(info.collective) && prefix == "ncclKernel_") {
      info.datatype.clear();
      info.element_bytes = 0;
      info.redop.clear();
    }
    return info;
  }
  // Older generations: the collective somewhere in the name (longest spellings first).
  for (const auto& [tok, c] : kCollectives) {
    if (id.find(tok) != std::string_view::npos) {
      info.collective = c;
      break;
    }
  }
  return info;
}

std::string_view collective_name(NcclCollective c) {
  for (const auto& [tok, k] : kCollectives)
    if (k == c) return tok;
  return "NCCL (generic)";
}

std::optional<NcclCollective> collective_from_op(std::string_view op_name) {
  std::string_view rest;
  if (starts_with(op_name, "nccl:")) {
    rest = op_name.substr(5);
  } else if (starts_with(op_name, "c10d::")) {
    rest = op_name.substr(6);
  } else {
    return std::nullopt;
  }
  const std::string s = lower_without_underscores(rest);
  constexpr std::array<std::pair<std::string_view, C>, 5> kPrefixes = {{{"allreduce", C::kAllReduce},
                                                                        {"allgather", C::kAllGather},
                                                                        {"reducescatter", C::kReduceScatter},
                                                                        {"alltoall", C::kAllToAll},
                                                                        {"broadcast", C::kBroadcast}}};
  for (const auto& [p, c] : kPrefixes)
    if (starts_with(s, p)) return c;
  if (s == "reduce") return C::kReduce;
  if (s == "send") return C::kSend;
  if (s == "recv" || s == "recvanysource") return C::kRecv;
  return std::nullopt;
}

std::optional<std::int64_t> shape_elements(std::string_view sizes) {
  constexpr std::int64_t kMax = std::int64_t{1} << 62;
  std::size_t i = 0;
  const auto skip = [&] {
    while (i < sizes.size() && sizes[i] == ' ') ++i;
  };
  const auto eat = [&](char c) {
    skip();
    if (i < sizes.size() && sizes[i] == c) {
      ++i;
      return true;
    }
    return false;
  };
  if (!eat('[')) return std::nullopt;
  std::int64_t total = 0;
  if (eat(']')) return i == sizes.size() ? std::optional<std::int64_t>(0) : std::nullopt;
  do {
    if (!eat('[')) return std::nullopt;
    std::int64_t product = 1;
    if (!eat(']')) {
      do {
        skip();
        if (i >= sizes.size() || std::isdigit(static_cast<unsigned char>(sizes[i])) == 0) return std::nullopt;
        std::int64_t v = 0;
        while (i < sizes.size() && std::isdigit(static_cast<unsigned char>(sizes[i])) != 0) {
          v = v * 10 + (sizes[i++] - '0');
          if (v > kMax) return std::nullopt;
        }
        if (v != 0 && product > kMax / v) return std::nullopt;
        product *= v;
      } while (eat(','));
      if (!eat(']')) return std::nullopt;
    }
    total += product;
    if (total > kMax) return std::nullopt;
  } while (eat(','));
  if (!eat(']')) return std::nullopt;
  skip();
  return i == sizes.size() ? std::optional<std::int64_t>(total) : std::nullopt;
}

std::optional<std::int64_t> collective_bytes(NcclCollective c, std::int64_t elements, int element_bytes, int ranks) {
  if (c == C::kUnknown || element_bytes <= 0 || elements < 0 || ranks < 1) return std::nullopt;
  const long double bytes = static_cast<long double>(elements) * element_bytes * (c == C::kAllGather ? ranks : 1);
  if (bytes > static_cast<long double>(std::numeric_limits<std::int64_t>::max() / 2)) return std::nullopt;
  return static_cast<std::int64_t>(bytes);
}

double bus_bandwidth_factor(NcclCollective c, int ranks) {
  if (ranks < 1) return std::nan("");
  const double n = ranks;
  switch (c) {
    case C::kAllReduce:
      return 2.0 * (n - 1) / n;
    case C::kAllGather:
    case C::kReduceScatter:
    case C::kAllToAll:
      return (n - 1) / n;
    case C::kBroadcast:
    case C::kReduce:
    case C::kSendRecv:
    case C::kSend:
    case C::kRecv:
      return 1.0;
    case C::kUnknown:
      break;
  }
  return std::nan("");
}

double algorithm_bandwidth_gbps(double bytes, double ns) {
  if (!(ns > 0) || !(bytes >= 0)) return std::nan("");
  return bytes / ns;
}

}  // namespace gpuscope::core
