// The Python stack samples of a trace (gpuscope trace --python-sampling: py_samples, with
// their stacks from py_stacks and py_frames, docs/trace-schema.md) as the export's
// core::PythonSampleSource: `gpuscope export` hands it to the Perfetto writers beside
// analyze::TraceTimeline.
//
// Streaming: the samples are read row by row in time order (ORDER BY ts_ns, id); memory holds
// the trace's stacks and frames (PySites) and one resolved frame list per distinct
// stack, never the samples. A trace without a py_samples table has none.
// Errors: store::DatabaseError when a read fails.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analyze/common/python_sites.hpp"
#include "core/python_samples.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze {

class TracePythonSamples final : public PythonSampleSource {
 public:
  /// Reads the stacks and frames now; `db` must outlive it and be idle while it is visited.
  explicit TracePythonSamples(store::Database& db);
  /// True when the trace has a py_samples table.
  [[nodiscard]] bool present() const { return m_present; }
  void python_samples(const std::function<void(const PythonSampleEvent&)>& visit) override;
  /// Samples visited by the last python_samples() call.
  [[nodiscard]] std::int64_t visited() const { return m_visited; }

 private:
  struct Stack {
    std::vector<PySite> sites;        // outermost first
    std::vector<PythonFrame> frames;  // views into sites
  };
  const Stack& stack(std::int64_t stack_id);

  store::Database& m_db;
  bool m_present = false;
  PySites m_sites;
  std::unordered_map<std::int64_t, Stack> m_stacks;  // by py_stacks.id; nodes never move
  std::int64_t m_visited = 0;
};

}  // namespace gpuscope::analyze
