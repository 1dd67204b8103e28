#include "analyze/common/gpu_index.hpp"

#include <set>
#include <string>
#include <vector>

#include "store/database.hpp"

namespace gpuscope::analyze::detail {

GpuIndexMap GpuIndexMap::load(store::Database& db) {
  // Every (pid, device_id) that has a device row or any GPU activity, with its UUID.
  store::Statement st = db.prepare(
      "SELECT p.pid, p.device_id, (SELECT d.uuid FROM devices d WHERE d.pid = p.pid AND "
      "d.device_id = p.device_id AND d.uuid IS NOT NULL AND d.uuid <> '' LIMIT 1) "
      "FROM (SELECT pid, device_id FROM devices UNION SELECT pid, device_id FROM kernels "
      "UNION SELECT pid, device_id FROM memcpys UNION SELECT pid, device_id FROM memsets) p "
      "ORDER BY p.pid, p.device_id");
  std::vector<std::pair<std::pair<std::int64_t, std::int64_t>, std::string>> pairs;
  std::map<std::string, std::int64_t> min_ordinal;  // physical GPU key → smallest ordinal
  while (st.step()) {
    const std::int64_t pid = st.column_int(0);
    const std::int64_t dev = st.column_int(1);
    std::string key =
        st.is_null(2) ? "pid " + std::to_string(pid) + " device " + std::to_string(dev) : st.column_text(2);
    auto [it, inserted] = min_ordinal.emplace(key, dev);
    if (!inserted && dev < it->second) it->second = dev;
    pairs.push_back({{pid, dev}, std::move(key)});
  }

  std::set<std::int64_t> ordinals;
  bool clash = false;
  for (const auto& [key, ord] : min_ordinal) clash |= !ordinals.insert(ord).second;

  std::map<std::string, std::int64_t> key_index;
  if (!clash) {
    key_index = min_ordinal;
  } else {
    std::set<std::pair<std::int64_t, std::string>> order;
    for (const auto& [key, ord] : min_ordinal) order.insert({ord, key});
    std::int64_t next = 0;
    for (const auto& [ord, key] : order) key_index[key] = next++;
  }

  GpuIndexMap map;
  map.m_gpu_count = min_ordinal.size();
  for (const auto& [pd, key] : pairs) map.m_index[pd] = key_index.at(key);
  return map;
}

std::int64_t GpuIndexMap::index(std::int64_t pid, std::int64_t device_id) const {
  const auto it = m_index.find({pid, device_id});
  return it == m_index.end() ? device_id : it->second;
}

}  // namespace gpuscope::analyze::detail
