#include "collect/session_control.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

namespace gpuscope::collect {

std::string format_session_command(const SessionCommand& command) {
  return std::to_string(command.generation) + (command.start ? " start\n" : " stop\n");
}

std::optional<SessionCommand> parse_session_command(const std::string& text) {
  std::istringstream in(text);
  std::uint64_t generation = 0;
  std::string what;
  if (!(in >> generation >> what) || generation == 0) return std::nullopt;
  if (what != "start" && what != "stop") return std::nullopt;
  return SessionCommand{generation, what == "start"};
}

std::optional<SessionCommand> read_session_file(const std::filesystem::path& path) {
  // Plain stdio: this runs in the traced process every 100 ms, and a control line is short.
  std::FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) return std::nullopt;
  char buf[64] = {};
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  return parse_session_command(std::string(buf, n));
}

bool write_line_atomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "we");
  if (f == nullptr) return false;
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    std::remove(tmp.c_str());
    errno = saved;
    return false;
  }
  return true;
}

std::filesystem::path sessions_root() {
  if (const char* dir = std::getenv("GPUSCOPE_SESSIONS_DIR"); dir != nullptr && *dir != '\0') return dir;
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  const std::filesystem::path base = runtime != nullptr && *runtime != '\0' ? runtime : "/tmp";
  return base / ("gpuscope-sessions-" + std::to_string(::getuid()));
}

std::filesystem::path session_dir(const std::string& name) { return sessions_root() / name; }

std::string session_name_problem(const std::string& name) {
  if (name.empty()) return "a session name cannot be empty";
  if (name.size() > 64) return "a session name has at most 64 characters";
  if (name[0] == '.') return "a session name cannot start with '.'";
  for (const char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return "a session name holds only letters, digits, '.', '_' and '-'";
  }
  return "";
}

std::vector<SessionAck> read_session_acks(const std::filesystem::path& dir) {
  std::vector<SessionAck> acks;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind("ack.", 0) != 0 || file.find(".tmp.") != std::string::npos) continue;
    char* end = nullptr;
    const unsigned long pid = std::strtoul(file.c_str() + 4, &end, 10);
    if (end == file.c_str() + 4 || *end != '\0') continue;
    if (auto command = read_session_file(entry.path())) acks.push_back({static_cast<std::uint32_t>(pid), *command});
  }
  return acks;
}

}  // namespace gpuscope::collect
