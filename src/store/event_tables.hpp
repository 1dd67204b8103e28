// The importer's second pass over one event log (event_tables.cpp; the Python frames, stacks and
// samples in event_tables_python.cpp): writes the event tables (kernels,
// kernel_profiles, kernel_metrics, memcpys, memsets, memory_events, api_calls, syncs,
// nvtx_events, overheads, messages, py_frames, py_stacks, py_samples) through the row writers of ImportState, clipped
// to the log's capture windows, and hands NVTX records to an NvtxRangeTracker and allocations and frees (in time order)
// to a MemoryTracker.
//
// Clipping: CPU-side events (API calls, NVTX, syncs, overheads) stay when they start
// inside a window; GPU work stays when it starts inside one or was launched by an API
// call that did (joined by correlation id through the first pass). Profiled launches
// are kept whole. Every event dropped by clipping counts in clipped().
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "store/event_log_reader.hpp"
#include "store/log_scan.hpp"
#include "store/nvtx_range_tracker.hpp"
#include "store/rows.hpp"

namespace gpuscope::store::detail {

class ImportState;

class EventTables final : public EventLogVisitor {
 public:
  /// `clip` false: keep everything (the log has no capture edges).
  EventTables(ImportState& state, const EventLogReader& reader, const LogScan& scan, std::vector<Window> windows,
              bool clip);

  void on_device(const log::DeviceRecord& r) override;
  void on_kernel(const log::KernelRecord& r) override;
  void on_memcpy(const log::MemcpyRecord& r) override;
  void on_memset(const log::MemsetRecord& r) override;
  void on_api(const log::ApiRecord& r) override;
  void on_sync(const log::SyncRecord& r) override;
  void on_nvtx(const log::NvtxRecord& r) override { m_nvtx.push_back(r); }
  void on_nvtx_domain(const log::NvtxDomainRecord& r) override { m_domains[r.domain_id] = r.name_string; }
  void on_thread_name(const log::ThreadNameRecord& r) override;
  void on_overhead(const log::OverheadRecord& r) override;
  void on_data_loss(const log::DataLossRecord& r) override;
  void on_message(const log::MessageRecord& r) override;
  void on_kernel_profile(const log::KernelProfileRecord& r) override;
  void on_kernel_metric(const log::KernelMetricRecord& r) override;
  void on_memory(const log::MemoryRecord& r) override { m_memory.push_back(r); }
  /// gpuscope's PyTorch observer: range edges read as NVTX push/pop of the default domain,
  /// operator text made as PyTorch's NVTX observer writes it (core::op_range_text).
  void on_torch_op(const log::TorchOpRecord& r) override;
  void on_torch_op_cost(const log::TorchOpCostRecord& r) override;
  void on_py_frame(const log::PyFrameRecord& r) override;
  void on_py_stack(const log::PyStackRecord& r) override;
  void on_py_sample(const log::PySampleRecord& r) override;

  /// After the pass: NVTX ranges (matched in time order), memory events (tracked in time
  /// order) and this log's data_loss rows (NVTX problems, unmatched frees, collector-reported
  /// losses, missing kernel records).
  /// `ended_cleanly`: the process closed its log (open NVTX ranges are then a warning).
  void finish(bool ended_cleanly);

  [[nodiscard]] std::int64_t clipped() const { return m_clipped; }

 private:
  [[nodiscard]] const Window* window_at(std::uint64_t t) const;  // the window holding t, or nullptr
  [[nodiscard]] bool in_window(std::uint64_t t) const;
  [[nodiscard]] bool keep_gpu(std::uint32_t correlation_id, std::uint64_t start) const;
  [[nodiscard]] std::int64_t str(std::uint64_t log_id);
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> kernel_names(std::uint64_t log_name, std::int64_t mangled_id);
  void write_nvtx(const NvtxRange& range);
  [[nodiscard]] std::int64_t nvtx_text(std::uint64_t message_string);
  // py_stacks.id of a log's stack id (given on first mention); nullopt for 0.
  [[nodiscard]] rows::OptInt py_stack(std::uint32_t log_stack_id);
  [[nodiscard]] std::int64_t py_frame_id(std::uint32_t log_frame_id);
  void write_unresolved_py_frames();  // and calls naming stacks never defined lose them
  void write_memory_events();

  ImportState& m_state;
  const EventLogReader& m_reader;
  const LogScan& m_scan;
  std::vector<Window> m_windows;
  bool m_clip;
  std::uint32_t m_pid;
  std::int64_t m_clipped = 0;
  std::vector<std::int64_t> m_string_ids;  // log string id -> strings.id (0 = not yet)
  std::vector<log::NvtxRecord> m_nvtx;
  std::vector<log::MemoryRecord> m_memory;
  // Operator begin records of gpuscope's PyTorch observer; the NvtxRecord made from one holds
  // kTorchOpText | its index here as message_string (its text is made when it is written).
  std::vector<log::TorchOpRecord> m_torch_ops;
  std::unordered_map<std::uint64_t, std::uint64_t> m_domains;   // NVTX domain -> log string
  std::unordered_map<std::uint64_t, bool> m_launch_names;       // API name string -> launches
  std::unordered_map<std::uint64_t, std::int64_t> m_api_names;  // log string -> strings.id, suffix dropped
  std::map<std::string, std::uint64_t> m_collector_losses;      // what -> count
  std::uint64_t m_launches_kept = 0;
  std::unordered_map<std::uint64_t, std::int64_t> m_profile_ids;  // log profile_id -> kernel_profiles.id
  std::unordered_map<std::uint32_t, std::int64_t> m_py_frames;    // log frame_id -> py_frames.id
  std::unordered_map<std::uint32_t, std::int64_t> m_py_stacks;    // log stack_id -> py_stacks.id
  std::unordered_set<std::uint32_t> m_py_frames_written;          // log frame_ids with a py_frames row
  std::unordered_set<std::uint32_t> m_py_stacks_written;          // log stack_ids with a py_stacks row
};

}  // namespace gpuscope::store::detail
