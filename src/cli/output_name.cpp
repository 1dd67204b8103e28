#include "cli/output_name.hpp"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace gpuscope::cli {
namespace {

[[nodiscard]] std::string safe_for_a_file_name(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    out.push_back(ok ? c : '_');
  }
  return out;
}

}  // namespace

std::string expand_output_name(std::string_view pattern, const OutputNameContext& context) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out.push_back(pattern[i]);
      continue;
    }
    const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (next == '%') {
      out.push_back('%');
      ++i;
    } else if (next == 'h') {
      out += safe_for_a_file_name(context.host.empty() ? "host" : context.host);
      ++i;
    } else if (next == 'p') {
      out += std::to_string(context.pid);
      ++i;
    } else if (next == 'q') {
      const std::size_t close = pattern.find('}', i);
      if (i + 2 >= pattern.size() || pattern[i + 2] != '{' || close == std::string_view::npos || close == i + 3) {
        throw std::invalid_argument("-o " + std::string(pattern) +
                                    ": %q needs a variable name in braces, e.g. %q{SLURM_PROCID}");
      }
      const std::string name(pattern.substr(i + 3, close - i - 3));
      const char* value = context.getenv ? context.getenv(name.c_str()) : nullptr;
      if (value == nullptr || *value == '\0') {
        throw std::invalid_argument("-o " + std::string(pattern) + ": %q{" + name +
                                    "} names an environment variable that is not set here; set it, or use %h "
                                    "(host) or %p (pid)");
      }
      out += safe_for_a_file_name(value);
      i = close;
    } else {
      throw std::invalid_argument("-o " + std::string(pattern) + ": '%" + std::string(next ? 1 : 0, next) +
                                  "' is not a pattern; use %h (host), %p (pid), %q{VAR} (environment) or %% (a %)");
    }
  }
  return out;
}

std::string expand_output_name(std::string_view pattern) {
  if (pattern.find('%') == std::string_view::npos) return std::string(pattern);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return expand_output_name(
      pattern, {host, static_cast<long>(::getpid()), [](const char* n) -> const char* { return std::getenv(n); }});
}

}  // namespace gpuscope::cli
