#include "cli/export_command.hpp"

#include <filesystem>
#include <iostream>

#include "analyze/timeline/timeline.hpp"
#include "analyze/timeline/trace_python_samples.hpp"
#include "cli/output_files.hpp"
#include "render/perfetto_json.hpp"
#include "render/perfetto_proto.hpp"
#include "store/atomic_file.hpp"
#include "store/trace.hpp"

namespace gpuscope::cli {

CLI::App* add_export_command(CLI::App& app, ExportOptions& o) {
  CLI::App* sub =
      app.add_subcommand("export",
                         "Convert a trace into a timeline for ui.perfetto.dev: perfetto, Chrome trace-event\n"
                         "JSON with PyTorch-profiler field names (chrome://tracing opens it too); pftrace,\n"
                         "Perfetto's protobuf trace, several times smaller, for big traces.");
  sub->add_option("trace", o.trace, "NAME.sqlite")->required()->check(CLI::ExistingFile);
  sub->add_option("--format", o.format, "Output format")
      ->check(CLI::IsMember({"perfetto", "pftrace"}))
      ->capture_default_str();
  sub->add_option("-o,--output", o.output, "Output file (default NAME.perfetto.json, or NAME.pftrace)");
  add_force_overwrite_flag(*sub, o.force_overwrite);
  return sub;
}

int run_export(const ExportOptions& o) {
  std::string output = o.output;
  if (output.empty()) {
    const std::filesystem::path p(o.trace);
    output = (p.parent_path() / p.stem()).string() + (o.format == "pftrace" ? ".pftrace" : ".perfetto.json");
  }
  check_outputs({output}, o.force_overwrite);  // before the trace is read
  store::Database db = store::open_trace(o.trace);
  // o.format: perfetto or pftrace; CLI11 validated it.
  // Streamed: the events go from the trace's rows to the file one at a time, so memory
  // does not grow with the trace (docs/performance.md, "Big traces").
  analyze::TraceTimeline timeline(db);
  timeline.set_read_ahead(true);  // the writers never touch db: reading and writing overlap
  const analyze::TimelineHeader header = timeline.header();
  const analyze::TimelineTracks tracks = timeline.tracks(header);
  // Python stack samples (trace --python-sampling), read after the timeline's events.
  analyze::TracePythonSamples python(db);
  // A trace found damaged half-way leaves the file that was there as it was.
  store::write_file_atomically(output, store::overwrite_if(o.force_overwrite), [&](std::ostream& out) {
    if (o.format == "pftrace") {
      render::write_perfetto_proto(header, tracks, timeline, out, &python);
    } else {
      render::write_perfetto_json(header, tracks, timeline, out, &python);
    }
  });
  std::cerr << "gpuscope export: wrote " << output;
  if (python.visited() > 0) std::cerr << " with " << python.visited() << " Python stack samples";
  std::cerr << " (open it in https://ui.perfetto.dev or chrome://tracing)\n";
  return 0;
}

}  // namespace gpuscope::cli
