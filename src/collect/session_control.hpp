// session_control: the files through which `gpuscope start` / `gpuscope stop` reach the
// collectors of a program started by `gpuscope launch --session NAME` (as `nsys launch`,
// `nsys start`, `nsys stop`).
//
// A session is a folder (session_dir()): 'info' (written by the launcher: name, pids, output,
// command; cli/session_info.hpp), 'control' (one line "GENERATION start|stop", written by
// start/stop) and one 'ack.PID' per traced process (the same line, written by that process's
// collector once it applied the command and, after a stop, once the window's records are in
// its event log). The collector reads 'control' from its writer thread every 100 ms at most:
// no signal reaches the target.
//
// The state is private to the user (store/private_dir.hpp): the root and every session folder
// are mode 0700, owned by the effective uid, not links, checked before each use; files are
// created O_CREAT|O_EXCL|O_NOFOLLOW mode 0600 and renamed within their folder; a file is read
// only when it is a regular file of the effective uid. Anything else is refused with a message
// naming the path and the fix, never used.
//
// Pure file I/O, no CUPTI: linked into the collector and the CLI; throws nothing of its own.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/private_dir.hpp"

namespace gpuscope::collect {

/// One command of the control file, or one acknowledgement.
struct SessionCommand {
  std::uint64_t generation = 0;  // 1, 2, ...: each start or stop takes the next number
  bool start = false;            // start (open a capture window) or stop (close it)
};

/// "GENERATION start|stop\n".
[[nodiscard]] std::string format_session_command(const SessionCommand& command);
/// Parses format_session_command's line exactly ("GENERATION start|stop", one optional
/// newline; GENERATION 1..10^18 in decimal, no sign); std::nullopt when it is not one.
[[nodiscard]] std::optional<SessionCommand> parse_session_command(std::string_view text);

/// Reads and parses a control or ack file (std::nullopt: missing, empty, malformed or unsafe).
/// `status`, when given, says why a file could not be read (kMissing when absent; kUnsafe for
/// a link, a file of another user, a folder that is not private); a malformed file reads as ok
/// with std::nullopt.
[[nodiscard]] std::optional<SessionCommand> read_session_file(const std::filesystem::path& path,
                                                              store::PrivateStatus* status = nullptr);

/// Writes `text` as `path` in its session folder (store::write_private_file: the folder is
/// checked, the file created 0600 with O_EXCL|O_NOFOLLOW and renamed in), so a reader sees the
/// old or the new content, never a part, and a planted link is never followed.
[[nodiscard]] store::PrivateStatus write_session_file(const std::filesystem::path& path, std::string_view text);

/// Reads `path` from its session folder under the same rules (at most `max_bytes`).
[[nodiscard]] store::PrivateRead read_session_text(const std::filesystem::path& path, std::size_t max_bytes);

/// The folder holding every session: $GPUSCOPE_SESSIONS_DIR, else
/// ${XDG_RUNTIME_DIR:-/tmp}/gpuscope-sessions-UID (UID: the effective uid).
[[nodiscard]] std::filesystem::path sessions_root();
/// sessions_root() / NAME.
[[nodiscard]] std::filesystem::path session_dir(const std::string& name);

/// For launch: creates sessions_root() (mkdir 0700; the folders above it as usual when
/// GPUSCOPE_SESSIONS_DIR names a new path) and checks it (store::check_private_dir).
[[nodiscard]] store::PrivateStatus prepare_sessions_root();
/// Checks sessions_root() without creating it (kMissing: no session was ever launched).
[[nodiscard]] store::PrivateStatus check_sessions_root();
/// Checks a session folder (mode 0700, owner, not a link), for start, stop and sessions.
[[nodiscard]] store::PrivateStatus check_session_folder(const std::filesystem::path& dir);
/// The fix given for an unsafe folder: for the root, "remove it, or set XDG_RUNTIME_DIR ...";
/// for a session folder, "remove it".
[[nodiscard]] std::string unsafe_folder_fix(const std::filesystem::path& dir);

/// A session name: 1-64 characters of [A-Za-z0-9._-], not starting with '.'. Returns the
/// reason it is not one, or "" when it is.
[[nodiscard]] std::string session_name_problem(const std::string& name);

/// The acknowledgements in `dir` ('ack.PID' files): pid and command. Unsafe or malformed
/// files are left out.
struct SessionAck {
  std::uint32_t pid = 0;
  SessionCommand command;
};
[[nodiscard]] std::vector<SessionAck> read_session_acks(const std::filesystem::path& dir);

}  // namespace gpuscope::collect
