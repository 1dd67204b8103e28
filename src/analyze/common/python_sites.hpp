// Which line of the user's Python code a CUDA call came from (gpuscope trace
// --python-callsites: api_calls.py_stack_id, py_stacks, py_frames).
//
// The blamed frame of a stack is its innermost frame outside installed packages and the
// standard library (a path with /site-packages/, /dist-packages/ or /lib/pythonX.Y/): the
// `.item()` in train.py rather than torch's own Python around the call; the innermost frame
// when every frame is such code. Traces without the tables, or without stacks, have no sites.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

struct PySite {
  std::string file;        // co_filename as recorded ("" if unresolved)
  std::int64_t line = -1;  // -1 if unresolved
  std::string function;    // co_qualname
  /// "train.py:57 loss_value" (the file's last path component), "?" parts when unresolved.
  [[nodiscard]] std::string where() const;
};

struct PySiteTotal {
  PySite site;
  std::int64_t calls = 0;
  std::int64_t total_ns = 0;
};

class PySites {
 public:
  /// Loads the trace's stacks and frames (none when it has no py_stacks table).
  explicit PySites(store::Database& db);
  [[nodiscard]] bool empty() const { return m_stacks.empty(); }
  /// The blamed frame of py_stacks.id (see the file comment); nullopt for an unknown id.
  [[nodiscard]] std::optional<PySite> user_site(std::int64_t stack_id) const;
  /// The whole stack of py_stacks.id, innermost frame first, each as PySite::where(), joined
  /// by " ← " ("train.py:12 loss_value ← train.py:40 <module>"); "" for an unknown id.
  [[nodiscard]] std::string stack_text(std::int64_t stack_id) const;
  /// The frames of py_stacks.id, innermost first (an unresolved frame: a PySite of "?" parts);
  /// empty for an unknown id.
  [[nodiscard]] std::vector<PySite> frames(std::int64_t stack_id) const;

 private:
  struct Stack {
    std::int64_t parent = 0;  // 0 = outermost
    std::int64_t frame = 0;
  };
  std::unordered_map<std::int64_t, Stack> m_stacks;
  std::unordered_map<std::int64_t, PySite> m_frames;
};

/// `rows_sql` selects (py_stack_id, duration_ns) of the calls to charge; rows without a stack
/// are skipped. Per blamed site: calls and summed duration, largest total first, at most `top`.
[[nodiscard]] std::vector<PySiteTotal> python_site_totals(store::Database& db, const std::string& rows_sql,
                                                          std::size_t top);

/// "LEAD train.py:12 loss_value (20 calls, 31 ms); ..." for a note; "" when `sites` is empty.
[[nodiscard]] std::string python_sites_text(std::string_view lead, const std::vector<PySiteTotal>& sites);

}  // namespace gpuscope::analyze
