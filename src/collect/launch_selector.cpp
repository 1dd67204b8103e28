#include "collect/launch_selector.hpp"

#include "store/kernel_names.hpp"

namespace gpuscope::collect {

LaunchSelector::LaunchSelector(const std::string& regex, std::uint64_t skip, std::uint64_t count)
    : m_all(regex.empty()),
      m_regex(regex.empty() ? std::string(".") : regex, std::regex::ECMAScript),
      m_skip(skip),
      m_count(count) {}

bool LaunchSelector::matches(std::string_view name) {
  const auto it = m_cache.find(name);
  if (it != m_cache.end()) return it->second;
  const std::string demangled = store::demangle(name);
  const std::string base = store::base_name(demangled);
  if (m_names_seen.size() < 20) m_names_seen.push_back(base);
  const bool match = m_all || std::regex_search(demangled, m_regex) || std::regex_search(base, m_regex);
  m_cache.emplace(std::string(name), match);
  return match;
}

LaunchSelector::Decision LaunchSelector::next(std::string_view name, bool eligible) {
  Decision d;
  d.launch_index = m_launches++;
  if (done()) return d;
  const bool match = matches(name);  // first: the name is seen either way
  if (!eligible || !match) return d;
  const std::uint64_t nth = m_matched++;
  if (nth < m_skip) return d;
  d.profile = true;
  ++m_profiled;
  return d;
}

}  // namespace gpuscope::collect
