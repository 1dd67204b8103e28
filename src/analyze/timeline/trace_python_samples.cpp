#include "analyze/timeline/trace_python_samples.hpp"

#include <algorithm>

#include "store/database.hpp"

namespace gpuscope::analyze {

TracePythonSamples::TracePythonSamples(store::Database& db)
    : m_db(db), m_present(db.has_table("py_samples")), m_sites(db) {}

const TracePythonSamples::Stack& TracePythonSamples::stack(std::int64_t stack_id) {
  const auto [it, added] = m_stacks.try_emplace(stack_id);
  if (added) {
    Stack& s = it->second;
    s.sites = m_sites.frames(stack_id);  // innermost first
    std::reverse(s.sites.begin(), s.sites.end());
    for (const PySite& site : s.sites) s.frames.push_back(PythonFrame{site.function, site.file, site.line});
  }
  return it->second;
}

void TracePythonSamples::python_samples(const std::function<void(const PythonSampleEvent&)>& visit) {
  m_visited = 0;
  if (!m_present) return;
  store::Statement st =
      m_db.prepare("SELECT pid, tid, ts_ns, py_stack_id, holds_gil, on_cpu FROM py_samples ORDER BY ts_ns, id");
  while (st.step()) {
    PythonSampleEvent e;
    e.pid = st.column_int(0);
    e.tid = st.column_int(1);
    e.ts_ns = st.column_int(2);
    e.stack_id = st.is_null(3) ? 0 : st.column_int(3);
    if (e.stack_id != 0) e.frames = stack(e.stack_id).frames;
    e.holds_gil = st.column_int(4) != 0;
    e.on_cpu = st.column_int(5) != 0;
    visit(e);
    ++m_visited;
  }
}

}  // namespace gpuscope::analyze
