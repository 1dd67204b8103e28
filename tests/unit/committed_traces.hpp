// Test helper: the committed GPU recordings (tests/data/NAME.logs/, the event logs the
// collector wrote and the launcher's run.json) imported into a trace once per test process,
// through the importer a user's `gpuscope import` runs, so every schema change is tested on
// them without re-recording on a GPU. Needs GPUSCOPE_SOURCE_DIR (the source tree) defined.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/importer.hpp"
#include "store/run_description.hpp"

namespace gpuscope::test {

/// Path of the trace imported from tests/data/NAME.logs ("cnn", "kernels-h100"), in a
/// temporary folder removed at exit. Throws std::runtime_error when there are no logs.
inline std::string committed_trace(const std::string& name) {
  namespace fs = std::filesystem;
  struct Cache {
    fs::path dir;
    std::map<std::string, std::string> traces;
    ~Cache() {
      std::error_code ec;
      if (!dir.empty()) fs::remove_all(dir, ec);
    }
  };
  static Cache cache;
  if (auto it = cache.traces.find(name); it != cache.traces.end()) return it->second;
  if (cache.dir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "gpuscope_committed_XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("cannot create a temporary folder");
    cache.dir = tmpl;
  }
  const fs::path logs_dir = fs::path(GPUSCOPE_SOURCE_DIR) / "tests" / "data" / (name + ".logs");
  std::vector<std::string> logs;
  for (const auto& e : fs::directory_iterator(logs_dir))
    if (e.path().extension() == ".gslog") logs.push_back(e.path().string());
  if (logs.empty()) throw std::runtime_error("no event logs in " + logs_dir.string());
  std::sort(logs.begin(), logs.end());
  store::ImportOptions run = store::read_run_description(logs_dir).value_or(store::ImportOptions{});
  const std::string db = (cache.dir / (name + ".sqlite")).string();
  (void)store::import_logs(logs, db, run);
  return cache.traces[name] = db;
}

}  // namespace gpuscope::test
