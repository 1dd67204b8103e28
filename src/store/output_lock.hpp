// output_lock: one gpuscope process at a time writes a given trace. `gpuscope trace -o run`,
// `gpuscope kernels -o run` and `gpuscope import ... -o run` hold run.sqlite.lock from their
// start to their end; a second one with the same name refuses at once, naming the first
// one's pid, instead of both filling run.logs/ and racing for run.sqlite.
//
// The lock is flock(2) on the lock file, which holds "PID HOST" for the message. The kernel
// drops a flock when its holder exits or is killed, so a crashed gpuscope never blocks a
// later run: the file it left is taken over at once. Where the file system has no flock
// (some network and FUSE file systems) the pid decides: a lock file whose pid is not a live
// process on this host is stale and replaced. The holder removes the file when it is done
// (also on SIGINT/SIGTERM/SIGHUP/SIGQUIT under store::remove_temporary_files_on_signals).
#pragma once

#include <filesystem>
#include <string>

#include "store/atomic_file.hpp"

namespace gpuscope::store {

/// Another live process holds the lock: "run.sqlite is being written by another gpuscope
/// (pid 123 on HOST; lock run.sqlite.lock)".
class OutputBusyError : public FileWriteError {
 public:
  using FileWriteError::FileWriteError;
};

class OutputLock {
 public:
  /// Takes the lock of `target` (the file target + ".lock"); throws OutputBusyError when a
  /// live process holds it, FileWriteError when the lock file cannot be created.
  explicit OutputLock(const std::filesystem::path& target);
  ~OutputLock();  // removes the lock file and drops the lock
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return m_path; }

  /// Removes the temporary files (".NAME.tmp.*", store/atomic_file.hpp) that writers of the
  /// target killed by SIGKILL left: under the lock nobody else is writing one. Returns how
  /// many were removed.
  int remove_stale_temporaries() const;

 private:
  std::filesystem::path m_target;
  std::filesystem::path m_path;
  int m_fd = -1;
  int m_slot = -1;
};

}  // namespace gpuscope::store
