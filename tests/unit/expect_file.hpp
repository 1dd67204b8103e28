// Test helper for text diff tests: compare what a test produced with an expected file
// under tests/expected/, or rewrite that file when GPUSCOPE_REWRITE_EXPECTED=1 (after a
// deliberate change of an output; review `git diff tests/expected` before committing).
// Needs GPUSCOPE_SOURCE_DIR (the source tree) defined.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace gpuscope::test {

/// True when the expected files are being rewritten (GPUSCOPE_REWRITE_EXPECTED=1).
[[nodiscard]] inline bool rewriting_expected() {
  const char* v = std::getenv("GPUSCOPE_REWRITE_EXPECTED");
  return v != nullptr && std::string(v) == "1";
}

/// EXPECTs `actual` to equal tests/expected/RELATIVE byte for byte; on a mismatch the
/// failure shows the first differing line of each. Rewrites the file instead when
/// rewriting_expected(); a missing file is a failure that says how to create it.
inline void expect_matches_file(const std::string& actual, const std::string& relative) {
  namespace fs = std::filesystem;
  const fs::path path = fs::path(GPUSCOPE_SOURCE_DIR) / "tests" / "expected" / relative;
  if (rewriting_expected()) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << path << " is missing; run the test with GPUSCOPE_REWRITE_EXPECTED=1 to create it";
    return;
  }
  const std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (expected == actual) return;
  std::istringstream e(expected), a(actual);
  std::string el, al;
  int line = 0;
  while (true) {
    ++line;
    const bool more_e = static_cast<bool>(std::getline(e, el));
    const bool more_a = static_cast<bool>(std::getline(a, al));
    if (!more_e && !more_a) break;
    if (!more_e || !more_a || el != al) {
      ADD_FAILURE() << path << " differs at line " << line << "\n  expected: " << (more_e ? el : "(end of file)")
                    << "\n  actual:   " << (more_a ? al : "(end of output)")
                    << "\n(GPUSCOPE_REWRITE_EXPECTED=1 rewrites the file after a deliberate change)";
      return;
    }
  }
  ADD_FAILURE() << path << " differs (line endings?)";
}

}  // namespace gpuscope::test
