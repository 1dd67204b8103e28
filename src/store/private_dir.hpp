// private_dir: state that belongs to one user and that other users must neither read nor
// change — the folders and files of `gpuscope launch --session` (collect/session_control.hpp)
// — kept the way tmux and ssh-agent keep theirs.
//
// A private folder is created with mkdir(2) mode 0700 and, before every use, opened with
// O_DIRECTORY|O_NOFOLLOW and checked with fstat(2): a folder (not a symbolic link), owned by
// the effective uid, mode exactly 0700 (rwx for the owner, no group or other bit). tmux
// refuses "directory /tmp/tmux-UID has unsafe permissions" in the same case.
//
// Files in it are written through a temporary file ".NAME.tmp.XXXXXX" (six random characters)
// created relative to the checked folder's descriptor with O_CREAT|O_EXCL|O_NOFOLLOW, mode
// 0600, then renamed over NAME within the same folder: a symbolic link planted under any name
// is replaced, never followed, and a reader sees the old or the new content, never a part.
// Files are read relative to the checked folder with O_NOFOLLOW|O_NONBLOCK and kept only when
// they are regular files owned by the effective uid.
//
// No exception of its own (only std::bad_alloc), no output: every outcome is a PrivateStatus
// whose message names the path and says what is wrong, and whose fix says what to do. Safe to
// call inside a traced program (the collector). POSIX file calls only.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace gpuscope::store {

/// What went wrong with a private folder or file.
enum class PrivateProblem {
  kNone,
  kMissing,  // the folder or file does not exist (ENOENT)
  kDenied,   // the system refused (EACCES, EPERM), or the folder belongs to another user who
             // keeps it closed (no group or other bit): someone else's private state
  kUnsafe,   // a symbolic link, not a folder or regular file, another owner, or group/other bits
  kFailed,   // any other system error (ENOSPC, EIO, ...), or a file larger than allowed
};

/// The outcome of a private_dir call; ok() when problem is kNone (message and fix empty).
struct PrivateStatus {
  PrivateProblem problem = PrivateProblem::kNone;
  std::string message;  // "directory PATH has unsafe permissions (owner 1001, mode 0777)"
  std::string fix;      // "remove it, or set XDG_RUNTIME_DIR"
  [[nodiscard]] bool ok() const { return problem == PrivateProblem::kNone; }
};

/// Creates `dir` with mkdir(2) mode 0700 when it is absent (its parent must exist; an existing
/// `dir` is not changed), then checks it as check_private_dir does. `unsafe_fix` is the fix
/// given when the folder is unsafe (e.g. "remove it, or set XDG_RUNTIME_DIR").
[[nodiscard]] PrivateStatus make_private_dir(const std::filesystem::path& dir, std::string_view unsafe_fix);

/// `mkdir -p` whose new folders are mode 0700 (mkdir(2) per missing component; folders that
/// exist are left as they are, not checked). For caches under $XDG_CACHE_HOME/gpuscope, which
/// the PyTorch observer's build folder shares (collect/python/sitecustomize.py). Sets ec (and
/// returns false) on the first mkdir that fails other than with EEXIST.
[[nodiscard]] bool create_directories_0700(const std::filesystem::path& dir, std::error_code& ec);

/// Checks `dir`: a folder, not a symbolic link, owned by geteuid(), mode & 07777 == 0700.
/// kMissing when absent; kDenied when the system refuses or the folder is another user's and
/// closed to others (mode without group/other bits); kUnsafe otherwise.
[[nodiscard]] PrivateStatus check_private_dir(const std::filesystem::path& dir, std::string_view unsafe_fix);

/// Writes `content` as `dir`/`name` (name: one path component) after check_private_dir(dir):
/// temporary file with O_CREAT|O_EXCL|O_NOFOLLOW mode 0600 in the checked folder, renamed
/// over `name` within it (see the file comment). On failure the temporary file is removed and
/// `name` is untouched.
[[nodiscard]] PrivateStatus write_private_file(const std::filesystem::path& dir, std::string_view name,
                                               std::string_view content, std::string_view unsafe_fix);

/// The same file creation in a folder that is not private (a trace's log folder, which other
/// users may be allowed to read): `dir` is opened with O_DIRECTORY|O_NOFOLLOW but its owner
/// and mode are not checked; the new file is mode 0600 and a link planted as `name` or as a
/// temporary name is replaced, not followed.
[[nodiscard]] PrivateStatus write_new_file(const std::filesystem::path& dir, std::string_view name,
                                           std::string_view content);

/// Reads `dir`/`name` after check_private_dir(dir): opened with O_NOFOLLOW|O_NONBLOCK relative
/// to the checked folder; kUnsafe when it is a symbolic link, not a regular file, or not owned
/// by geteuid(); kFailed when it holds more than `max_bytes`.
struct PrivateRead {
  PrivateStatus status;
  std::string content;  // the whole file when status.ok()
};
[[nodiscard]] PrivateRead read_private_file(const std::filesystem::path& dir, std::string_view name,
                                            std::size_t max_bytes, std::string_view unsafe_fix);

}  // namespace gpuscope::store
