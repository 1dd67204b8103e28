// report_registry: every report `gpuscope stats -r NAME` runs, in one list — its name,
// the question it answers (for `gpuscope stats --help` and the "unknown report" error),
// whether it runs without -r, and the function that builds it. A new report is one row
// in report_registry.cpp; nothing else lists report names.
//
// The reports themselves live beside their arithmetic: analyze/nsys/nsys_reports.hpp (the nsys
// summaries and traces), top_report.hpp, nvtx_gpu_proj.hpp, gpu_util_report.hpp,
// launch_reports.hpp, memcpy_check.hpp, cuda_memory_report.hpp, gpu_metrics_report.hpp,
// nccl_reports.hpp, python/py_sample_reports.hpp;
// docs/stats.md documents their columns.
//
// Errors: run_report throws std::invalid_argument for an unknown name (the message lists
// the valid ones); store::DatabaseError if the database lacks the schema's tables/views.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "analyze/common/report_options.hpp"
#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

/// One registered report.
struct ReportEntry {
  std::string_view name;         // what -r takes, e.g. "cuda_gpu_kern_sum"
  std::string_view description;  // the question it answers, one line
  bool in_default = false;       // run by `gpuscope stats` without --report
  /// One Report for every name but "top", which gives two ("top" and "top_kernels").
  std::vector<Report> (*run)(store::Database& db, const ReportOptions& options) = nullptr;
};

/// Every report, in the order --help lists them (and the order "valid: ..." names them).
[[nodiscard]] std::span<const ReportEntry> report_registry();

/// The reports `gpuscope stats` runs without --report: {"top"}.
[[nodiscard]] std::vector<std::string_view> report_names();

/// Every name run_report() accepts: "top", cuda_api_sum, cuda_gpu_kern_sum,
/// cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, nvtx_sum, nvtx_gpu_proj_sum, gpu_util,
/// launch_overhead, sync_wait, memcpy_check, cuda_memory, gpu_metrics_sum, cuda_gpu_sum, cuda_gpu_trace,
/// cuda_api_trace, op_sum, module_sum, step_sum, py_sum, gpu_idle_py, nccl_sum, comm_overlap, rank_sum, stragglers,
/// collective_trace.
[[nodiscard]] std::vector<std::string_view> all_report_names();

/// The question `report` answers (one line, for --help); empty for an unknown name.
[[nodiscard]] std::string_view report_description(std::string_view report);

/// Runs the report called `name`: one Report for every name but "top", which gives two
/// ("top" and "top_kernels", analyze/nsys/top_report.hpp). Unknown name → std::invalid_argument:
/// "unknown report 'x' (valid: top, cuda_api_sum, ...)".
[[nodiscard]] std::vector<Report> run_report(store::Database& db, std::string_view name,
                                             const ReportOptions& options = {});

}  // namespace gpuscope::analyze
