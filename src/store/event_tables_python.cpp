// EventTables' Python part (event_tables.hpp): the call sites' and samples' frames and stacks
// (py_frames, py_stacks), the samples (py_samples), and the stacks a log named but never defined.
#include <string>

#include "store/event_tables.hpp"
#include "store/import_state.hpp"

namespace gpuscope::store::detail {
using rows::i64;

// Python frames and call sites are the log's dictionary: kept whatever the windows. A stack
// may come before its frame's record (the collector resolves frames later, with the GIL):
// frame ids are given on first mention, and frames never resolved get a row with NULLs.
std::int64_t EventTables::py_frame_id(std::uint32_t log_frame_id) {
  auto [it, added] = m_py_frames.try_emplace(log_frame_id, 0);
  if (added) it->second = m_state.next_py_frame_id();
  return it->second;
}

void EventTables::on_py_frame(const log::PyFrameRecord& r) {
  if (!m_py_frames_written.insert(r.frame_id).second) return;
  m_state.py_frames.insert({
      .id = py_frame_id(r.frame_id),
      .pid = i64(m_pid),
      .file_id = rows::id_or_null(str(r.file_string)),
      .function_id = rows::id_or_null(str(r.function_string)),
      .line = r.line < 0 ? std::nullopt : rows::OptInt(r.line),
      .first_line = r.first_line < 0 ? std::nullopt : rows::OptInt(r.first_line),
  });
}

void EventTables::on_py_stack(const log::PyStackRecord& r) {
  if (r.stack_id == 0 || !m_py_stacks_written.insert(r.stack_id).second) return;
  m_state.py_stacks.insert({
      .id = *py_stack(r.stack_id),
      .pid = i64(m_pid),
      .parent_id = py_stack(r.parent_id),
      .frame_id = py_frame_id(r.frame_id),
      .depth = i64(r.depth),
  });
}

void EventTables::on_py_sample(const log::PySampleRecord& r) {
  if (!in_window(r.ts_ns)) {
    ++m_clipped;
    return;
  }
  m_state.py_samples.insert({
      .pid = i64(m_pid),
      .tid = i64(r.tid),
      .ts_ns = i64(r.ts_ns),
      .py_stack_id = py_stack(r.stack_id),
      .holds_gil = (r.flags & log::kPySampleHoldsGil) != 0 ? 1 : 0,
      .on_cpu = (r.flags & log::kPySampleOnCpu) != 0 ? 1 : 0,
  });
  m_state.processes.add_thread(m_pid, r.tid);
  m_state.seen(r.ts_ns, r.ts_ns);
}

void EventTables::write_unresolved_py_frames() {
  for (const auto& [log_id, id] : m_py_frames) {
    if (m_py_frames_written.contains(log_id)) continue;
    m_state.py_frames.insert({.id = id, .pid = i64(m_pid)});
  }
  // Calls and samples naming a stack the log never defined (cut short by a crash) get none: one
  // pass over each table, whatever the number of such stacks.
  std::string undefined;
  for (const auto& [log_id, id] : m_py_stacks)
    if (!m_py_stacks_written.contains(log_id)) undefined += (undefined.empty() ? "" : ",") + std::to_string(id);
  if (undefined.empty()) return;
  for (const char* table : {"api_calls", "py_samples"})
    m_state.db.exec(std::string("UPDATE ") + table + " SET py_stack_id = NULL WHERE py_stack_id IN (" + undefined +
                    ")");
}

// The collector writes a stack before the API records that name it, except when a call
// interned it while the writer was between the two: ids are given on first mention too.
rows::OptInt EventTables::py_stack(std::uint32_t log_stack_id) {
  if (log_stack_id == 0) return std::nullopt;
  auto [it, added] = m_py_stacks.try_emplace(log_stack_id, 0);
  if (added) it->second = m_state.next_py_stack_id();
  return it->second;
}

}  // namespace gpuscope::store::detail
