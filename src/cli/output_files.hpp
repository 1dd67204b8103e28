// output_files: the overwrite rule as every writing command states and checks it.
//
// Every file gpuscope writes goes through store/atomic_file.hpp: written beside the target
// as a hidden temporary file and renamed into place only when complete, so a failure half-way
// (disk full, a damaged trace, Ctrl-C) keeps the file that was there byte for byte. An
// existing file is replaced only with -f / --force-overwrite; without it the command refuses
// before any work (a GPU run, an import) and names the file and the flag.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace gpuscope::cli {

/// The one help text of -f/--force-overwrite.
inline constexpr const char* kForceOverwriteHelp =
    "Replace output files that already exist. Without it gpuscope keeps an existing file and stops\n"
    "before any work; with it the old file is replaced only once the new one is complete";

/// Adds -f,--force-overwrite (help: kForceOverwriteHelp) to `sub`.
CLI::Option* add_force_overwrite_flag(CLI::App& sub, bool& force);

/// store::check_output for each non-empty path (the overwrite rule, a folder refused); throws
/// store::OutputExistsError / store::FileWriteError naming the first bad one.
void check_outputs(const std::vector<std::string>& paths, bool force);

}  // namespace gpuscope::cli
