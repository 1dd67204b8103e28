// session_control: the files through which `gpuscope start` / `gpuscope stop` reach the
// collectors of a program started by `gpuscope launch --session NAME` (as `nsys launch`,
// `nsys start`, `nsys stop`).
//
// A session is a folder (session_dir()): 'session.json' (written by the launcher: name,
// pids, output, command), 'control' (one line "GENERATION start|stop", written by start/stop,
// replaced atomically: write a temporary file, rename it) and one 'ack.PID' per traced
// process (the same line, written by that process's collector once it applied the command
// and, after a stop, once the window's records are in its event log). The collector reads
// 'control' from its writer thread every 100 ms at most: no signal reaches the target.
//
// Pure file I/O, no CUPTI: linked into the collector and the CLI. Errors: the readers return
// std::nullopt for a missing or malformed file; write_line_atomically returns false (errno
// kept) when the folder cannot be written.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gpuscope::collect {

/// One command of the control file, or one acknowledgement.
struct SessionCommand {
  std::uint64_t generation = 0;  // 1, 2, ...: each start or stop takes the next number
  bool start = false;            // start (open a capture window) or stop (close it)
};

/// "GENERATION start|stop\n".
[[nodiscard]] std::string format_session_command(const SessionCommand& command);
/// Parses format_session_command's line; std::nullopt when it is not one.
[[nodiscard]] std::optional<SessionCommand> parse_session_command(const std::string& text);

/// Reads and parses a control or ack file (std::nullopt: missing, empty or malformed).
[[nodiscard]] std::optional<SessionCommand> read_session_file(const std::filesystem::path& path);

/// Writes `text` to `path` through a temporary file in the same folder and rename(2), so a
/// reader sees the old or the new content, never a part. False when it cannot be written.
[[nodiscard]] bool write_line_atomically(const std::filesystem::path& path, const std::string& text);

/// The folder holding every session: $GPUSCOPE_SESSIONS_DIR, else
/// ${XDG_RUNTIME_DIR:-/tmp}/gpuscope-sessions-UID.
[[nodiscard]] std::filesystem::path sessions_root();
/// sessions_root() / NAME.
[[nodiscard]] std::filesystem::path session_dir(const std::string& name);

/// A session name: 1-64 characters of [A-Za-z0-9._-], not starting with '.'. Returns the
/// reason it is not one, or "" when it is.
[[nodiscard]] std::string session_name_problem(const std::string& name);

/// The acknowledgements in `dir` ('ack.PID' files): pid and command.
struct SessionAck {
  std::uint32_t pid = 0;
  SessionCommand command;
};
[[nodiscard]] std::vector<SessionAck> read_session_acks(const std::filesystem::path& dir);

}  // namespace gpuscope::collect
