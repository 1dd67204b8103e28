// session_info: the 'info' file of a `gpuscope launch --session NAME` folder — what start,
// stop, sessions and `bench serve --session` learn about the session (launcher pid, trace,
// log folder, command). Key=value lines, one per field, written by launch.
//
// The file lives in the user's private session folder (collect/session_control.hpp): it is
// written 0600 through store::write_private_file and read only when the root, the session
// folder and the file pass the checks of store/private_dir.hpp (owner, mode, no link).
// parse_session_info is pure and total (fuzz/fuzz_session_files.cpp feeds it any bytes).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "store/private_dir.hpp"

namespace gpuscope::cli {

/// The session's facts, written by launch into the session folder's 'info' file.
struct SessionInfo {
  std::string name;
  long launcher_pid = 0;  // gpuscope launch itself
  std::string output;     // the trace launch writes at exit (NAME.sqlite)
  std::string log_dir;    // the collectors' event logs (NAME.logs/)
  std::string command;
  std::string started;  // ISO 8601
};

/// The most bytes an info file may hold (a command line of a megabyte fits).
inline constexpr std::size_t kMaxSessionInfoBytes = 1 << 20;

/// "name=...\nlauncher_pid=...\noutput=...\nlog_dir=...\ncommand=...\nstarted=...\n"; line
/// breaks inside a value become spaces.
[[nodiscard]] std::string format_session_info(const SessionInfo& info);
/// Parses format_session_info's text: unknown keys and lines without '=' are skipped, the last
/// of a repeated key wins. std::nullopt when launcher_pid is missing or not a decimal pid in
/// 1..2^31-1. Never throws (but std::bad_alloc).
[[nodiscard]] std::optional<SessionInfo> parse_session_info(std::string_view text);

/// Writes `info` into `dir`/info (atomically, 0600, the folder checked).
[[nodiscard]] store::PrivateStatus write_session_info(const std::filesystem::path& dir, const SessionInfo& info);
/// Reads `dir`/info after checking the folder above `dir` (the sessions root), `dir` and the
/// file. std::nullopt when it is missing, unsafe or names no launcher pid; `status`, when
/// given, says which (kMissing: no such session; a malformed file reads as kMissing too).
[[nodiscard]] std::optional<SessionInfo> read_session_info(const std::filesystem::path& dir,
                                                           store::PrivateStatus* status = nullptr);

}  // namespace gpuscope::cli
