// gpuscope: where does the GPU time go, and how far is each part from what this GPU can do.
// The dispatcher: each subcommand declares its options and runs in cli/<name>_command.cpp.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <string>

#include "cli/bench_command.hpp"
#include "cli/collect_run.hpp"
#include "cli/comm_summary_command.hpp"
#include "cli/diff_command.hpp"
#include "cli/export_command.hpp"
#include "cli/import_command.hpp"
#include "cli/kernels_command.hpp"
#include "cli/launcher.hpp"
#include "cli/merge_command.hpp"
#include "cli/monitor_command.hpp"
#include "cli/peak_command.hpp"
#include "cli/report_command.hpp"
#include "cli/roofline_command.hpp"
#include "cli/schema_command.hpp"
#include "cli/session_command.hpp"
#include "cli/stats_command.hpp"
#include "cli/summary_command.hpp"
#include "cli/trace_command.hpp"
#include "cli/tracer_calibration.hpp"
#include "core/version.hpp"
#include "store/atomic_file.hpp"

using namespace gpuscope;

int main(int argc, char** argv) {
  // Output files: an unfinished temporary file goes with a Ctrl-C (store/atomic_file.hpp),
  // and a full `ulimit -f` is an error that keeps the old file, not a silent death.
  store::remove_temporary_files_on_signals();
  cli::ignore_file_size_signal();
  CLI::App app{"gpuscope " + std::string(kVersion) +
               ": where does the GPU time go, and how far is each part from what this GPU can do.\n"};
  app.set_version_flag("--version", std::string("gpuscope ") + kVersion);
  app.require_subcommand(1);
  app.footer(
      "Start with:  gpuscope trace -o run -- ./my_program args   (or -- python3 train.py)\n"
      "then:        gpuscope summary run.sqlite ; gpuscope export run.sqlite --format perfetto\n"
      "The trace is a SQLite database: sqlite3 run.sqlite 'SELECT name, duration_ns FROM v_kernels LIMIT 5'\n"
      "Exit code 2 for a bad option or argument, with every command.");

  // Declaration order is the order of --help.
  cli::TraceOptions trace_opts;
  CLI::App* trace = cli::add_trace_command(app, trace_opts);

  // A program traced in windows opened from another shell (nsys launch / start / stop).
  cli::TraceOptions launch_opts;
  CLI::App* launch = cli::add_trace_command(app, launch_opts, "launch");
  cli::SessionOptions start_opts, stop_opts;
  CLI::App* start = cli::add_start_command(app, start_opts);
  CLI::App* stop = cli::add_stop_command(app, stop_opts);
  CLI::App* sessions = cli::add_sessions_command(app);

  cli::MonitorOptions monitor_opts;
  CLI::App* monitor = cli::add_monitor_command(app, monitor_opts);

  cli::ExportOptions export_opts;
  CLI::App* exp = cli::add_export_command(app, export_opts);

  cli::SummaryOptions summary_opts;
  CLI::App* summary = cli::add_summary_command(app, summary_opts);

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

  cli::ImportOptions import_opts;
  CLI::App* imp = cli::add_import_command(app, import_opts);

  cli::DiffOptions diff_opts;
  CLI::App* diff = cli::add_diff_command(app, diff_opts);

  cli::ReportCommandOptions report_opts;
  CLI::App* report = cli::add_report_command(app, report_opts);

  cli::MergeOptions merge_opts;
  CLI::App* merge = cli::add_merge_command(app, merge_opts);

  cli::CommSummaryOptions comm_summary_opts;
  CLI::App* comm_summary = cli::add_comm_summary_command(app, comm_summary_opts);

  // Internal: the loop `gpuscope trace` times with and without the collector
  // (cli/tracer_calibration.hpp). Hidden from --help.
  std::string calib_out;
  CLI::App* calib = app.add_subcommand("__calibrate-child", "");
  calib->group("");
  calib->add_option("out", calib_out)->required();

  cli::SchemaOptions schema_opts;
  CLI::App* schema = cli::add_schema_command(app, schema_opts);

  // Every command's bad option (unknown flag, a refused value, a missing argument) exits 2,
  // as the top-level --help says; CLI11 alone exits 105, 106, 109, ... by kind.
  // --help and --version still exit 0.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints the message (and the usage where CLI11 does)
    return code == 0 ? 0 : cli::kExitBadOption;
  }

  try {
    if (trace->parsed()) return cli::run_trace(trace_opts);
    if (launch->parsed()) return cli::run_trace(launch_opts);
    if (start->parsed()) return cli::run_start(start_opts);
    if (stop->parsed()) return cli::run_stop(stop_opts);
    if (sessions->parsed()) return cli::run_sessions();
    if (monitor->parsed()) return cli::run_monitor(monitor_opts);
    if (exp->parsed()) return cli::run_export(export_opts);
    if (summary->parsed()) return cli::run_summary(summary_opts);
    if (stats->parsed()) return cli::run_stats(stats_opts);
    if (roofline->parsed()) return cli::run_roofline(roofline_opts);
    if (bench->parsed()) return cli::run_bench(bench_opts);
    if (peak->parsed()) return cli::run_peak(peak_opts);
    if (kernels->parsed()) return cli::run_kernels(kernels_opts);
    if (imp->parsed()) return cli::run_import(import_opts);
    if (diff->parsed()) return cli::run_diff(diff_opts);
    if (report->parsed()) return cli::run_report_page(report_opts);
    if (merge->parsed()) return cli::run_merge(merge_opts);
    if (comm_summary->parsed()) return cli::run_comm_summary(comm_summary_opts);
    if (calib->parsed()) return cli::run_calibrate_child(calib_out);
    if (schema->parsed()) return cli::run_schema(schema_opts);
  } catch (const std::exception& e) {
    std::cerr << "gpuscope: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
