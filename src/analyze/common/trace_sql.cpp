#include "analyze/common/trace_sql.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "core/pytorch_ranges.hpp"
#include "core/saturating.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {

std::string detail::kernel_name_sql(const ReportOptions& options) {
  const char* name_col = options.base ? "short_name" : options.mangled ? "mangled_name" : "name";
  return std::string("COALESCE(") + name_col + ", name, '<unknown kernel>')";
}

std::string detail::user_nvtx_only_sql(store::Database& db) {
  // gpuscope's range around transformers' generate() and every operator range, by its text: the
  // import reads operator ranges by the same field, and an operator call it merges into its parent
  // of the same name (aten::scaled_dot_product_attention redispatched under autocast) keeps its
  // range in nvtx_events without a torch_ops row. Constants: no quote to escape.
  std::string sql = " AND NOT (domain IS NULL AND COALESCE(text, '') = '" + std::string(core::kGenerateRange) +
                    "' AND style = 'PushPop') AND NOT (domain IS NULL AND COALESCE(text, '') LIKE '%" +
                    std::string(core::kOpIdField) + "%')";
  if (!db.has_table("torch_modules")) return sql;
  return sql + " AND id NOT IN (SELECT nvtx_id FROM torch_modules)";
}

std::vector<detail::ValueGroup> detail::group_values_by_key(store::Database& db, std::string_view sql,
                                                            const Rekey& rekey) {
  using Key = std::vector<std::string>;
  std::map<Key, ValueGroup> groups;
  store::Statement st = db.prepare(sql);
  const int key_columns = st.column_count() - 1;
  while (st.step()) {
    if (st.is_null(key_columns)) continue;
    Key key;
    for (int c = 0; c < key_columns; ++c) key.push_back(st.column_text(c));
    if (rekey) key = rekey(std::move(key));
    ValueGroup& g = groups[key];
    g.key = std::move(key);
    g.values.push_back(st.column_int(key_columns));
    g.total = core::sat_add(g.total, g.values.back());
  }
  std::vector<ValueGroup> out;
  out.reserve(groups.size());
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const ValueGroup& a, const ValueGroup& b) { return a.total > b.total; });
  return out;
}

}  // namespace gpuscope::analyze
