#include "cli/import_command.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <vector>

#include "cli/collect_run.hpp"
#include "cli/output_files.hpp"
#include "core/version.hpp"
#include "store/importer.hpp"
#include "store/output_lock.hpp"
#include "store/run_description.hpp"

namespace gpuscope::cli {

CLI::App* add_import_command(CLI::App& app, ImportOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "import", "Build a trace from event logs left by an interrupted `gpuscope trace` (NAME.logs/).");
  sub->add_option("logs", o.logs, "Folder of .gslog files")->required()->check(CLI::ExistingDirectory);
  sub->add_option("-o,--output", o.output, "Trace name (writes NAME.sqlite)")->required();
  add_force_overwrite_flag(*sub, o.force_overwrite)
      ->description(
          "Replace NAME.sqlite if it exists. Without it an existing trace is kept and nothing is\n"
          "imported; with it the old trace is replaced only once the import has succeeded. Two\n"
          "gpuscope runs writing the same NAME at once: the second refuses (NAME.sqlite.lock)");
  return sub;
}

int run_import(const ImportOptions& o) {
  namespace fs = std::filesystem;
  std::string output = o.output;
  if (output.size() > 7 && output.ends_with(".sqlite")) output.resize(output.size() - 7);
  const std::string db_path = output + ".sqlite";
  // Held to the end: a `gpuscope trace -o NAME` or a second import cannot write NAME meanwhile.
  std::optional<store::OutputLock> lock;
  try {
    lock.emplace(db_path);
    check_outputs({db_path}, o.force_overwrite);
  } catch (const store::OutputBusyError& e) {
    return cli_fail("import", std::string(e.what()) + "; nothing was imported", kBusyTodo);
  } catch (const store::FileWriteError& e) {
    return cli_fail("import", std::string(e.what()) + "; nothing was imported", "");
  }
  if (const int stale = lock->remove_stale_temporaries(); stale > 0)
    std::cerr << "gpuscope import: removed " << stale << " unfinished temporary file(s) of " << db_path
              << " left by a gpuscope that was killed\n";
  std::error_code ec;
  const std::vector<std::string> logs = store::list_trace_inputs(o.logs, ec);
  if (ec) {
    std::cerr << "gpuscope import: error: cannot read " << o.logs << ": " << ec.message() << "\n";
    return 1;
  }
  if (std::none_of(logs.begin(), logs.end(), [](const std::string& p) { return p.ends_with(".gslog"); })) {
    std::cerr << "gpuscope import: error: no .gslog event logs in " << o.logs << "\n";
    return 1;
  }
  // run.json (written by the launcher beside the logs) holds the command line, options and
  // exit status; logs without one (an older gpuscope) import with those unknown.
  store::ImportOptions io;
  try {
    if (auto run = store::read_run_description(o.logs)) {
      io = std::move(*run);
      std::cerr << "gpuscope import: the run: " << (io.command.empty() ? "(command unknown)" : io.command)
                << (io.exit_status || io.term_signal ? "" : " (its end was not recorded: gpuscope was stopped?)")
                << "\n";
    } else {
      std::cerr << "gpuscope import: warning: no " << store::kRunDescriptionFile << " in " << o.logs
                << ": the command line, options and exit status are unknown\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "gpuscope import: warning: " << e.what() << "; importing without it\n";
  }
  if (io.gpuscope_version.empty()) io.gpuscope_version = kVersion;
  io.overwrite = o.force_overwrite;  // the old trace stays until the new one is complete
  const store::ImportResult r = store::import_logs(logs, db_path, io);
  for (const auto& w : r.warnings) std::cerr << "gpuscope import: warning: " << w << "\n";
  // What was read: a log skipped (not a log, a FIFO, unreadable) is not counted as read.
  std::cerr << "gpuscope import: wrote " << db_path << " from "
            << logs.size() - static_cast<std::size_t>(r.logs_skipped) << " log(s)";
  if (r.logs_skipped > 0)
    std::cerr << " (" << r.logs_skipped << " skipped: " << r.skip_reasons.front()
              << (r.logs_skipped > 1 ? "; the others: see the warnings above" : "") << ")";
  std::cerr << "\n";
  return 0;
}

}  // namespace gpuscope::cli
