#include "store/gpu_metrics_tables.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "core/gpu_metrics.hpp"
#include "store/data_loss_kinds.hpp"
#include "store/event_log_reader.hpp"
#include "store/import_state.hpp"
#include "store/record_text.hpp"

namespace gpuscope::store::detail {
using rows::i64;

// One sampler log's pass: sessions by the sampler's device ordinal (a later session of a
// device takes over its samples), rows written as samples come.
class GpuMetricsLogVisitor final : public EventLogVisitor {
 public:
  GpuMetricsLogVisitor(GpuMetricsTables& tables, const EventLogReader& reader, bool sampler_log)
      : m_t(tables), m_reader(reader), m_sampler_log(sampler_log) {}

  void on_gpu_metrics_session(const log::GpuMetricsSessionRecord& r, std::span<const std::uint64_t> ids) override {
    Session s{.record = r, .device_id = m_t.device_id(r)};
    s.metric_ids.reserve(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      std::string_view name = m_reader.string(ids[i]);
      std::string unnamed;
      if (name.empty()) {  // a damaged string id: the values still have a column
        unnamed = "unnamed_metric_" + std::to_string(i);
        name = unnamed;
      }
      s.metric_ids.push_back(m_t.metric_id(name));
    }
    m_current[r.device_id] = m_sessions.size();
    m_sessions.push_back(std::move(s));
  }

  void on_gpu_metric_sample(const log::GpuMetricSampleRecord& r, std::span<const double> values) override {
    const auto it = m_current.find(r.device_id);
    if (it == m_current.end() || m_sessions[it->second].metric_ids.size() != values.size()) {
      ++skipped;  // no session before it, or not its session's metrics
      return;
    }
    if (!m_t.keep(r.start_ns, r.end_ns)) {
      ++m_t.m_state.result.events_outside_windows;
      return;
    }
    Session& s = m_sessions[it->second];
    for (std::size_t i = 0; i < values.size(); ++i) {
      m_t.m_metrics.insert({
          .device_id = s.device_id,
          .start_ns = i64(r.start_ns),
          .end_ns = i64(r.end_ns),
          .metric_id = s.metric_ids[i],
          .value = std::isnan(values[i]) ? std::nullopt : rows::OptReal(values[i]),
      });
    }
    m_t.m_state.result.rows.gpu_metrics += static_cast<std::int64_t>(values.size());
    ++s.samples;
    s.first = std::min(s.first.value_or(r.start_ns), r.start_ns);
    s.last = std::max(s.last.value_or(r.end_ns), r.end_ns);
  }

  void on_message(const log::MessageRecord& r) override {
    if (!m_sampler_log) return;
    m_t.m_state.messages.insert({
        .pid = i64(m_reader.pid()),
        .ts_ns = i64(r.ts_ns),
        .severity = message_severity_text(r.severity),
        .text = m_reader.string(r.text_string),
    });
    ++m_t.m_state.result.rows.messages;
  }

  void on_data_loss(const log::DataLossRecord& r) override {
    if (!m_sampler_log) return;
    std::string what(m_reader.string(r.what_string));
    if (what.empty()) what = data_loss_name(DataLossKind::kCollectorDataLoss);
    losses[what] += r.count;
  }

  /// gpu_metrics_sessions rows, in log order.
  void write_sessions() {
    for (const Session& s : m_sessions) {
      const log::GpuMetricsSessionRecord& r = s.record;
      const std::string uuid = uuid_text(r.uuid);
      m_t.m_sessions.insert({
          .device_id = s.device_id,
          .chip = rows::text_or_null(m_reader.string(r.chip_string)),
          .device_name = rows::text_or_null(m_reader.string(r.device_name_string)),
          .uuid = rows::text_or_null(uuid),
          .start_ns = i64(r.start_ns),
          .interval_ns = i64(r.interval_ns),
          .samples = s.samples,
          .first_ns = s.first ? rows::OptInt(i64(*s.first)) : std::nullopt,
          .last_ns = s.last ? rows::OptInt(i64(*s.last)) : std::nullopt,
          .clock_offset_ns = r.clock_offset_ns,
          .hardware_buffer_bytes = i64(r.hardware_buffer_bytes),
          .metrics = i64(r.metric_count),
      });
      ++m_t.m_state.result.rows.gpu_metrics_sessions;
    }
  }

  std::uint64_t skipped = 0;
  std::map<std::string, std::uint64_t> losses;  // collector-reported: what -> count

 private:
  struct Session {
    log::GpuMetricsSessionRecord record{};
    std::int64_t device_id = 0;
    std::vector<std::int64_t> metric_ids{};  // gpu_metric_names.id, in value order
    std::int64_t samples = 0;                // imported
    std::optional<std::uint64_t> first{};
    std::optional<std::uint64_t> last{};
  };

  GpuMetricsTables& m_t;
  const EventLogReader& m_reader;
  bool m_sampler_log;
  std::vector<Session> m_sessions;
  std::unordered_map<std::uint32_t, std::size_t> m_current;  // sampler's device_id -> m_sessions index
};

GpuMetricsTables::GpuMetricsTables(ImportState& state, const std::vector<log::GpuMetricsSessionRecord>& sessions)
    : m_state(state), m_names(state.db), m_metrics(state.db), m_sessions(state.db) {
  // Device ids: the traced ordinal of each GPU by UUID (the sampler's own where no process
  // saw it), kept only when that gives one distinct number per GPU.
  const auto traced = state.processes.device_ids_by_uuid();
  std::map<std::string, std::int64_t> by_uuid;
  bool one_per_gpu = true;
  for (const log::GpuMetricsSessionRecord& r : sessions) {
    const std::string uuid = uuid_text(r.uuid);
    const auto it = traced.find(uuid);
    if (it != traced.end() && it->second.size() > 1) one_per_gpu = false;  // processes disagree
    const std::int64_t id = it != traced.end() ? std::int64_t{*it->second.begin()} : std::int64_t{r.device_id};
    by_uuid.emplace(uuid, id);
  }
  std::set<std::int64_t> ids;
  for (const auto& [uuid, id] : by_uuid) one_per_gpu = one_per_gpu && ids.insert(id).second;
  if (one_per_gpu) m_device_by_uuid = std::move(by_uuid);

  // Capture windows: clip only when some process has one other than 'all'.
  for (const auto& [pid, w] : state.processes.windows()) {
    if (w.reason != "all") m_clip = true;
    m_windows.emplace_back(w.start, w.end);
  }
  std::sort(m_windows.begin(), m_windows.end());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> merged;
  for (const auto& w : m_windows) {
    if (!merged.empty() && w.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, w.second);
    } else {
      merged.push_back(w);
    }
  }
  m_windows = std::move(merged);
}

std::int64_t GpuMetricsTables::metric_id(std::string_view name) {
  const auto [it, added] = m_metric_ids.try_emplace(std::string(name), 0);
  if (!added) return it->second;
  it->second = static_cast<std::int64_t>(m_metric_ids.size());
  const std::optional<core::GpuMetricDef> def = core::gpu_metric_def(name);
  m_names.insert({
      .id = it->second,
      .name = name,
      .label = def ? def->label : name,
      .unit = def ? def->unit : core::gpu_metric_unit(name),
  });
  ++m_state.result.rows.gpu_metric_names;
  return it->second;
}

std::int64_t GpuMetricsTables::device_id(const log::GpuMetricsSessionRecord& r) const {
  const auto it = m_device_by_uuid.find(uuid_text(r.uuid));
  return it != m_device_by_uuid.end() ? it->second : std::int64_t{r.device_id};
}

// [start, end) overlaps a merged window [a, b); an empty sample counts as [start, start + 1).
bool GpuMetricsTables::keep(std::uint64_t start_ns, std::uint64_t end_ns) const {
  if (!m_clip) return true;
  const std::uint64_t end = std::max(end_ns, start_ns == UINT64_MAX ? start_ns : start_ns + 1);
  // The first window ending after the start: the merged windows are disjoint and sorted,
  // so their ends are sorted too.
  const auto it = std::upper_bound(m_windows.begin(), m_windows.end(), start_ns,
                                   [](std::uint64_t t, const auto& w) { return t < w.second; });
  return it != m_windows.end() && it->first < end;
}

void GpuMetricsTables::import_log(EventLogReader& reader, bool sampler_log) {
  GpuMetricsLogVisitor visitor(*this, reader, sampler_log);
  const LogReadStats stats = reader.read(visitor);
  visitor.write_sessions();
  if (!sampler_log) {  // its damage was counted with its process
    if (visitor.skipped > 0) m_state.add_data_loss(reader.pid(), DataLossKind::kUnknownLogRecords, visitor.skipped);
    return;
  }
  for (const auto& [what, count] : visitor.losses) m_state.add_collector_loss(std::nullopt, what, count);
  if (stats.truncated_bytes > 0) {
    m_state.add_data_loss(std::nullopt, DataLossKind::kTruncatedGpuMetricsLog, stats.truncated_bytes);
  }
  if (const std::uint64_t skipped = stats.unknown_records + stats.malformed_records + visitor.skipped; skipped > 0) {
    m_state.add_data_loss(std::nullopt, DataLossKind::kUnknownLogRecords, skipped);
  }
}

}  // namespace gpuscope::store::detail
