// Fuzzes the event-log importer (store/importer.hpp, store/event_log_reader.hpp): the logs
// of a crashed, killed or foreign process, then every report on the trace made of them.
//
// Input: one or more event logs (core/event_log_format.hpp) separated by kLogSeparator
// (at most kMaxLogs; two logs let processes merge, or one log claim another's pid). Each
// is written as a .gslog file into a logs folder and gpuscope_import'ed into a trace on
// tmpfs, which is then opened (store/trace.hpp) and checked (trace_checks.hpp) with every
// output required to be valid UTF-8 (the import repairs the program's text). Inputs of odd
// length import as a `--capture-range cudaProfilerApi` run (capture window recovery).
// Documented: store::DatabaseError from import_logs when no log could be read.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"
#include "trace_checks.hpp"

namespace {

constexpr std::string_view kLogSeparator = "\n--gpuscope-fuzz-next-log--\n";
constexpr std::size_t kMaxLogs = 4;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  namespace fs = std::filesystem;
  const fs::path logs = fuzz::scratch_dir() / "run.logs";
  const fs::path trace = fuzz::scratch_dir() / "run.sqlite";
  std::error_code ec;
  fs::remove_all(logs, ec);
  fs::create_directories(logs);

  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> paths;
  std::size_t begin = 0;
  while (paths.size() < kMaxLogs) {
    const std::size_t sep = input.find(kLogSeparator, begin);
    const std::string_view part =
        input.substr(begin, sep == std::string_view::npos ? std::string_view::npos : sep - begin);
    paths.push_back((logs / ("host-" + std::to_string(paths.size()) + ".gslog")).string());
    fuzz::write_bytes(paths.back(), reinterpret_cast<const std::uint8_t*>(part.data()), part.size());
    if (sep == std::string_view::npos) break;
    begin = sep + kLogSeparator.size();
  }

  store::ImportOptions options;
  options.command = "fuzz";
  // Half the inputs as a run with capture windows, so a log that lost its capture records is
  // rebuilt from its cudaProfilerStart calls or marked unknown (importer.cpp).
  if (size % 2 == 1) options.capture_range = "cudaProfilerApi";
  options.overwrite = true;
  try {
    const store::ImportResult result = store::import_logs(paths, trace.string(), options);
    if (result.logs_read + result.logs_skipped != static_cast<std::int64_t>(paths.size())) {
      fuzz::finding("import", "logs read + skipped != logs given");
    }
  } catch (const store::DatabaseError& e) {
    fuzz::documented(e);
    return 0;
  } catch (const std::exception& e) {
    fuzz::undocumented(e);
  }

  try {
    store::Database db = store::open_trace(trace.string());
    fuzz::check_trace(db, {static_cast<std::uint32_t>(size), /*utf8_outputs=*/true});
  } catch (const std::exception& e) {
    // The importer wrote this trace: it must open.
    fuzz::finding("open_trace of an imported trace", e.what());
  }
  return 0;
}
