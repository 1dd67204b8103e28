// The importer's pass over the GPU-metrics sampler's logs (`gpuscope trace --gpu-metrics`:
// CUPTI PM sampling by the launcher, core/event_log_format.hpp GpuMetricsSessionRecord and
// GpuMetricSampleRecord). Such a log has no ProcessRecord and makes no processes row; it is
// read after every process log, because its rows depend on theirs (a process log holding
// such records, which gpuscope does not write, has them read here too, the rest with its
// process):
//
//  - device_id: the GPU's ordinal in the traced processes, found by UUID in their
//    DeviceRecords, when that gives one ordinal per GPU (every process that saw the GPU
//    numbers it the same, and no two GPUs sampled get the same number); otherwise (a GPU no
//    process saw, ranks with their own CUDA_VISIBLE_DEVICES that all call their GPU 0) every
//    session keeps the sampler's own ordinal. gpu_metrics_sessions.uuid is the sure key.
//  - capture windows: when some process has a window other than 'all', a sample is kept
//    when it overlaps some window of some process; otherwise every sample is kept.
//
// Writes gpu_metric_names (one row per metric name, trace-wide; label and unit from
// core/gpu_metrics.hpp), gpu_metrics (one row per sample and metric, NaN -> NULL) and
// gpu_metrics_sessions (one per session record). The sampler's messages go to messages with
// the launcher's pid (FileHeader.pid, no processes row), its data_loss records (e.g.
// gpu_metrics_overflow) and the log's own problems to data_loss with pid NULL. A sample whose
// device has no session before it in the log, or whose value count is not its session's
// metric count, is skipped and counted as an unknown_log_records row.
//
// Samples do not widen meta.duration_ns: the sampler starts before the traced command and
// stops after it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/event_log_format.hpp"
#include "store/row_writer.hpp"

namespace gpuscope::store {
class EventLogReader;
}  // namespace gpuscope::store

namespace gpuscope::store::detail {

class ImportState;

class GpuMetricsTables {
 public:
  /// `sessions`: the session records of every sampler log of the trace (from their first
  /// pass), to choose the device ids. Reads state.processes (devices, windows): construct
  /// it after every process log was read.
  GpuMetricsTables(ImportState& state, const std::vector<log::GpuMetricsSessionRecord>& sessions);

  /// Reads the GPU-metrics records of one log (opened) into the tables. `sampler_log`: the
  /// log has no process (the launcher's): its messages, data_loss records and damage are
  /// read here too; a process log's were read with the process.
  void import_log(EventLogReader& reader, bool sampler_log);

 private:
  friend class GpuMetricsLogVisitor;

  [[nodiscard]] std::int64_t metric_id(std::string_view name);
  [[nodiscard]] std::int64_t device_id(const log::GpuMetricsSessionRecord& r) const;
  [[nodiscard]] bool keep(std::uint64_t start_ns, std::uint64_t end_ns) const;

  ImportState& m_state;
  RowWriter<rows::GpuMetricName> m_names;
  RowWriter<rows::GpuMetric> m_metrics;
  RowWriter<rows::GpuMetricsSession> m_sessions;
  std::unordered_map<std::string, std::int64_t> m_metric_ids;  // name -> gpu_metric_names.id
  // Traced ordinal by session uuid (uuid_text); empty when they do not give one per GPU.
  std::map<std::string, std::int64_t> m_device_by_uuid;
  bool m_clip = false;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> m_windows;  // merged [start, end), sorted
};

}  // namespace gpuscope::store::detail
