// Reading py_samples' stacks for py_sum and gpu_idle_py (py_samples_data.hpp).
#include "analyze/python/py_samples_data.hpp"

#include <algorithm>
#include <utility>

#include "store/database.hpp"

namespace gpuscope::analyze::detail {

std::int64_t py_sample_count(store::Database& db) {
  if (!db.has_table("py_samples")) return 0;
  return db.query_int("SELECT COUNT(*) FROM py_samples").value_or(0);
}

Report frame_report(std::string name, std::string title) {
  Report r;
  r.name = std::move(name);
  r.title = std::move(title);
  r.add_column("PID", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("TID", "", ColumnType::kInteger, ColumnKind::kIdentifier)
      .add_column("Frame", "", ColumnType::kText);
  return r;
}

bool noted_without_samples(store::Database& db, Report& r) {
  if (py_sample_count(db) > 0) return false;
  r.add_note(NoteLevel::kInfo, kNoPySamplesNote);
  return true;
}

SampleFrames::SampleFrames(store::Database& db) : m_sites(db) {}

const SampleStack& SampleFrames::stack(std::int64_t stack_id) {
  const auto [it, added] = m_stacks.try_emplace(stack_id);
  if (!added || stack_id == 0) return it->second;
  SampleStack& out = it->second;
  for (PySite& f : m_sites.frames(stack_id)) {
    const auto [at, fresh] = m_index.try_emplace({f.file, f.line, f.function}, m_list.size());
    if (fresh) m_list.push_back(std::move(f));
    if (std::find(out.frames.begin(), out.frames.end(), at->second) == out.frames.end())
      out.firsts.push_back(out.frames.size());
    out.frames.push_back(at->second);
  }
  return out;
}

std::string SampleFrames::chain(const std::vector<std::size_t>& frames, std::size_t from, std::size_t max) const {
  std::string text;
  for (std::size_t i = from; i < frames.size(); ++i) {
    if (i - from == max) return text + " ← …";
    text += (text.empty() ? "" : " ← ") + m_list[frames[i]].where();
  }
  return text;
}

bool frame_row_before(double total_a, double self_a, const std::string& where_a, double total_b, double self_b,
                      const std::string& where_b) {
  if (total_a != total_b) return total_a > total_b;
  if (self_a != self_b) return self_a > self_b;
  return where_a < where_b;
}

}  // namespace gpuscope::analyze::detail
