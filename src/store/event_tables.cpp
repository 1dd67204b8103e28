#include "store/event_tables.hpp"

#include "core/pytorch_ranges.hpp"

#include <algorithm>

#include "core/pytorch_ranges.hpp"
#include "store/data_loss_kinds.hpp"
#include "store/import_state.hpp"
#include "store/kernel_names.hpp"
#include "store/memory_tracker.hpp"
#include "store/record_text.hpp"

namespace gpuscope::store::detail {
namespace {

constexpr std::uint32_t kNotApplicable = 0xffffffffu;  // SyncRecord stream/event
constexpr std::uint32_t kUnknownStream = 0xffffffffu;  // KernelProfileRecord.stream_id

using rows::i64;

// KernelProfileRecord's launch facts: -1 = unknown.
[[nodiscard]] rows::OptInt known(std::int32_t v) { return v >= 0 ? rows::OptInt(v) : std::nullopt; }

[[nodiscard]] rows::OptInt unless_not_applicable(std::uint32_t v) {
  return v == kNotApplicable ? std::nullopt : rows::OptInt(v);
}

[[nodiscard]] rows::OptInt nonzero(std::uint64_t v) { return v == 0 ? std::nullopt : rows::OptInt(i64(v)); }

// Memory kinds that occupy the GPU's memory: counted in memory_events.in_use_bytes.
[[nodiscard]] bool counts_as_device_memory(std::uint8_t kind) {
  return kind == static_cast<std::uint8_t>(log::MemoryKind::kDevice) ||
         kind == static_cast<std::uint8_t>(log::MemoryKind::kDeviceStatic);
}

}  // namespace

EventTables::EventTables(ImportState& state, const EventLogReader& reader, const LogScan& scan,
                         std::vector<Window> windows, bool clip)
    : m_state(state),
      m_reader(reader),
      m_scan(scan),
      m_windows(std::move(windows)),
      m_clip(clip),
      m_pid(reader.pid()) {}

const Window* EventTables::window_at(std::uint64_t t) const {
  for (const Window& w : m_windows) {
    if (t >= w.start && t < w.end) return &w;
  }
  return nullptr;
}

bool EventTables::in_window(std::uint64_t t) const { return !m_clip || window_at(t) != nullptr; }

// GPU work stays if launched by a kept API call or started inside a window. A session window
// (gpuscope launch --session) holds only the work launched inside it: its launch calls are
// recorded only inside windows while kernel records stay on between them, so a kernel queued
// before the window opened would otherwise count in it (the first window, opened with kernel
// records off, never saw those).
bool EventTables::keep_gpu(std::uint32_t correlation_id, std::uint64_t start) const {
  if (!m_clip) return true;
  const auto it = m_scan.apis.find(correlation_id);
  if (it != m_scan.apis.end() && in_window(it->second.start_ns)) return true;
  const Window* w = window_at(start);
  if (w == nullptr) return false;
  return w->reason != "session" || m_scan.apis.empty();
}

std::int64_t EventTables::str(std::uint64_t log_id) {
  if (log_id == 0) return 0;
  if (log_id < m_string_ids.size() && m_string_ids[log_id] != 0) return m_string_ids[log_id];
  const std::int64_t id = m_state.intern(m_reader.string(log_id), m_reader.raw_string(log_id));
  if (log_id < m_reader.dense_string_limit()) {  // a larger id is damage: not kept
    if (log_id >= m_string_ids.size()) m_string_ids.resize(log_id + 1, 0);
    m_string_ids[log_id] = id;
  }
  return id;
}

std::pair<std::int64_t, std::int64_t> EventTables::kernel_names(std::uint64_t log_name, std::int64_t mangled_id) {
  return m_state.kernel_names(m_reader.string(log_name), mangled_id);
}

void EventTables::on_device(const log::DeviceRecord& r) {
  m_state.processes.add_device(m_pid, r, std::string(m_reader.string(r.name_string)));
}

void EventTables::on_kernel(const log::KernelRecord& r) {
  if (!keep_gpu(r.correlation_id, r.start_ns)) {
    ++m_clipped;
    return;
  }
  const std::int64_t mangled_id = str(r.name_string);
  const auto [name_id, short_name_id] = kernel_names(r.name_string, mangled_id);
  m_state.kernels.insert({
      .pid = i64(m_pid),
      .device_id = i64(r.device_id),
      .context_id = i64(r.context_id),
      .stream_id = i64(r.stream_id),
      .correlation_id = i64(r.correlation_id),
      .start_ns = i64(r.start_ns),
      .end_ns = i64(r.end_ns),
      .name_id = rows::id_or_null(name_id),
      .short_name_id = rows::id_or_null(short_name_id),
      .mangled_name_id = rows::id_or_null(mangled_id),
      .grid_x = std::int64_t{r.grid[0]},
      .grid_y = std::int64_t{r.grid[1]},
      .grid_z = std::int64_t{r.grid[2]},
      .block_x = std::int64_t{r.block[0]},
      .block_y = std::int64_t{r.block[1]},
      .block_z = std::int64_t{r.block[2]},
      .cluster_x = i64(r.cluster[0]),
      .cluster_y = i64(r.cluster[1]),
      .cluster_z = i64(r.cluster[2]),
      .registers_per_thread = i64(r.registers_per_thread),
      .static_shared_memory = std::int64_t{r.static_shared_memory},
      .dynamic_shared_memory = std::int64_t{r.dynamic_shared_memory},
      .local_memory_per_thread = i64(r.local_memory_per_thread),
      .graph_id = rows::id_or_null(i64(r.graph_id)),
      .graph_node_id = rows::id_or_null(i64(r.graph_node_id)),
      .launch_type = i64(r.launch_type),
  });
  ++m_state.result.rows.kernels;
  m_state.seen(r.start_ns, r.end_ns);
}

// Profiled launches are kept whole (no capture-window clipping: `gpuscope kernels`
// chooses its launches with its own filters).
void EventTables::on_kernel_profile(const log::KernelProfileRecord& r) {
  const std::int64_t mangled_id = str(r.name_string);
  const auto [name_id, short_name_id] = kernel_names(r.name_string, mangled_id);
  m_state.kernel_profiles.insert({
      .id = std::nullopt,  // a new rowid
      .pid = i64(m_pid),
      .device_id = i64(r.device_id),
      .context_id = i64(r.context_id),
      .stream_id = r.stream_id == kUnknownStream ? std::nullopt : rows::OptInt(r.stream_id),
      .correlation_id = i64(r.correlation_id),
      .launch_index = i64(r.launch_index),
      .launch_ns = i64(r.launch_ns),
      .name_id = rows::id_or_null(name_id),
      .short_name_id = rows::id_or_null(short_name_id),
      .mangled_name_id = rows::id_or_null(mangled_id),
      .grid_x = known(r.grid[0]),
      .grid_y = known(r.grid[1]),
      .grid_z = known(r.grid[2]),
      .block_x = known(r.block[0]),
      .block_y = known(r.block[1]),
      .block_z = known(r.block[2]),
      .registers_per_thread = known(r.registers_per_thread),
      .static_shared_memory = known(r.static_shared_memory),
      .dynamic_shared_memory = known(r.dynamic_shared_memory),
      .local_memory_per_thread = known(r.local_memory_per_thread),
      .metric_set = rows::text_or_null(m_reader.string(r.metric_set_string)),
      .passes = i64(r.passes),
  });
  m_profile_ids[r.profile_id] = m_state.db.last_insert_rowid();
  ++m_state.result.rows.kernel_profiles;
  m_state.seen(r.launch_ns, r.launch_ns);
}

void EventTables::on_kernel_metric(const log::KernelMetricRecord& r) {
  const auto it = m_profile_ids.find(r.profile_id);
  if (it == m_profile_ids.end()) return;  // its launch record was malformed
  m_state.kernel_metrics.insert({.profile_id = it->second, .metric_id = str(r.metric_string), .value = r.value});
  ++m_state.result.rows.kernel_metrics;
}

void EventTables::on_memcpy(const log::MemcpyRecord& r) {
  if (!keep_gpu(r.correlation_id, r.start_ns)) {
    ++m_clipped;
    return;
  }
  m_state.memcpys.insert({
      .pid = i64(m_pid),
      .device_id = i64(r.device_id),
      .context_id = i64(r.context_id),
      .stream_id = i64(r.stream_id),
      .correlation_id = i64(r.correlation_id),
      .start_ns = i64(r.start_ns),
      .end_ns = i64(r.end_ns),
      .bytes = i64(r.bytes),
      .copy_kind = memcpy_kind_text(r.copy_kind),
      .src_kind = memory_kind_text(r.src_kind),
      .dst_kind = memory_kind_text(r.dst_kind),
      .src_device_id = i64(r.src_device_id),
      .dst_device_id = i64(r.dst_device_id),
      .is_async = i64(r.is_async),
      .graph_id = rows::id_or_null(i64(r.graph_id)),
      .graph_node_id = rows::id_or_null(i64(r.graph_node_id)),
  });
  ++m_state.result.rows.memcpys;
  m_state.seen(r.start_ns, r.end_ns);
}

void EventTables::on_memset(const log::MemsetRecord& r) {
  if (!keep_gpu(r.correlation_id, r.start_ns)) {
    ++m_clipped;
    return;
  }
  m_state.memsets.insert({
      .pid = i64(m_pid),
      .device_id = i64(r.device_id),
      .context_id = i64(r.context_id),
      .stream_id = i64(r.stream_id),
      .correlation_id = i64(r.correlation_id),
      .start_ns = i64(r.start_ns),
      .end_ns = i64(r.end_ns),
      .bytes = i64(r.bytes),
      .value = i64(r.value),
      .memory_kind = memory_kind_text(r.memory_kind),
      .graph_id = rows::id_or_null(i64(r.graph_id)),
      .graph_node_id = rows::id_or_null(i64(r.graph_node_id)),
  });
  ++m_state.result.rows.memsets;
  m_state.seen(r.start_ns, r.end_ns);
}

void EventTables::on_api(const log::ApiRecord& r) {
  if (!in_window(r.start_ns)) {
    ++m_clipped;
    return;
  }
  auto [launch, added] = m_launch_names.try_emplace(r.name_string, false);
  if (added) launch->second = is_kernel_launch(m_reader.string(r.name_string));
  if (launch->second) ++m_launches_kept;

  auto [api_name, new_name] = m_api_names.try_emplace(r.name_string, 0);
  if (new_name) {
    api_name->second = m_state.intern(api_function_name(m_reader.string(r.name_string)));
  }
  m_state.api_calls.insert({
      .pid = i64(m_pid),
      .tid = i64(r.thread_id),
      .domain = api_domain_text(r.domain),
      .cbid = i64(r.cbid),
      .name_id = rows::id_or_null(api_name->second),
      .start_ns = i64(r.start_ns),
      .end_ns = i64(r.end_ns),
      .correlation_id = i64(r.correlation_id),
      .return_value = std::int64_t{r.return_value},
      .py_stack_id = py_stack(r.py_stack_id),
  });
  ++m_state.result.rows.api_calls;
  m_state.processes.add_thread(m_pid, r.thread_id);
  m_state.seen(r.start_ns, r.end_ns);
}

void EventTables::on_sync(const log::SyncRecord& r) {
  if (!in_window(r.start_ns)) {
    ++m_clipped;
    return;
  }
  const auto api = m_scan.apis.find(r.correlation_id);
  m_state.syncs.insert({
      .pid = i64(m_pid),
      .tid = api != m_scan.apis.end() ? rows::OptInt(api->second.tid) : std::nullopt,
      .context_id = i64(r.context_id),
      .stream_id = unless_not_applicable(r.stream_id),
      .event_id = unless_not_applicable(r.event_id),
      .sync_type = sync_type_text(r.sync_type),
      .start_ns = i64(r.start_ns),
      .end_ns = i64(r.end_ns),
      .correlation_id = i64(r.correlation_id),
  });
  ++m_state.result.rows.syncs;
  m_state.seen(r.start_ns, r.end_ns);
}

void EventTables::on_thread_name(const log::ThreadNameRecord& r) {
  m_state.processes.name_thread(m_pid, r.thread_id, std::string(m_reader.string(r.name_string)));
}

void EventTables::on_overhead(const log::OverheadRecord& r) {
  if (!in_window(r.start_ns)) {
    ++m_clipped;
    return;
  }
  m_state.overheads.insert({
      .pid = i64(m_pid),
      .overhead_kind = overhead_kind_text(r.overhead_kind),
      .object_id = i64(r.thread_or_device_id),
      .start_ns = i64(r.start_ns),
      .end_ns = i64(r.end_ns),
  });
  ++m_state.result.rows.overheads;
}

void EventTables::on_data_loss(const log::DataLossRecord& r) {
  std::string what(m_reader.string(r.what_string));
  if (what.empty()) what = data_loss_name(DataLossKind::kCollectorDataLoss);
  m_collector_losses[what] += r.count;
}

void EventTables::on_message(const log::MessageRecord& r) {
  m_state.messages.insert({
      .pid = i64(m_pid),
      .ts_ns = i64(r.ts_ns),
      .severity = message_severity_text(r.severity),
      .text = m_reader.string(r.text_string),
  });
  ++m_state.result.rows.messages;
}

namespace {
constexpr std::uint64_t kTorchOpText = std::uint64_t{1} << 63;  // far above any log string id
}  // namespace

void EventTables::on_torch_op(const log::TorchOpRecord& r) {
  log::NvtxRecord n{};
  n.ts_ns = r.ts_ns;
  n.thread_id = r.thread_id;
  switch (static_cast<log::TorchOpEventType>(r.type)) {
    case log::TorchOpEventType::kOpBegin:
      n.type = static_cast<std::uint8_t>(log::NvtxEventType::kPush);
      n.message_string = kTorchOpText | m_torch_ops.size();
      m_torch_ops.push_back(r);
      break;
    case log::TorchOpEventType::kModuleBegin:
      n.type = static_cast<std::uint8_t>(log::NvtxEventType::kPush);
      n.message_string = r.name_string;
      break;
    case log::TorchOpEventType::kEnd:
      n.type = static_cast<std::uint8_t>(log::NvtxEventType::kPop);
      break;
    default:
      return;  // a later collector's edge type: left out, as an unknown record kind
  }
  m_nvtx.push_back(n);
}

void EventTables::on_torch_op_cost(const log::TorchOpCostRecord& r) {
  m_state.set_torch_op_cost(r.op_ns, r.module_ns, std::string(m_reader.string(r.method_string)));
}

std::int64_t EventTables::nvtx_text(std::uint64_t message_string) {
  // A log's own NVTX record can carry the bit only when damaged: then it names no operator
  // record here and is read as the (damaged) string id it is.
  const std::uint64_t index = message_string & ~kTorchOpText;
  if ((message_string & kTorchOpText) == 0 || index >= m_torch_ops.size()) return str(message_string);
  const log::TorchOpRecord& r = m_torch_ops[index];
  return m_state.intern(
      core::op_range_text(m_reader.string(r.name_string), r.seq, r.op_id, m_reader.string(r.shapes_string)));
}

void EventTables::write_nvtx(const NvtxRange& range) {
  const log::NvtxRecord& open = *range.open;
  // Interned in this order (domain, then message): string ids depend on it.
  std::int64_t domain = 0;
  if (open.domain_id != 0) {
    const auto d = m_domains.find(open.domain_id);
    if (d != m_domains.end()) domain = str(d->second);
  }
  const std::int64_t text = nvtx_text(open.message_string);
  m_state.nvtx_events.insert({
      .id = range.id,
      .pid = i64(m_pid),
      .tid = i64(open.thread_id),
      .end_tid = i64(range.end_tid),
      .domain_id = rows::id_or_null(domain),
      .style = nvtx_style_text(range.style),
      .text_id = rows::id_or_null(text),
      .start_ns = i64(open.ts_ns),
      .end_ns = range.end_ns ? rows::OptInt(i64(*range.end_ns)) : std::nullopt,
      .depth = range.depth ? rows::OptInt(*range.depth) : std::nullopt,
      .parent_id = rows::id_or_null(range.parent_id),
      .color = open.has_color ? rows::OptInt(i64(open.color)) : std::nullopt,
      .category = i64(open.category),
  });
  ++m_state.result.rows.nvtx_events;
  m_state.processes.add_thread(m_pid, open.thread_id);
  m_state.processes.add_thread(m_pid, range.end_tid);
  m_state.seen(open.ts_ns, range.end_ns.value_or(open.ts_ns));
}

// Every allocation and free goes through the tracker, in time order (CUPTI's per-thread
// buffers reach the log out of order; the sort is stable, so equal times keep log order);
// only those inside the windows become rows.
void EventTables::write_memory_events() {
  std::stable_sort(m_memory.begin(), m_memory.end(),
                   [](const log::MemoryRecord& a, const log::MemoryRecord& b) { return a.ts_ns < b.ts_ns; });
  MemoryTracker tracker;
  using Op = log::MemoryOperation;
  for (const log::MemoryRecord& r : m_memory) {
    const bool keep = keep_gpu(r.correlation_id, r.ts_ns);
    const std::optional<std::int64_t> id = keep ? std::optional(m_state.next_memory_id()) : std::nullopt;
    const bool counted = counts_as_device_memory(r.memory_kind);
    MemoryTracker::Effect effect;
    effect.bytes = i64(r.bytes);
    if (r.operation == static_cast<std::uint8_t>(Op::kAlloc)) {
      effect = tracker.alloc(r.address, r.bytes, r.device_id, counted, id);
    } else if (r.operation == static_cast<std::uint8_t>(Op::kFree)) {
      effect = tracker.free(r.address, r.device_id, counted);
      if (!effect.matched) effect.bytes = i64(r.bytes);  // never seen allocated: as the record says
    }
    if (!keep) {
      ++m_clipped;
      continue;
    }
    const auto pool = static_cast<log::MemoryPoolType>(r.pool_type);
    m_state.memory_events.insert({
        .id = id,
        .pid = i64(m_pid),
        .device_id = i64(r.device_id),
        .context_id = unless_not_applicable(r.context_id),
        .stream_id = unless_not_applicable(r.stream_id),
        .correlation_id = i64(r.correlation_id),
        .ts_ns = i64(r.ts_ns),
        .operation = memory_operation_text(r.operation),
        .memory_kind = memory_kind_text(r.memory_kind),
        .address = i64(r.address),
        .bytes = effect.bytes,
        .is_async = r.is_async != 0 ? 1 : 0,
        .pool_type =
            pool == log::MemoryPoolType::kNone ? std::nullopt : rows::OptText(memory_pool_type_text(r.pool_type)),
        .pool_address = nonzero(r.pool_address),
        .pool_size_bytes = nonzero(r.pool_size),
        .pool_utilized_bytes =
            pool == log::MemoryPoolType::kLocal ? rows::OptInt(i64(r.pool_utilized_bytes)) : std::nullopt,
        .pool_release_threshold_bytes = nonzero(r.pool_release_threshold),
        .pool_min_bytes_to_keep = r.operation == static_cast<std::uint8_t>(Op::kPoolTrim)
                                      ? rows::OptInt(i64(r.pool_min_bytes_to_keep))
                                      : std::nullopt,
        .alloc_id = effect.alloc_row,
        .in_use_bytes = effect.in_use_bytes,
    });
    ++m_state.result.rows.memory_events;
    if (r.ts_ns != 0) m_state.seen(r.ts_ns, r.ts_ns);  // 0 = no timestamp
  }
  m_memory.clear();
  m_memory.shrink_to_fit();
  if (tracker.unmatched_frees() > 0) {
    m_state.add_data_loss(m_pid, DataLossKind::kUnmatchedMemoryFree, tracker.unmatched_frees());
  }
  if (tracker.replaced_allocations() > 0) {
    m_state.add_data_loss(m_pid, DataLossKind::kMemoryAllocOverLive, tracker.replaced_allocations());
  }
}

void EventTables::finish(bool ended_cleanly) {
  write_unresolved_py_frames();
  // NVTX: match in time order (the writer may interleave threads' batches).
  std::stable_sort(m_nvtx.begin(), m_nvtx.end(),
                   [](const log::NvtxRecord& a, const log::NvtxRecord& b) { return a.ts_ns < b.ts_ns; });
  NvtxRangeTracker tracker(
      [this](std::uint64_t ts) -> std::int64_t {
        if (!in_window(ts)) {
          ++m_clipped;
          return 0;
        }
        return m_state.next_nvtx_id();
      },
      [this](const NvtxRange& range) { write_nvtx(range); });
  for (const log::NvtxRecord& r : m_nvtx) tracker.process(r);
  tracker.close_all();
  m_nvtx.clear();
  m_torch_ops.clear();

  if (tracker.unmatched_pops() > 0) {
    m_state.add_data_loss(m_pid, DataLossKind::kUnmatchedNvtxPop, tracker.unmatched_pops());
  }
  if (tracker.unmatched_ends() > 0) {
    m_state.add_data_loss(m_pid, DataLossKind::kUnmatchedNvtxEnd, tracker.unmatched_ends());
  }
  if (tracker.unclosed() > 0) {
    m_state.add_data_loss(m_pid,
                          ended_cleanly ? DataLossKind::kUnclosedNvtxRange : DataLossKind::kUnclosedNvtxRangeAtCrash,
                          tracker.unclosed());
  }
  write_memory_events();
  for (const auto& [what, count] : m_collector_losses) {
    m_state.add_collector_loss(m_pid, what, count);
  }
  if (m_launches_kept > 0 && m_scan.kernel_records == 0) {
    m_state.add_data_loss(m_pid, DataLossKind::kMissingKernelRecords, m_launches_kept);
  }
}

}  // namespace gpuscope::store::detail
