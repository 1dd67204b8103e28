// Internal: what py_sum and gpu_idle_py share to read the periodic Python samples
// (`gpuscope trace --python-sampling`: py_samples, whose py_stack_id names a py_stacks row).
//
// A frame is named by its text (file, line, function: PySite), not by py_frames.id: the
// collector resolves one py_frames row per instruction, so one line may have several ids, and
// each process has its own. SampleFrames interns each distinct (file, line, function) once and
// keeps, per stack id, the frames innermost first as indices into that list.
//
// Errors: store::DatabaseError from reading `db`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "analyze/common/python_sites.hpp"
#include "core/report.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze::detail {

/// The note both reports give when there is nothing to read: the trace has no py_samples table
/// or no rows in it (not an error).
inline constexpr const char* kNoPySamplesNote =
    "no Python samples in the capture range: trace with `gpuscope trace --python-sampling[=RATE] -- python ...` to "
    "sample every Python thread's stack";

/// py_samples rows in `db` (0 when the table is missing).
[[nodiscard]] std::int64_t py_sample_count(store::Database& db);

/// A report of one row per (pid, tid, frame): its first columns PID, TID, Frame.
[[nodiscard]] Report frame_report(std::string name, std::string title);

/// True, with kNoPySamplesNote added to `r`, when `db` has no samples.
[[nodiscard]] bool noted_without_samples(store::Database& db, Report& r);

/// One stack's frames as SampleFrames indices.
struct SampleStack {
  std::vector<std::size_t> frames;  // innermost first
  std::vector<std::size_t> firsts;  // positions in `frames` of each frame's first (innermost) occurrence
};

class SampleFrames {
 public:
  /// Loads the trace's stacks and frames (PySites).
  explicit SampleFrames(store::Database& db);
  /// The frames of py_stacks.id, innermost first, as indices for site() (a recursive function's
  /// frame counts once per sample: `firsts`); empty for 0 (a sample with no Python frame) and for
  /// an id the trace does not define. Read once per stack id.
  [[nodiscard]] const SampleStack& stack(std::int64_t stack_id);
  /// The frame of an index that stack() gave.
  [[nodiscard]] const PySite& site(std::size_t frame) const { return m_list[frame]; }
  /// `frames` as PySite::where() texts joined by " ← ", at most `max` of them, then " ← …" when
  /// more follow: "data.py:123 Loader.__next__ ← train.py:57 <module>"; "" for none.
  [[nodiscard]] std::string chain(const std::vector<std::size_t>& frames, std::size_t from, std::size_t max) const;

 private:
  PySites m_sites;
  std::map<std::tuple<std::string, std::int64_t, std::string>, std::size_t> m_index;
  std::vector<PySite> m_list;
  std::unordered_map<std::int64_t, SampleStack> m_stacks;
};

/// Orders frame rows: larger `total` first, then larger `self`, then by where() text (stable
/// output for equal counts).
[[nodiscard]] bool frame_row_before(double total_a, double self_a, const std::string& where_a, double total_b,
                                    double self_b, const std::string& where_b);

}  // namespace gpuscope::analyze::detail
