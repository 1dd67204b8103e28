// Internal: the ceilings llm_sum holds a generation's decode bytes and prefill FLOPs against,
// for the GPU of one process: `gpuscope peak`'s cached profile of that GPU (dram_read, else
// dram_copy; the tensor ceiling for the weights' dtype), else the devices row's theoretical
// numbers; each with the words saying which one and why (llm_reports.hpp, "BW of Ceiling",
// "Prefill of Ceiling").
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze::detail {

// The ceilings the decode bytes and prefill FLOPs are held against, for one process's GPU.
struct Ceilings {
  double dram = std::nan("");    // B/s
  std::string dram_what;         // "the measured DRAM read bandwidth (gpuscope peak: dram_read)", ...
  double tensor = std::nan("");  // FLOP/s
  std::string tensor_what;       // which ceiling, measured or theoretical, and why this one
};

/// The ceilings of the GPU process `pid` launched most of its kernels on (its devices row),
/// for weights of `dtype` ("float16", ...; "" unknown); NaN ceilings when the trace names no
/// GPU. A broken cached profile counts as none.
[[nodiscard]] Ceilings ceilings_for(store::Database& db, std::int64_t pid, const std::string& dtype);

}  // namespace gpuscope::analyze::detail
