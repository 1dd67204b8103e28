// What the trace harnesses (fuzz_event_log_import, fuzz_trace_reports) do with a trace
// once it opens: everything a user can ask of it, each printed in every format.
//
//   - every report of the report registry (analyze/report_registry.hpp), `stats -r NAME`;
//   - the end-of-trace summary (analyze/nsys/trace_summary.hpp), `summary`;
//   - the kernel results (analyze/kernels/kernel_reports.hpp: kernel_metrics and
//     kernel_metrics_sum, the roofline SVG), `kernels --report`;
//   - the timeline as Perfetto JSON (analyze/timeline/timeline.hpp, render/perfetto_json.hpp),
//     `export`.
// Each Report is rendered as table, csv, json and markdown (render/report_render.hpp).
//
// Documented errors are store::DatabaseError (a table the damage made unreadable) and
// std::invalid_argument from the roofline SVG when nothing can be drawn; each analysis runs
// on its own, so one damaged table does not hide the others. Checked beside crashes:
//   - the json format and the Perfetto export parse as JSON (nlohmann);
//   - with `utf8_outputs`, every output is valid UTF-8 (promised for imported traces:
//     core/utf8.hpp; a damaged file can hold any bytes, so not checked there).
// Anything else thrown is a finding (fuzz_support.hpp).
#pragma once

#include <cstdint>

namespace gpuscope::store {
class Database;
}

namespace gpuscope::fuzz {

struct TraceCheckOptions {
  std::uint32_t variant = 0;  // picks the report options (base / mangled names), the top N
  bool utf8_outputs = false;  // outputs must be valid UTF-8 (see above)
};

/// Runs everything listed above on `db`.
void check_trace(store::Database& db, const TraceCheckOptions& options);

}  // namespace gpuscope::fuzz
