// gpuscope: where does the GPU time go, and how far is each part from what this GPU can do.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "analyze/timeline.hpp"
#include "analyze/trace_summary.hpp"
#include "cli/bench_command.hpp"
#include "cli/kernels_command.hpp"
#include "cli/peak_command.hpp"
#include "cli/roofline_command.hpp"
#include "cli/stats_command.hpp"
#include "cli/trace_command.hpp"
#include "cli/tracer_calibration.hpp"
#include "core/version.hpp"
#include "render/perfetto_json.hpp"
#include "render/report_render.hpp"
#include "store/importer.hpp"
#include "store/schema.hpp"
#include "store/trace.hpp"

namespace fs = std::filesystem;
using namespace gpuscope;

namespace {

int run_export(const std::string& trace, const std::string& format, std::string output) {
  store::Database db = store::open_trace(trace);
  if (output.empty()) {
    fs::path p(trace);
    output = (p.parent_path() / p.stem()).string() + ".perfetto.json";
  }
  std::ofstream out(output, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + output);
  (void)format;  // only perfetto today; CLI11 validated it
  const analyze::Timeline tl = analyze::load_timeline(db);
  render::write_perfetto_json(tl, out);
  out.close();
  if (!out) throw std::runtime_error("writing " + output + " failed (disk full?)");
  std::cerr << "gpuscope export: wrote " << output << " (open it in https://ui.perfetto.dev or chrome://tracing)\n";
  return 0;
}

int run_summary(const std::string& trace, const std::string& format, int top) {
  store::Database db = store::open_trace(trace);
  const render::Format f = render::parse_format(format);
  for (const Report& r : analyze::trace_summary(db, top)) {
    render::render(r, f, std::cout);
    if (f == render::Format::kTable || f == render::Format::kMarkdown) std::cout << "\n";
  }
  return 0;
}

int run_import(const std::string& log_dir, std::string output, bool force) {
  if (output.size() > 7 && output.ends_with(".sqlite")) output.resize(output.size() - 7);
  const std::string db_path = output + ".sqlite";
  if (fs::exists(db_path) && !force) {
    std::cerr << "gpuscope import: error: " << db_path << " exists; use --force-overwrite\n";
    return 1;
  }
  std::vector<std::string> logs;
  for (const auto& e : fs::directory_iterator(log_dir))
    if (e.path().extension() == ".gslog") logs.push_back(e.path().string());
  if (logs.empty()) {
    std::cerr << "gpuscope import: error: no .gslog event logs in " << log_dir << "\n";
    return 1;
  }
  std::sort(logs.begin(), logs.end());
  fs::remove(db_path);
  store::ImportOptions io;
  io.gpuscope_version = kVersion;
  const store::ImportResult r = store::import_logs(logs, db_path, io);
  for (const auto& w : r.warnings) std::cerr << "gpuscope import: warning: " << w << "\n";
  std::cerr << "gpuscope import: wrote " << db_path << " from " << logs.size() << " log(s)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "gpuscope " + std::string(kVersion) +
      ": where does the GPU time go, and how far is each part from what this GPU can do.\n"};
  app.set_version_flag("--version", std::string("gpuscope ") + kVersion);
  app.require_subcommand(1);
  app.footer(
      "Start with:  gpuscope trace -o run -- ./my_program args   (or -- python3 train.py)\n"
      "then:        gpuscope summary run.sqlite ; gpuscope export run.sqlite --format perfetto\n"
      "The trace is a SQLite database: sqlite3 run.sqlite 'SELECT name, duration_ns FROM v_kernels LIMIT 5'");

  cli::TraceOptions trace_opts;
  CLI::App* trace = cli::add_trace_command(app, trace_opts);

  std::string export_trace, export_format = "perfetto", export_out;
  CLI::App* exp = app.add_subcommand(
      "export", "Convert a trace into a timeline for ui.perfetto.dev / chrome://tracing (Chrome\n"
                "trace-event JSON with PyTorch-profiler field names).");
  exp->add_option("trace", export_trace, "NAME.sqlite")->required()->check(CLI::ExistingFile);
  exp->add_option("--format", export_format, "Output format")
      ->check(CLI::IsMember({"perfetto"}))
      ->capture_default_str();
  exp->add_option("-o,--output", export_out, "Output file (default NAME.perfetto.json)");

  std::string sum_trace, sum_format = "table";
  int sum_top = 10;
  CLI::App* sum = app.add_subcommand(
      "summary", "Print the end-of-trace summary of a trace again: wall and GPU busy time, top\n"
                 "kernels, memory copies, and any data loss.");
  sum->add_option("trace", sum_trace, "NAME.sqlite")->required()->check(CLI::ExistingFile);
  sum->add_option("--format", sum_format, "table, csv, json or markdown")->capture_default_str();
  sum->add_option("--top", sum_top, "Kernels listed")->capture_default_str();

  cli::StatsOptions stats_opts;
  CLI::App* stats = cli::add_stats_command(app, stats_opts);

  cli::RooflineOptions roofline_opts;
  CLI::App* roofline = cli::add_roofline_command(app, roofline_opts);

  cli::BenchOptions bench_opts;
  CLI::App* bench = cli::add_bench_command(app, bench_opts);

  cli::PeakOptions peak_opts;
  CLI::App* peak = cli::add_peak_command(app, peak_opts);

  cli::KernelsOptions kernels_opts;
  CLI::App* kernels = cli::add_kernels_command(app, kernels_opts);

  std::string imp_dir, imp_out;
  bool imp_force = false;
  CLI::App* imp = app.add_subcommand(
      "import", "Build a trace from event logs left by an interrupted `gpuscope trace` (NAME.logs/).");
  imp->add_option("logs", imp_dir, "Folder of .gslog files")->required()->check(CLI::ExistingDirectory);
  imp->add_option("-o,--output", imp_out, "Trace name (writes NAME.sqlite)")->required();
  imp->add_flag("-f,--force-overwrite", imp_force, "Replace NAME.sqlite if it exists");

  // Internal: the loop `gpuscope trace` times with and without the collector
  // (cli/tracer_calibration.hpp). Hidden from --help.
  std::string calib_out;
  CLI::App* calib = app.add_subcommand("__calibrate-child", "");
  calib->group("");
  calib->add_option("out", calib_out)->required();

  bool schema_sql = false;
  CLI::App* schema = app.add_subcommand("schema", "Print the trace database schema (markdown; --sql for DDL).");
  schema->add_flag("--sql", schema_sql, "Print CREATE statements instead of the documentation");

  CLI11_PARSE(app, argc, argv);

  try {
    if (trace->parsed()) return cli::run_trace(trace_opts);
    if (exp->parsed()) return run_export(export_trace, export_format, export_out);
    if (sum->parsed()) return run_summary(sum_trace, sum_format, sum_top);
    if (stats->parsed()) return cli::run_stats(stats_opts);
    if (roofline->parsed()) return cli::run_roofline(roofline_opts);
    if (bench->parsed()) return cli::run_bench(bench_opts);
    if (peak->parsed()) return cli::run_peak(peak_opts);
    if (kernels->parsed()) return cli::run_kernels(kernels_opts);
    if (imp->parsed()) return run_import(imp_dir, imp_out, imp_force);
    if (calib->parsed()) return cli::run_calibrate_child(calib_out);
    if (schema->parsed()) {
      std::cout << (schema_sql ? store::create_schema_sql() : store::schema_markdown());
      return 0;
    }
  } catch (const std::exception& e) {
    std::cerr << "gpuscope: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
