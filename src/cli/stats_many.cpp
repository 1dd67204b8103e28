#include "cli/stats_many.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "analyze/comm/comm_data.hpp"
#include "analyze/comm/comm_findings.hpp"
#include "analyze/comm/comm_summary.hpp"
#include "analyze/comm/nccl_reports.hpp"
#include "cli/comm_inputs.hpp"
#include "cli/output_files.hpp"
#include "cli/stats_steps.hpp"
#include "core/report_transform.hpp"

namespace gpuscope::cli {
namespace {

// -r's names, each once; every many-GPU report when -r is not given. Throws for a report
// that reads one trace.
std::vector<std::string> many_gpu_report_names(const StatsOptions& o) {
  std::vector<std::string> names = unique_report_names(o.reports);
  const auto valid = analyze::comm_report_names();
  if (names.empty()) names.assign(valid.begin(), valid.end());
  std::string list;
  for (std::string_view v : valid) list += (list.empty() ? "" : ", ") + std::string(v);
  for (const std::string& n : names)
    if (std::find(valid.begin(), valid.end(), n) == valid.end())
      throw std::invalid_argument("report '" + n + "' reads one trace; over several traces or summaries these run: " +
                                  list + " (merge the traces with gpuscope merge for the others)");
  return names;
}

// Each rank's trace or summary once (the same file under two names counts twice).
void check_inputs_once(const std::vector<std::string>& inputs) {
  std::set<std::filesystem::path> seen;
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (!seen.insert(std::filesystem::weakly_canonical(in, ec)).second)
      throw std::invalid_argument(in + " is given twice; give each rank's trace or summary once");
  }
}

}  // namespace

bool is_stats_many(const StatsOptions& options) {
  return options.inputs.size() > 1 ||
         (options.inputs.size() == 1 && analyze::is_comm_summary_file(options.inputs.front()));
}

int run_stats_many(const StatsOptions& o) {
  const render::Format format = render::parse_format(o.format);
  const std::vector<std::string> names = many_gpu_report_names(o);
  if (!stats_filter(o).empty() || o.whole_run)
    throw std::invalid_argument(
        "filters and --whole-run need one trace; over several traces or summaries the many-GPU reports see every "
        "event (merge the traces with gpuscope merge, then filter)");
  (void)table_options(o.table);
  check_inputs_once(o.inputs);
  check_outputs({o.output}, o.force_overwrite);

  // Map (in parallel), reduce, then the collectives matched across ranks.
  const int jobs = o.jobs > 0 ? o.jobs : default_map_jobs();
  const analyze::detail::CommData d = analyze::detail::comm_reduce(map_comm_inputs(o.inputs, jobs));
  const analyze::detail::StragglerMatch m = analyze::detail::match_collectives(d);
  const std::int64_t first_rows = o.top && *o.top > 0 && o.sort.empty() ? *o.top : 0;
  std::vector<Report> reports;
  for (const std::string& n : names) reports.push_back(analyze::comm_report(n, d, m, first_rows));
  finish_stats_reports(o, reports, format);
  return 0;
}

}  // namespace gpuscope::cli
