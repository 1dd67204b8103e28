#include "collect/session_control.hpp"

#include <unistd.h>

#include <cstdlib>
#include <system_error>

namespace gpuscope::collect {
namespace {
constexpr std::uint64_t kMaxGeneration = 1'000'000'000'000'000'000ull;  // 10^18: never reached

// The fix for an unsafe folder, made only when one is refused: the collector reads control
// every 100 ms and the common answer is fine.
void with_folder_fix(store::PrivateStatus& st, const std::filesystem::path& dir) {
  if (st.problem == store::PrivateProblem::kUnsafe && st.fix.empty()) st.fix = unsafe_folder_fix(dir);
}
}  // namespace

std::string format_session_command(const SessionCommand& command) {
  return std::to_string(command.generation) + (command.start ? " start\n" : " stop\n");
}

std::optional<SessionCommand> parse_session_command(std::string_view text) {
  if (text.ends_with('\n')) text.remove_suffix(1);
  const std::size_t space = text.find(' ');
  if (space == std::string_view::npos || space == 0 || space > 19) return std::nullopt;
  const std::string_view digits = text.substr(0, space), what = text.substr(space + 1);
  if (what != "start" && what != "stop") return std::nullopt;
  if (digits[0] == '0') return std::nullopt;  // generations start at 1, no leading zero
  std::uint64_t generation = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    generation = generation * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (generation > kMaxGeneration) return std::nullopt;
  return SessionCommand{generation, what == "start"};
}

store::PrivateRead read_session_text(const std::filesystem::path& path, std::size_t max_bytes) {
  const std::filesystem::path dir = path.parent_path();
  store::PrivateRead r = store::read_private_file(dir, path.filename().string(), max_bytes, {});
  with_folder_fix(r.status, dir);
  return r;
}

std::optional<SessionCommand> read_session_file(const std::filesystem::path& path, store::PrivateStatus* status) {
  // Runs in the traced process every 100 ms: a few system calls, a control line is short.
  store::PrivateRead r = read_session_text(path, 64);
  if (status != nullptr) *status = r.status;
  if (!r.status.ok()) return std::nullopt;
  return parse_session_command(r.content);
}

store::PrivateStatus write_session_file(const std::filesystem::path& path, std::string_view text) {
  const std::filesystem::path dir = path.parent_path();
  store::PrivateStatus st = store::write_private_file(dir, path.filename().string(), text, {});
  with_folder_fix(st, dir);
  return st;
}

std::filesystem::path sessions_root() {
  if (const char* dir = std::getenv("GPUSCOPE_SESSIONS_DIR"); dir != nullptr && *dir != '\0') return dir;
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  const std::filesystem::path base = runtime != nullptr && *runtime != '\0' ? runtime : "/tmp";
  return base / ("gpuscope-sessions-" + std::to_string(::geteuid()));
}

std::string unsafe_folder_fix(const std::filesystem::path& dir) {
  const std::filesystem::path root = sessions_root();
  if (dir.lexically_normal() != root.lexically_normal()) return "remove it (rm -r " + dir.string() + ")";
  const char* env = std::getenv("GPUSCOPE_SESSIONS_DIR");
  const bool moved = env != nullptr && *env != '\0';
  return "remove it, or set " + std::string(moved ? "GPUSCOPE_SESSIONS_DIR" : "XDG_RUNTIME_DIR") +
         " to a folder of your own";
}

store::PrivateStatus prepare_sessions_root() {
  const std::filesystem::path root = sessions_root();
  std::error_code ec;
  if (root.has_parent_path() && !std::filesystem::exists(root.parent_path(), ec))
    std::filesystem::create_directories(root.parent_path(), ec);  // a new GPUSCOPE_SESSIONS_DIR path
  return store::make_private_dir(root, unsafe_folder_fix(root));
}

store::PrivateStatus check_sessions_root() {
  const std::filesystem::path root = sessions_root();
  return store::check_private_dir(root, unsafe_folder_fix(root));
}

store::PrivateStatus check_session_folder(const std::filesystem::path& dir) {
  return store::check_private_dir(dir, unsafe_folder_fix(dir));
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
    if (end == file.c_str() + 4 || *end != '\0' || pid > UINT32_MAX) continue;
    if (auto command = read_session_file(entry.path())) acks.push_back({static_cast<std::uint32_t>(pid), *command});
  }
  return acks;
}

}  // namespace gpuscope::collect
