// launch_selector: which kernel launches `gpuscope kernels` profiles, as ncu chooses them
// (-k/--kernel-name regex:, --launch-skip, --launch-count). Pure logic, no CUPTI call;
// unit-tested in tests/unit/collect.
//
// Every launch gets a 0-based launch_index (all launches of the process). A launch
// matches when it is eligible (inside the --nvtx-include range, decided by the caller) and the regex (ECMAScript,
// searched, not anchored) is found in its demangled name or its base name (store/kernel_names.hpp); an empty regex
// matches every kernel. Among matching launches, the first `skip` are skipped and the next `count` (0 = all) are
// profiled. Not thread-safe: the caller serialises calls.
//
// Errors: the constructor throws std::regex_error for an invalid regex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpuscope::collect {

class LaunchSelector {
 public:
  LaunchSelector(const std::string& regex, std::uint64_t skip, std::uint64_t count);

  struct Decision {
    std::uint64_t launch_index = 0;
    bool profile = false;
  };
  /// Decides for the next launch of the kernel whose (mangled) name is `name`.
  /// `eligible` false (outside the --nvtx-include range) makes it a non-match.
  Decision next(std::string_view name, bool eligible = true);

  /// True when `count` launches were profiled: nothing more will be.
  [[nodiscard]] bool done() const { return m_count != 0 && m_profiled >= m_count; }
  [[nodiscard]] std::uint64_t launches() const { return m_launches; }
  [[nodiscard]] std::uint64_t matched() const { return m_matched; }
  [[nodiscard]] std::uint64_t profiled() const { return m_profiled; }
  /// Base names of the kernels seen, first-seen order, at most 20 (for "matched nothing").
  [[nodiscard]] const std::vector<std::string>& names_seen() const { return m_names_seen; }

 private:
  bool matches(std::string_view name);

  bool m_all;
  std::regex m_regex;
  std::uint64_t m_skip, m_count;
  std::uint64_t m_launches = 0, m_matched = 0, m_profiled = 0;
  // Runs on every launch of the traced program: looked up without building a string.
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, bool, Hash, std::equal_to<>> m_cache;  // mangled name -> matches
  std::vector<std::string> m_names_seen;
};

}  // namespace gpuscope::collect
