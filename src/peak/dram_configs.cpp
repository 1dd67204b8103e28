// The DRAM kernel configurations `gpuscope peak` sweeps (peak/dram_configs.hpp).
#include "peak/dram_configs.hpp"

#include <algorithm>

namespace gpuscope::peak::detail {

const char* cache_hint_name(CacheHint h) {
  switch (h) {
    case CacheHint::kDefault:
      return "default";
    case CacheHint::kNonCoherent:
      return "ld.nc";
    case CacheHint::kStreaming:
      return "streaming .cs";
    case CacheHint::kNoAllocate:
      return "ld.nc.L1::no_allocate.L2::256B";
  }
  return "?";
}

std::string dram_label(const DramConfig& c) {
  std::string s =
      std::to_string(16 * c.width) + " B x " + std::to_string(c.unroll) + ", " + cache_hint_name(c.hint) + ", ";
  s += c.blocks_per_sm == 0 ? std::string("one-shot grid") : std::to_string(c.blocks_per_sm) + " blocks/SM persistent";
  return s;
}

double bytes_in_flight_per_sm(const DramConfig& c, int resident_blocks) {
  const int blocks = c.blocks_per_sm > 0 ? c.blocks_per_sm : resident_blocks;
  return static_cast<double>(blocks) * kDramBlock * c.width * 16.0 * c.unroll;
}

std::vector<DramConfig> dram_configs(DramOp op, bool quick,
                                     const std::function<int(const DramConfig&)>& max_blocks_per_sm) {
  std::vector<CacheHint> hints;
  if (op == DramOp::kWrite)
    hints = {CacheHint::kDefault, CacheHint::kStreaming};
  else if (quick)
    hints = op == DramOp::kRead ? std::vector{CacheHint::kDefault, CacheHint::kNonCoherent, CacheHint::kStreaming}
                                : std::vector{CacheHint::kDefault, CacheHint::kStreaming};
  else
    hints = {CacheHint::kDefault, CacheHint::kNonCoherent, CacheHint::kStreaming, CacheHint::kNoAllocate};
  const std::vector<int> widths = quick ? std::vector{1} : std::vector{1, 2};
  const std::vector<int> unrolls = quick ? std::vector{4, 8} : std::vector{4, 8, 2};

  struct Ranked {
    int rank;
    DramConfig config;
  };
  std::vector<Ranked> all;
  for (int width : widths)
    for (int unroll : unrolls)
      for (CacheHint hint : hints) {
        DramConfig c{op, width, unroll, hint, 0};
        const int occupancy = std::max(1, max_blocks_per_sm(c));
        const int base = (width == 1 ? 0 : 2) + (unroll == 2 ? 2 : 0);
        all.push_back({base, c});  // one-shot
        std::vector<int> grids{occupancy};
        if (!quick)
          for (int b : {8, 4, 2, 1})
            if (b < occupancy) grids.push_back(b);
        for (int b : grids) {
          c.blocks_per_sm = b;
          all.push_back({base + (b == occupancy ? 0 : 1), c});
        }
      }
  std::stable_sort(all.begin(), all.end(), [](const Ranked& a, const Ranked& b) { return a.rank < b.rank; });
  std::vector<DramConfig> out;
  out.reserve(all.size());
  for (const Ranked& r : all) out.push_back(r.config);
  return out;
}

}  // namespace gpuscope::peak::detail
