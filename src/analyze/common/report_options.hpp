// report_options: how every report names kernels and how many rows it is asked for
// (`gpuscope stats --base / --mangled / --top N`). Shared by every subject of analyze/;
// the list of reports that take it is analyze/report_registry.hpp.
#pragma once

#include <cstdint>

namespace gpuscope::analyze {

/// How every report names kernels.
struct ReportOptions {
  bool base = false;     // kernel short names (nsys --base)
  bool mangled = false;  // kernel mangled names (nsys --mangled)
  /// > 0: only the first N rows in the report's own order are wanted (stats --top N
  /// without --sort). Reports with one row per event (cuda_gpu_trace, cuda_api_trace)
  /// then read no more than N rows; the others may ignore it (--top cuts them after).
  std::int64_t first_rows = 0;
};

}  // namespace gpuscope::analyze
