#include "analyze/common/analysis_cache.hpp"

#include <map>
#include <tuple>

#include "store/database.hpp"

namespace gpuscope::analyze::detail {

const std::any& cached_any(store::Database& db, const std::string& what, const std::function<std::any()>& compute) {
  using State = std::tuple<std::uint64_t, std::int64_t, std::int64_t>;
  static State s_state{0, -1, -1};
  static std::map<std::string, std::any> s_results;
  const State now{db.serial(), db.total_changes(), db.query_int("PRAGMA data_version").value_or(-1)};
  if (now != s_state) {
    s_results.clear();
    s_state = now;
  }
  auto it = s_results.find(what);
  if (it == s_results.end()) it = s_results.emplace(what, compute()).first;
  return it->second;
}

}  // namespace gpuscope::analyze::detail
