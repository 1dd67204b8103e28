// Blamed Python sites of CUDA calls (python_sites.hpp).
#include "analyze/common/python_sites.hpp"

#include <algorithm>
#include <iterator>
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
  std::optional<UserFrame> f = user_frame(stack_id);
  return f ? std::optional<PySite>(std::move(f->site)) : std::nullopt;
}

std::optional<PySites::UserFrame> PySites::user_frame(std::int64_t stack_id) const {
  // Unresolved frames (an id the trace does not define) are skipped, as they have no text.
  std::vector<PySite> chain;
  for (std::size_t hops = 0; stack_id != 0 && hops <= m_stacks.size(); ++hops) {
    const auto it = m_stacks.find(stack_id);
    if (it == m_stacks.end()) break;
    if (const auto frame = m_frames.find(it->second.frame); frame != m_frames.end()) chain.push_back(frame->second);
    stack_id = it->second.parent;
  }
  if (chain.empty()) return std::nullopt;
  const auto user = std::find_if(chain.begin(), chain.end(), [](const PySite& f) { return !is_library_file(f.file); });
  const auto at = user == chain.end() ? chain.begin() : user;  // the innermost when every frame is library code
  UserFrame out{*at, std::nullopt};
  if (std::next(at) != chain.end()) out.caller = *std::next(at);
  return out;
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

std::string PySiteTotal::where() const { return site.where() + (caller.empty() ? "" : " ← " + caller); }

std::vector<PySiteTotal> python_site_totals(store::Database& db, const std::string& rows_sql, std::size_t top) {
  const PySites sites(db);
  if (sites.empty()) return {};
  struct Charge {
    PySiteTotal total;
    std::map<std::string, std::int64_t> callers, calls;  // text → ns
  };
  std::map<std::tuple<std::string, std::int64_t, std::string>, Charge> by_site;
  std::int64_t all_ns = 0;
  store::Statement rows = db.prepare(rows_sql);
  const bool named = rows.column_count() > 2;
  while (rows.step()) {
    const std::int64_t ns = rows.column_int(1);
    all_ns += ns;
    if (rows.is_null(0)) continue;
    const std::optional<PySites::UserFrame> frame = sites.user_frame(rows.column_int(0));
    if (!frame) continue;
    Charge& c = by_site[{frame->site.file, frame->site.line, frame->site.function}];
    c.total.site = frame->site;
    ++c.total.calls;
    c.total.total_ns += ns;
    c.callers[frame->caller ? frame->caller->where() : ""] += ns;
    if (named) c.calls[rows.is_null(2) ? "" : rows.column_text(2)] += ns;
  }
  // The key charged most (the first in text order among equals).
  const auto most = [](const std::map<std::string, std::int64_t>& m) {
    const auto it =
        std::max_element(m.begin(), m.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    return it == m.end() ? std::string() : it->first;
  };
  std::vector<PySiteTotal> out;
  out.reserve(by_site.size());
  for (auto& [key, c] : by_site) {
    c.total.caller = most(c.callers);
    c.total.call = most(c.calls);
    c.total.share = all_ns > 0 ? static_cast<double>(c.total.total_ns) / static_cast<double>(all_ns) : 0.0;
    out.push_back(std::move(c.total));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const PySiteTotal& a, const PySiteTotal& b) { return a.total_ns > b.total_ns; });
  if (out.size() > top) out.resize(top);
  return out;
}

std::string python_sites_text(std::string_view lead, const std::vector<PySiteTotal>& sites, std::string_view whole) {
  if (sites.empty()) return "";
  std::string text(lead);
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const PySiteTotal& s = sites[i];
    text += std::string(i == 0 ? " " : "; ") + s.where() + " (" + (s.call.empty() ? "" : s.call + ": ") +
            std::to_string(s.calls) + (s.calls == 1 ? " call, " : " calls, ") + units::duration_ns(s.total_ns) +
            (whole.empty() ? "" : ", " + units::percent_of(s.share) + " of " + std::string(whole)) + ")";
  }
  return text;
}

}  // namespace gpuscope::analyze
