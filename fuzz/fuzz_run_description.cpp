// Fuzzes the run description reader (store/run_description.hpp): NAME.logs/run.json, which
// the launcher rewrites during a run and which may be cut short when it is killed, or
// edited by hand before `gpuscope import`. The input is written as run.json into a logs
// folder and read with read_run_description(); a description that reads is written and
// read back (what the writer writes, the reader must take). Documented: store::DatabaseError.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>

#include "fuzz_support.hpp"
#include "store/database.hpp"
#include "store/run_description.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  namespace fs = std::filesystem;
  const fs::path logs = fuzz::scratch_dir() / "run.logs";
  fs::create_directories(logs);
  fuzz::write_bytes(logs / store::kRunDescriptionFile, data, size);
  std::optional<store::ImportOptions> run;
  try {
    run = store::read_run_description(logs);
  } catch (const store::DatabaseError& e) {
    fuzz::documented(e);
    return 0;
  } catch (const std::exception& e) {
    fuzz::undocumented(e);
  }
  if (!run) fuzz::finding("read_run_description", "nullopt although run.json exists");

  const fs::path again = fuzz::scratch_dir() / "again.logs";
  fs::create_directories(again);
  try {
    store::write_run_description(again, *run);
    const std::optional<store::ImportOptions> back = store::read_run_description(again);
    if (!back || back->command != run->command || back->launched_pid != run->launched_pid ||
        back->exit_status != run->exit_status || back->term_signal != run->term_signal ||
        back->extra_meta != run->extra_meta) {
      fuzz::finding("run description round trip", "differs after write + read");
    }
  } catch (const std::exception& e) {
    fuzz::finding("run description round trip", e.what());
  }
  return 0;
}
