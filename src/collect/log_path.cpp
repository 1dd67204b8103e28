#include "collect/log_path.hpp"

namespace gpuscope::collect {

std::string log_file_path(std::string_view dir, std::string_view host, std::uint32_t pid, unsigned attempt) {
  std::string safe_host;
  for (char c : host) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    safe_host.push_back(ok ? c : '_');
  }
  if (safe_host.empty()) safe_host = "host";
  std::string path(dir);
  if (path.empty() || path.back() != '/') path.push_back('/');
  path += safe_host;
  path += '-';
  path += std::to_string(pid);
  if (attempt > 0) {
    path += '-';
    path += std::to_string(attempt);
  }
  path += ".gslog";
  return path;
}

}  // namespace gpuscope::collect
