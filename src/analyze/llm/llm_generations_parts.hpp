// Internal: the pieces find_generations (llm_generations.hpp) is made of, one file each:
//   llm_trace_events.cpp  gathering: the model's calls per process, and the shaped operators,
//                         GPU work, API calls and operator ranges of its threads (SQL)
//   llm_shapes.cpp        a forward's batch, tokens and FLOPs from its operators' shapes
//   llm_forward_times.cpp each forward's token end, CPU window and GPU busy time (pure), and
//                         each generation's request start (its generate() call)
// llm_generations.cpp puts them together: forwards, their phase, the generations.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analyze/llm/llm_generations.hpp"

namespace gpuscope::store {
class Database;
}

namespace gpuscope::analyze::detail {

/// One call of a process's top-level module (torch_modules row without a parent).
struct ModelCall {
  std::int64_t tid, start, end;
  std::string path, class_name, text;  // text: the module range's, with the model bytes
};

/// An operator recorded with its input shapes (embedding, matrix products), CPU interval.
struct OpShape {
  std::int64_t start, end;
  std::string name, sizes;
};

/// One GPU activity and the API call that launched it.
struct Launch {
  std::int64_t api_ns, gpu_start, gpu_end, name;  // name: kernels.short_name_id; -1 for copies and sets
  bool to_host;                                   // a device-to-host copy
};

using CpuRange = std::pair<std::int64_t, std::int64_t>;  // an operator's [start_ns, end_ns)

/// The processes that train (optimizer steps or backward operators), ascending.
[[nodiscard]] std::vector<std::int64_t> training_pids(store::Database& db);

/// Per process that does not train: the calls of its model, the top-level module path called
/// most often (the first seen wins a tie), in start order.
[[nodiscard]] std::map<std::int64_t, std::vector<ModelCall>> model_calls(store::Database& db,
                                                                         const std::vector<std::int64_t>& training);

/// What the threads of the models' processes did, per (pid, tid), each list in start order
/// (launches: in the order of their API calls).
class ThreadEvents {
 public:
  using Key = std::pair<std::int64_t, std::int64_t>;  // (pid, tid)
  /// Reads them for the processes of `calls` (model_calls).
  ThreadEvents(store::Database& db, const std::map<std::int64_t, std::vector<ModelCall>>& calls);

  [[nodiscard]] std::span<const OpShape> shapes_of(std::int64_t pid, std::int64_t tid) const;
  /// The GPU work launched on (pid, tid) by API calls that started in [from, to).
  [[nodiscard]] std::span<const Launch> launches_in(std::int64_t pid, std::int64_t tid, std::int64_t from,
                                                    std::int64_t to) const;
  [[nodiscard]] std::span<const ApiSpan> api_of(std::int64_t pid, std::int64_t tid) const;
  [[nodiscard]] std::span<const CpuRange> ops_of(std::int64_t pid, std::int64_t tid) const;
  /// The generate() calls (gpuscope.generate ranges, closed) of (pid, tid), in start order.
  [[nodiscard]] std::span<const CpuRange> requests_of(std::int64_t pid, std::int64_t tid) const;

 private:
  std::map<Key, std::vector<OpShape>> m_shapes;
  std::map<Key, std::vector<Launch>> m_launches;
  std::map<Key, std::vector<ApiSpan>> m_api;
  std::map<Key, std::vector<CpuRange>> m_ops;
  std::map<Key, std::vector<CpuRange>> m_requests;
};

/// The operator names read_shapes looks at, quoted and comma-separated for an SQL IN list.
[[nodiscard]] std::string shaped_op_names_sql();

/// Batch, sequence and tokens of `f` from the shaped operators inside its call (`ops` of its
/// thread, in start order); its FLOPs from the outermost matrix products. Pure.
void read_shapes(ForwardPass& f, std::span<const OpShape> ops);

/// Sets request_ns of each generation of one process that has a prefill: the start of the
/// innermost generate() call (events.requests_of the prefill's thread) holding the prefill's
/// call, unless an earlier generation's prefill lies in that call too (llm_generations.hpp's
/// "request start"). `forwards` are LlmTrace::forwards (Generation::first indexes them).
void set_request_starts(std::span<Generation> generations, std::span<const ForwardPass> forwards,
                        const ThreadEvents& events);

/// Fills token_end_ns, tail_ns, cpu, gpu_work_ns and gpu_busy_ns of one process's classified
/// forwards (in call order) from its threads' events (llm_generations.hpp's file comment).
void time_forwards(std::span<ForwardPass> forwards, const ThreadEvents& events);

}  // namespace gpuscope::analyze::detail
