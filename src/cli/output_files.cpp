#include "cli/output_files.hpp"

#include "store/atomic_file.hpp"

namespace gpuscope::cli {

CLI::Option* add_force_overwrite_flag(CLI::App& sub, bool& force) {
  return sub.add_flag("-f,--force-overwrite", force, kForceOverwriteHelp);
}

void check_outputs(const std::vector<std::string>& paths, bool force) {
  for (const std::string& p : paths)
    if (!p.empty()) store::check_output(p, store::overwrite_if(force));
}

}  // namespace gpuscope::cli
