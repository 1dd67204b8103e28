// Internal: what the many-GPU reports (nccl_sum.cpp, rank_reports.cpp, straggler_reports.cpp)
// share: the note of a trace without NCCL kernels and the cells they fill.
#pragma once

#include <cstdint>
#include <optional>

#include "analyze/common/report_text.hpp"
#include "core/report.hpp"

namespace gpuscope::analyze::detail::comm_cells {

inline constexpr double kNsPerMs = 1e6;
inline constexpr const char* kNoNccl =
    "no NCCL kernels in the capture range: collectives appear when the traced program communicates through NCCL "
    "(PyTorch DDP/FSDP, torch.distributed with the nccl backend)";

/// ns as a cell in ms.
[[nodiscard]] inline Cell ms(std::int64_t ns) { return static_cast<double>(ns) / kNsPerMs; }
/// The value, or NULL.
[[nodiscard]] inline Cell opt_int(const std::optional<std::int64_t>& v) {
  return v ? Cell{*v} : Cell{std::monostate{}};
}
/// part / whole in %, NULL when whole is 0.
[[nodiscard]] inline Cell share(std::int64_t part, std::int64_t whole) { return percent_cell(part, whole); }

}  // namespace gpuscope::analyze::detail::comm_cells
