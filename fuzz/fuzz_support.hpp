// What the libFuzzer harnesses of fuzz/ share: a scratch folder for the files a reader
// takes by path, and the one way a harness reports an exception the reader does not
// document (the error contract in the reader's header).
//
// A harness fails only on a crash, a sanitizer report, a hang (libFuzzer's -timeout), a
// memory blow-up (-rss_limit_mb) or an undocumented exception. Documented errors (the
// reader's error type, with its message) are the reader doing its job; the harness
// checks that their message is not empty and goes on.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <typeinfo>

namespace gpuscope::fuzz {

/// A folder of this process's own, on tmpfs (/dev/shm) where there is one, else in the
/// temp folder; removed when the process exits normally.
inline const std::filesystem::path& scratch_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() {
      std::filesystem::path base = "/dev/shm";
      std::error_code ec;
      if (!std::filesystem::is_directory(base, ec) || ::access(base.c_str(), W_OK) != 0) {
        base = std::filesystem::temp_directory_path();
      }
      std::string tmpl = (base / "gpuscope_fuzz_XXXXXX").string();
      if (::mkdtemp(tmpl.data()) == nullptr) {
        std::perror("gpuscope fuzz: mkdtemp");
        std::abort();
      }
      path = tmpl;
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

/// Writes `size` bytes to `path`, replacing it (aborts when it cannot: a broken harness).
inline void write_bytes(const std::filesystem::path& path, const std::uint8_t* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::fprintf(stderr, "gpuscope fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
}

/// A documented error: fine, but its message must say something.
inline void documented(const std::exception& e) {
  if (std::string_view(e.what()).empty()) {
    std::fprintf(stderr, "gpuscope fuzz: a documented error (%s) with an empty message\n", typeid(e).name());
    std::abort();
  }
}

/// An exception the reader does not document, or a broken invariant: a finding. Prints it
/// and aborts, which libFuzzer records as a crash with the input that caused it.
[[noreturn]] inline void finding(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "gpuscope fuzz: %.*s: %.*s\n", static_cast<int>(what.size()), what.data(),
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}
[[noreturn]] inline void undocumented(const std::exception& e) {
  finding(std::string("undocumented exception ") + typeid(e).name(), e.what());
}

}  // namespace gpuscope::fuzz
