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
  std::string caller;  // where() of the blamed frame's caller in the stack charged most; "" if outermost
  std::string call;    // the call charged most at this site (rows_sql's 3rd column); "" without one
  std::int64_t calls = 0;
  std::int64_t total_ns = 0;
  double share = 0;  // total_ns / Σ duration of every row of rows_sql, with a stack or not (0..1)
  /// "data.py:40 to_device ← train.py:21 <module>" (where() and its caller).
  [[nodiscard]] std::string where() const;
};

class PySites {
 public:
  /// Loads the trace's stacks and frames (none when it has no py_stacks table).
  explicit PySites(store::Database& db);
  [[nodiscard]] bool empty() const { return m_stacks.empty(); }
  /// The blamed frame of py_stacks.id (see the file comment); nullopt for an unknown id.
  [[nodiscard]] std::optional<PySite> user_site(std::int64_t stack_id) const;
  /// user_site() and the frame that called it (nullopt for the outermost frame).
  struct UserFrame {
    PySite site;
    std::optional<PySite> caller;
  };
  [[nodiscard]] std::optional<UserFrame> user_frame(std::int64_t stack_id) const;
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

/// `rows_sql` selects (py_stack_id, duration_ns[, call name]) of the calls to charge; rows without
/// a stack are skipped but count in each site's share. Per blamed site: calls, summed duration,
/// share, the caller and call charged most; largest total first, at most `top`.
[[nodiscard]] std::vector<PySiteTotal> python_site_totals(store::Database& db, const std::string& rows_sql,
                                                          std::size_t top);

/// "LEAD train.py:12 loss_value ← train.py:40 <module> (cudaStreamSynchronize: 20 calls, 31 ms, 82 % of
/// WHOLE); ..." for a note (the call part only when known, the share only when `whole` is given);
/// "" when `sites` is empty.
[[nodiscard]] std::string python_sites_text(std::string_view lead, const std::vector<PySiteTotal>& sites,
                                            std::string_view whole = {});

}  // namespace gpuscope::analyze
