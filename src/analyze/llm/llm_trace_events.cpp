// Gathering for find_generations: what the models' processes did, read from the trace once.
#include "analyze/llm/llm_generations_parts.hpp"

#include <algorithm>
#include <set>

#include "core/pytorch_ranges.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze::detail {
namespace {

using store::Database;
using store::Statement;

// The list of (pid, tid) in `by`, empty when there is none.
template <typename T>
std::span<const T> list_of(const std::map<ThreadEvents::Key, std::vector<T>>& by, std::int64_t pid, std::int64_t tid) {
  const auto it = by.find({pid, tid});
  return it == by.end() ? std::span<const T>{} : std::span<const T>(it->second);
}

}  // namespace

std::vector<std::int64_t> training_pids(Database& db) {
  std::set<std::int64_t> training;
  Statement st =
      db.prepare("SELECT pid FROM torch_steps UNION SELECT pid FROM torch_ops WHERE is_backward = 1 ORDER BY pid");
  while (st.step()) training.insert(st.column_int(0));
  return {training.begin(), training.end()};
}

std::map<std::int64_t, std::vector<ModelCall>> model_calls(Database& db, const std::vector<std::int64_t>& training) {
  // The top-level module calls of each process; the model is the path called most often.
  std::map<std::int64_t, std::vector<ModelCall>> calls;
  {
    Statement st = db.prepare(
        "SELECT m.pid, m.tid, m.start_ns, m.end_ns, COALESCE(m.path, ''), COALESCE(m.class_name, ''), "
        "COALESCE(s.value, '') FROM v_torch_modules m JOIN nvtx_events e ON e.id = m.nvtx_id LEFT JOIN strings s ON "
        "s.id = e.text_id WHERE m.parent_module IS NULL AND m.end_ns IS NOT NULL ORDER BY m.pid, m.start_ns, "
        "m.nvtx_id");
    while (st.step()) {
      if (std::binary_search(training.begin(), training.end(), st.column_int(0))) continue;
      calls[st.column_int(0)].push_back({st.column_int(1), st.column_int(2), st.column_int(3), st.column_text(4),
                                         st.column_text(5), st.column_text(6)});
    }
  }
  for (auto& [pid, list] : calls) {
    std::map<std::string, std::size_t> count;
    for (const ModelCall& c : list) ++count[c.path];
    std::string model;
    std::size_t best = 0;
    for (const ModelCall& c : list)  // first seen wins a tie
      if (count[c.path] > best) model = c.path, best = count[c.path];
    std::erase_if(list, [&](const ModelCall& c) { return c.path != model; });
  }
  return calls;
}

ThreadEvents::ThreadEvents(Database& db, const std::map<std::int64_t, std::vector<ModelCall>>& calls) {
  // Shaped operators (embedding, matrix products) and GPU work, per (pid, tid) in time order.
  {
    Statement st = db.prepare(
        "SELECT e.pid, e.tid, e.start_ns, COALESCE(e.end_ns, e.start_ns), n.value, o.sizes FROM torch_ops o JOIN "
        "nvtx_events e ON e.id = o.nvtx_id JOIN strings n ON n.id = o.name_id WHERE o.sizes IS NOT NULL AND n.value "
        "IN (" +
        shaped_op_names_sql() + ") ORDER BY e.pid, e.tid, e.start_ns, o.nvtx_id");
    while (st.step())
      if (calls.count(st.column_int(0)) != 0)
        m_shapes[{st.column_int(0), st.column_int(1)}].push_back(
            {st.column_int(2), st.column_int(3), st.column_text(4), st.column_text(5)});
  }
  for (const std::string table : {"kernels", "memcpys", "memsets"}) {
    const std::string name = table == "kernels" ? "COALESCE(k.short_name_id, -1)" : "-1";
    const std::string to_host = table == "memcpys" ? "k.copy_kind = 'DtoH'" : "0";
    Statement st =
        db.prepare("SELECT a.pid, a.tid, a.start_ns, k.start_ns, k.end_ns, " + name + ", " + to_host + " FROM " +
                   table + " k JOIN api_calls a ON a.pid = k.pid AND a.correlation_id = k.correlation_id");
    while (st.step())
      if (calls.count(st.column_int(0)) != 0)
        m_launches[{st.column_int(0), st.column_int(1)}].push_back(
            {st.column_int(2), st.column_int(3), st.column_int(4), st.column_int(5), st.column_int(6) != 0});
  }
  for (auto& [key, list] : m_launches)
    std::sort(list.begin(), list.end(), [](const Launch& a, const Launch& b) { return a.api_ns < b.api_ns; });
  // Every API call and operator range of the model's threads, for the CPU time by cause.
  {
    Statement st = db.prepare(
        "SELECT a.pid, a.tid, a.start_ns, a.end_ns, COALESCE(n.value, ''), EXISTS (SELECT 1 FROM memcpys m WHERE "
        "m.pid = a.pid AND m.correlation_id = a.correlation_id AND m.copy_kind = 'DtoH') FROM api_calls a LEFT JOIN "
        "strings n ON n.id = a.name_id ORDER BY a.pid, a.tid, a.start_ns");
    while (st.step())
      if (calls.count(st.column_int(0)) != 0)
        m_api[{st.column_int(0), st.column_int(1)}].push_back(
            {st.column_int(2), st.column_int(3),
             st.column_int(5) != 0 ? ApiCause::kSync : api_cause(st.column_text(4))});
  }
  {
    Statement st = db.prepare(
        "SELECT e.pid, e.tid, e.start_ns, e.end_ns FROM torch_ops o JOIN nvtx_events e ON e.id = o.nvtx_id WHERE "
        "e.end_ns IS NOT NULL ORDER BY e.pid, e.tid, e.start_ns");
    while (st.step())
      if (calls.count(st.column_int(0)) != 0)
        m_ops[{st.column_int(0), st.column_int(1)}].emplace_back(st.column_int(2), st.column_int(3));
  }
  // The generate() calls: gpuscope's push/pop range around GenerationMixin.generate.
  {
    Statement st = db.prepare(
        "SELECT e.pid, e.tid, e.start_ns, e.end_ns FROM nvtx_events e JOIN strings s ON s.id = e.text_id WHERE "
        "s.value = ?1 AND e.style = 'PushPop' AND e.domain_id IS NULL AND e.end_ns IS NOT NULL ORDER BY e.pid, e.tid, "
        "e.start_ns");
    st.bind(1, core::kGenerateRange);
    while (st.step())
      if (calls.count(st.column_int(0)) != 0)
        m_requests[{st.column_int(0), st.column_int(1)}].emplace_back(st.column_int(2), st.column_int(3));
  }
}

std::span<const OpShape> ThreadEvents::shapes_of(std::int64_t pid, std::int64_t tid) const {
  return list_of(m_shapes, pid, tid);
}

std::span<const ApiSpan> ThreadEvents::api_of(std::int64_t pid, std::int64_t tid) const {
  return list_of(m_api, pid, tid);
}

std::span<const CpuRange> ThreadEvents::ops_of(std::int64_t pid, std::int64_t tid) const {
  return list_of(m_ops, pid, tid);
}

std::span<const CpuRange> ThreadEvents::requests_of(std::int64_t pid, std::int64_t tid) const {
  return list_of(m_requests, pid, tid);
}

std::span<const Launch> ThreadEvents::launches_in(std::int64_t pid, std::int64_t tid, std::int64_t from,
                                                  std::int64_t to) const {
  const std::span<const Launch> l = list_of(m_launches, pid, tid);
  const auto lo =
      std::lower_bound(l.begin(), l.end(), from, [](const Launch& x, std::int64_t v) { return x.api_ns < v; });
  const auto hi = std::lower_bound(lo, l.end(), to, [](const Launch& x, std::int64_t v) { return x.api_ns < v; });
  return {lo, hi};
}

}  // namespace gpuscope::analyze::detail
