// The steps `gpuscope stats` takes both for one trace (stats_command.cpp) and for several
// inputs (stats_many.cpp): the report names asked for, the filter options as one
// analyze::TraceFilter, and finishing the reports (--timeunit, --sort, --top, then the one
// document to -o FILE or stdout; render/report_render.hpp).
// Errors: std::invalid_argument for --from after --to and for a --sort column no report
// has (the message lists every report's columns); std::runtime_error when stdout fails;
// store's errors writing -o FILE. A --sort column missing from only some reports is a
// warning on stderr (those keep their order).
#pragma once

#include <string>
#include <vector>

#include "analyze/common/trace_filter.hpp"
#include "cli/stats_command.hpp"
#include "core/option_values.hpp"
#include "core/report.hpp"
#include "render/report_render.hpp"

namespace gpuscope::cli {

/// --from/--to: times since the start of the trace; a bare number is seconds.
inline constexpr core::DurationLimits kStatsTraceTime{0, core::kMaxInt64, 1'000'000'000, "1.5, 2s or 250ms"};

/// The reports of -r in the order given, each once (empty when -r is not given).
[[nodiscard]] std::vector<std::string> unique_report_names(const std::vector<std::string>& reports);

/// --filter-nvtx, --from, --to, --process and --device as one filter (empty() when none is given).
[[nodiscard]] analyze::TraceFilter stats_filter(const StatsOptions& o);

/// --timeunit, --sort, --top on each report, then the document (as for one trace).
/// `last_note`, when not empty, is added to every report after them.
void finish_stats_reports(const StatsOptions& o, std::vector<Report>& reports, render::Format format,
                          const std::string& last_note = {});

}  // namespace gpuscope::cli
