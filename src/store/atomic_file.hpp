// atomic_file: how gpuscope writes every file (traces, exports, reports, SVG charts, machine
// profiles, bench and kernels results), so that a reader finds either the file that was
// there before or the complete new one — never half a file — and an existing file is
// replaced only when the user asked for it (the CLI's --force-overwrite, -f).
//
// How: the content goes to a temporary file in the target's folder, ".NAME.tmp.XXXXXX"
// (mkstemp(3): unique, mode 0600 while written), which is flushed, fsync(2)ed, given the mode
// a new file gets (0666 less the umask) or the mode of the file it replaces, and renamed over
// NAME (rename(2) is atomic within one file system; the folder is fsync'd after). Without
// Overwrite::kReplace the rename is renameat2(RENAME_NOREPLACE) (link(2) + unlink where the
// file system lacks it), so a file that appeared while gpuscope worked is not replaced either.
//
// On any failure — the writer throws, a write or fsync fails (ENOSPC, EFBIG, EIO), the
// rename fails, the caller drops an AtomicFile without commit() — the temporary file is
// removed and NAME is untouched, byte for byte; the error is thrown. A process killed by a
// signal that remove_temporary_files_on_signals() covers removes its temporary files too;
// after SIGKILL the hidden temporary file stays (NAME is still untouched).
//
// Special cases: a symbolic link is followed (the file it names is replaced, the link kept);
// an existing character device, FIFO or socket (-o /dev/stdout) is written directly by
// write_file_atomically (no file is replaced, so no -f is needed) and refused by AtomicFile;
// a folder is refused.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuscope::store {

/// Whether an existing file at the target may be replaced.
enum class Overwrite { kRefuse, kReplace };

/// kReplace when `force` (the CLI's --force-overwrite / -f), else kRefuse.
[[nodiscard]] constexpr Overwrite overwrite_if(bool force) { return force ? Overwrite::kReplace : Overwrite::kRefuse; }

/// A file could not be written; what() names the file, the reason (strerror) and whether the
/// old file was kept ("PATH is unchanged") or nothing was written.
class FileWriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The target exists and Overwrite::kRefuse was given: "PATH already exists; use
/// --force-overwrite (-f) to replace it".
class OutputExistsError : public FileWriteError {
 public:
  explicit OutputExistsError(const std::filesystem::path& path);
  [[nodiscard]] const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

/// The overwrite rule alone, for commands that check their outputs before long work (a GPU
/// run, an import): throws OutputExistsError when `path` exists and `overwrite` is kRefuse,
/// FileWriteError when it is a folder or empty. Special files pass (see the file comment).
void check_output(const std::filesystem::path& path, Overwrite overwrite);

/// A temporary file that becomes `target` on commit(); for writers that need a path or a file
/// descriptor (SQLite opens temp_path() itself). Dropped without commit(): removed.
class AtomicFile {
 public:
  /// Checks the rule (check_output) and creates the temporary file; throws OutputExistsError,
  /// or FileWriteError when the target is a special file or the folder is not writable.
  AtomicFile(std::filesystem::path target, Overwrite overwrite);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// The file the writer fills ("DIR/.NAME.tmp.XXXXXX").
  [[nodiscard]] const std::filesystem::path& temp_path() const { return m_temp; }
  /// The file commit() replaces (symbolic links resolved).
  [[nodiscard]] const std::filesystem::path& target() const { return m_target; }
  /// The temporary file's descriptor, open for reading and writing until commit()/discard().
  [[nodiscard]] int fd() const { return m_fd; }

  /// fsync, mode, rename into place (see the file comment). Anyone else writing temp_path()
  /// (a SQLite connection) must have closed it. Throws OutputExistsError (a file appeared
  /// meanwhile under kRefuse) or FileWriteError; either way the temporary file is gone.
  void commit();
  /// Removes the temporary file now (also done by the destructor). Idempotent.
  void discard() noexcept;

 private:
  std::filesystem::path m_target;
  std::filesystem::path m_temp;
  Overwrite m_overwrite;
  int m_fd = -1;
  int m_slot = -1;  // in the signal-cleanup registry
  bool m_done = false;
};

/// Writes the file through `write`, which gets a binary stream with badbit exceptions on
/// (the first failed write throws out of it, so it stops early). Errors as AtomicFile; an
/// exception thrown by `write` (other than the stream's own) propagates unchanged, after the
/// temporary file is removed.
void write_file_atomically(const std::filesystem::path& path, Overwrite overwrite,
                           const std::function<void(std::ostream&)>& write);

/// Writes `content` to `path` (the same rules).
void write_file_atomically(const std::filesystem::path& path, Overwrite overwrite, std::string_view content);

/// Installs handlers for SIGINT, SIGTERM, SIGHUP and SIGQUIT that remove the temporary files
/// of unfinished AtomicFiles (and registered lock files) and then die of the same signal, as
/// the default action would. For main(); handlers set later by others are left alone.
void remove_temporary_files_on_signals();

namespace detail {
/// ".NAME.tmp." for target DIR/NAME (NAME shortened to fit NAME_MAX): the temporary files'
/// names are this and six random characters.
[[nodiscard]] std::string temp_prefix(const std::filesystem::path& target);
/// The signal-cleanup registry (16 paths at a time; a path that does not fit is not
/// registered). register_for_cleanup returns a slot, or -1; release_cleanup(-1) does nothing.
int register_for_cleanup(const std::filesystem::path& path) noexcept;
void release_cleanup(int slot) noexcept;
}  // namespace detail

}  // namespace gpuscope::store
