#include "cli/session_info.hpp"

#include "collect/session_control.hpp"

namespace gpuscope::cli {

std::string format_session_info(const SessionInfo& info) {
  const auto one_line = [](std::string s) {
    for (char& c : s)
      if (c == '\n' || c == '\r') c = ' ';
    return s;
  };
  return "name=" + one_line(info.name) + "\nlauncher_pid=" + std::to_string(info.launcher_pid) +
         "\noutput=" + one_line(info.output) + "\nlog_dir=" + one_line(info.log_dir) +
         "\ncommand=" + one_line(info.command) + "\nstarted=" + one_line(info.started) + "\n";
}

std::optional<SessionInfo> parse_session_info(std::string_view text) {
  SessionInfo info;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "name") info.name = value;
    if (key == "output") info.output = value;
    if (key == "log_dir") info.log_dir = value;
    if (key == "command") info.command = value;
    if (key == "started") info.started = value;
    if (key == "launcher_pid") {
      long pid = 0;
      const bool digits = !value.empty() && value.size() <= 10;
      for (const char c : value) {
        if (!digits || c < '0' || c > '9') {
          pid = 0;
          break;
        }
        pid = pid * 10 + (c - '0');
      }
      info.launcher_pid = digits && pid <= 2147483647L ? pid : 0;
    }
  }
  if (info.launcher_pid <= 0) return std::nullopt;
  return info;
}

store::PrivateStatus write_session_info(const std::filesystem::path& dir, const SessionInfo& info) {
  return collect::write_session_file(dir / "info", format_session_info(info));
}

std::optional<SessionInfo> read_session_info(const std::filesystem::path& dir, store::PrivateStatus* status) {
  store::PrivateStatus local;
  store::PrivateStatus& st = status != nullptr ? *status : local;
  // The root first: a session folder in a root another user can write is not trusted.
  st = dir.has_parent_path()
           ? store::check_private_dir(dir.parent_path(), collect::unsafe_folder_fix(dir.parent_path()))
           : store::PrivateStatus{};
  if (!st.ok()) return std::nullopt;
  store::PrivateRead r = collect::read_session_text(dir / "info", kMaxSessionInfoBytes);
  st = r.status;
  if (!st.ok()) return std::nullopt;
  auto info = parse_session_info(r.content);
  if (!info) st = {store::PrivateProblem::kMissing, (dir / "info").string() + " names no launcher pid", ""};
  return info;
}

}  // namespace gpuscope::cli
