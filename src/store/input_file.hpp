// input_file: the one way gpuscope opens a file it reads (event logs, run.json, machine
// profiles, bench results, traces, torch-memory and requests files, calibration caches,
// prompts): it never blocks, and only a regular file is read.
//
// The file is opened O_RDONLY | O_NONBLOCK | O_CLOEXEC, then fstat'ed on the open descriptor
// (no window between the check and the use): a FIFO, socket, device or folder is refused with
// a message naming the file and what it is. Without O_NONBLOCK, opening a FIFO for reading
// waits for a writer forever (`gpuscope import` of a folder whose run.json was a FIFO hung);
// O_NONBLOCK does not change reads of a regular file.
//
// Errors are returned, never thrown: an InputFile that is not ok() carries error(), one
// sentence such as "cannot open the run description /x/run.json: Permission denied" or
// "/x/run.json is a FIFO, not a regular file: a run description is read only from a regular
// file (nothing was read, so nothing waits on it)".
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::store {

class [[nodiscard]] InputFile {
 public:
  /// Opens `path` as described in the file comment. `noun` names what the file is for the
  /// messages ("event log", "run description", "machine profile").
  static InputFile open(const std::filesystem::path& path, std::string_view noun);

  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  [[nodiscard]] bool ok() const { return m_fd >= 0; }
  /// Why it could not be opened ("" when ok()).
  [[nodiscard]] const std::string& error() const { return m_error; }
  /// The file exists but is not a regular file (a FIFO, a folder, ...): refused, not missing.
  [[nodiscard]] bool not_regular() const { return m_not_regular; }
  /// The open descriptor (-1 when not ok()); owned by this object.
  [[nodiscard]] int fd() const { return m_fd; }
  /// The file's size in bytes when it was opened (fstat).
  [[nodiscard]] std::uint64_t size() const { return m_size; }

  /// Reads the rest of the file into `out`. Returns false and sets error() on a read error.
  [[nodiscard]] bool read_all(std::string& out);

 private:
  InputFile() = default;
  int m_fd = -1;
  std::uint64_t m_size = 0;
  bool m_not_regular = false;
  std::string m_path;
  std::string m_noun;
  std::string m_error;
};

/// The whole regular file `path`, or nullopt with `error` set (InputFile's wording).
[[nodiscard]] std::optional<std::string> read_input_file(const std::filesystem::path& path, std::string_view noun,
                                                         std::string& error);

/// "a FIFO", "a socket", "a folder", "a device", "a symbolic link", "a special file": what a
/// file of st_mode `mode` is, for messages.
[[nodiscard]] std::string_view file_kind_text(unsigned mode);

}  // namespace gpuscope::store
