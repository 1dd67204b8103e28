#include "cli/export_command.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "analyze/timeline.hpp"
#include "render/perfetto_json.hpp"
#include "store/trace.hpp"

namespace gpuscope::cli {

CLI::App* add_export_command(CLI::App& app, ExportOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "export", "Convert a trace into a timeline for ui.perfetto.dev / chrome://tracing (Chrome\n"
                "trace-event JSON with PyTorch-profiler field names).");
  sub->add_option("trace", o.trace, "NAME.sqlite")->required()->check(CLI::ExistingFile);
  sub->add_option("--format", o.format, "Output format")
      ->check(CLI::IsMember({"perfetto"}))
      ->capture_default_str();
  sub->add_option("-o,--output", o.output, "Output file (default NAME.perfetto.json)");
  return sub;
}

int run_export(const ExportOptions& o) {
  store::Database db = store::open_trace(o.trace);
  std::string output = o.output;
  if (output.empty()) {
    const std::filesystem::path p(o.trace);
    output = (p.parent_path() / p.stem()).string() + ".perfetto.json";
  }
  std::ofstream out(output, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + output);
  // o.format: only perfetto today; CLI11 validated it.
  const analyze::Timeline tl = analyze::load_timeline(db);
  render::write_perfetto_json(tl, out);
  out.close();
  if (!out) throw std::runtime_error("writing " + output + " failed (disk full?)");
  std::cerr << "gpuscope export: wrote " << output << " (open it in https://ui.perfetto.dev or chrome://tracing)\n";
  return 0;
}

}  // namespace gpuscope::cli
