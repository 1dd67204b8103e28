// Blamed Python sites of CUDA calls (python_sites.hpp).
#include "analyze/common/python_sites.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/units.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

// Code the user did not write: installed packages and the standard library.
bool is_library_file(std::string_view file) {
  return file.empty() || file.find("/site-packages/") != std::string_view::npos ||
         file.find("/dist-packages/") != std::string_view::npos ||
         file.find("/lib/python3") != std::string_view::npos || file.starts_with("<frozen ");
}

}  // namespace

std::string PySite::where() const {
  const std::size_t slash = file.rfind('/');
  const std::string base = file.empty() ? "?" : (slash == std::string::npos ? file : file.substr(slash + 1));
  return base + ":" + (line < 0 ? "?" : std::to_string(line)) + " " + (function.empty() ? "?" : function);
}

PySites::PySites(store::Database& db) {
  if (!db.has_table("py_stacks") || !db.has_table("py_frames")) return;
  store::Statement frames = db.prepare(
      "SELECT f.id, fs.value, f.line, fn.value FROM py_frames f LEFT JOIN strings fs ON fs.id = f.file_id "
      "LEFT JOIN strings fn ON fn.id = f.function_id");
  while (frames.step()) {
    m_frames[frames.column_int(0)] =
        PySite{frames.is_null(1) ? "" : frames.column_text(1), frames.is_null(2) ? -1 : frames.column_int(2),
               frames.is_null(3) ? "" : frames.column_text(3)};
  }
  store::Statement stacks = db.prepare("SELECT id, COALESCE(parent_id, 0), frame_id FROM py_stacks");
  while (stacks.step()) m_stacks[stacks.column_int(0)] = Stack{stacks.column_int(1), stacks.column_int(2)};
}

std::optional<PySite> PySites::user_site(std::int64_t stack_id) const {
  std::optional<PySite> innermost;
  // A parent chain is at most as long as the table (a cycle would be a damaged trace).
  for (std::size_t hops = 0; stack_id != 0 && hops <= m_stacks.size(); ++hops) {
    const auto it = m_stacks.find(stack_id);
    if (it == m_stacks.end()) break;
    const auto frame = m_frames.find(it->second.frame);
    if (frame != m_frames.end()) {
      if (!is_library_file(frame->second.file)) return frame->second;
      if (!innermost) innermost = frame->second;
    }
    stack_id = it->second.parent;
  }
  return innermost;
}

std::string PySites::stack_text(std::int64_t stack_id) const {
  std::string text;
  for (const PySite& f : frames(stack_id)) text += (text.empty() ? "" : " ← ") + f.where();
  return text;
}

std::vector<PySite> PySites::frames(std::int64_t stack_id) const {
  std::vector<PySite> out;
  for (std::size_t hops = 0; stack_id != 0 && hops <= m_stacks.size(); ++hops) {
    const auto it = m_stacks.find(stack_id);
    if (it == m_stacks.end()) break;
    const auto frame = m_frames.find(it->second.frame);
    out.push_back(frame != m_frames.end() ? frame->second : PySite{});
    stack_id = it->second.parent;
  }
  return out;
}

std::vector<PySiteTotal> python_site_totals(store::Database& db, const std::string& rows_sql, std::size_t top) {
  const PySites sites(db);
  if (sites.empty()) return {};
  std::map<std::tuple<std::string, std::int64_t, std::string>, PySiteTotal> by_site;
  store::Statement rows = db.prepare(rows_sql);
  while (rows.step()) {
    if (rows.is_null(0)) continue;
    const std::optional<PySite> site = sites.user_site(rows.column_int(0));
    if (!site) continue;
    PySiteTotal& t = by_site[{site->file, site->line, site->function}];
    t.site = *site;
    ++t.calls;
    t.total_ns += rows.column_int(1);
  }
  std::vector<PySiteTotal> out;
  out.reserve(by_site.size());
  for (auto& [key, total] : by_site) out.push_back(std::move(total));
  std::stable_sort(out.begin(), out.end(),
                   [](const PySiteTotal& a, const PySiteTotal& b) { return a.total_ns > b.total_ns; });
  if (out.size() > top) out.resize(top);
  return out;
}

std::string python_sites_text(std::string_view lead, const std::vector<PySiteTotal>& sites) {
  if (sites.empty()) return "";
  std::string text(lead);
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const PySiteTotal& s = sites[i];
    text += std::string(i == 0 ? " " : "; ") + s.site.where() + " (" + std::to_string(s.calls) +
            (s.calls == 1 ? " call, " : " calls, ") + units::duration_ns(s.total_ns) + ")";
  }
  return text;
}

}  // namespace gpuscope::analyze
