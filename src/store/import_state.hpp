// What the importer's passes share while one trace is written: the database and its
// row writers, the global string table, the ImportResult being built, the per-process
// tables (store/process_tables.hpp) and the data_loss rows. One per import_logs() call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "store/data_loss_kinds.hpp"
#include "store/importer.hpp"
#include "store/log_scan.hpp"
#include "store/process_tables.hpp"
#include "store/row_writer.hpp"

namespace gpuscope::store::detail {

class ImportState {
 public:
  explicit ImportState(Database& db);

  /// strings.id of `s`, written on first use; 0 for "" (stored as NULL by *_id columns).
  /// `raw`: the program's original bytes when `s` is their UTF-8 repair (strings.raw).
  [[nodiscard]] std::int64_t intern(std::string_view s, std::optional<std::string_view> raw = std::nullopt);
  /// (demangled, base name) strings.id of a kernel's mangled name, demangled once per trace.
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> kernel_names(std::string_view mangled, std::int64_t mangled_id);
  /// Widens the trace's time span (meta.duration_ns) to cover [start, end].
  void seen(std::uint64_t start, std::uint64_t end);
  [[nodiscard]] std::uint64_t duration_ns() const { return m_last_ns >= m_first_ns ? m_last_ns - m_first_ns : 0; }
  /// nvtx_events.id for the next range: ids are trace-wide, in opening order.
  [[nodiscard]] std::int64_t next_nvtx_id() { return m_next_nvtx_id++; }
  /// memory_events.id for the next row (a free names its allocation's row).
  [[nodiscard]] std::int64_t next_memory_id() { return m_next_memory_id++; }
  /// py_frames.id / py_stacks.id for the next row: trace-wide (a log's ids are its own).
  [[nodiscard]] std::int64_t next_py_frame_id() { return m_next_py_frame_id++; }
  [[nodiscard]] std::int64_t next_py_stack_id() { return m_next_py_stack_id++; }

  /// Records a data_loss row of a declared kind (store/data_loss_kinds.hpp); `detail` fills
  /// the wording's {detail}. Anything but info also becomes a warning line.
  void add_data_loss(std::optional<std::uint32_t> pid, DataLossKind kind, std::uint64_t count,
                     std::string_view detail = {});
  /// A loss the collector (or the GPU-metrics sampler, pid nullopt) reported as `what` (DataLossRecord.what_string):
  /// stored under that name, with its declaration, or kCollectorDataLoss's severity and wording if undeclared.
  void add_collector_loss(std::optional<std::uint32_t> pid, std::string_view what, std::uint64_t count);
  /// Writes every data_loss row recorded so far.
  void write_data_loss();
  /// What gpuscope's PyTorch observer measured it costs per operator and module call
  /// (log::TorchOpCostRecord), the first process's that has one: meta rows
  /// tracer_torch_op_cost_ns and tracer_torch_module_cost_ns (ns; left out when NaN) and
  /// tracer_torch_cost_method, in torch_cost_meta.
  void set_torch_op_cost(double op_ns, double module_ns, const std::string& method);
  std::vector<std::pair<std::string, std::string>> torch_cost_meta;

  Database& db;
  ImportResult result;
  ProcessTables processes;
  RowWriter<rows::Kernel> kernels;
  RowWriter<rows::KernelProfile> kernel_profiles;
  RowWriter<rows::KernelMetric> kernel_metrics;
  RowWriter<rows::Memcpy> memcpys;
  RowWriter<rows::Memset> memsets;
  RowWriter<rows::ApiCall> api_calls;
  RowWriter<rows::PyFrame> py_frames;
  RowWriter<rows::PyStack> py_stacks;
  RowWriter<rows::PySample> py_samples;
  RowWriter<rows::MemoryEvent> memory_events;
  RowWriter<rows::Sync> syncs;
  RowWriter<rows::NvtxEvent> nvtx_events;
  RowWriter<rows::TorchMemoryStat> torch_memory_stats;
  RowWriter<rows::TorchMemorySegment> torch_memory_segments;
  RowWriter<rows::TorchMemoryEvent> torch_memory_events;
  RowWriter<rows::Request> requests;
  RowWriter<rows::Overhead> overheads;
  RowWriter<rows::Message> messages;
  // A log lost its capture records (importer.cpp recover_capture_windows): meta.capture_window.
  bool capture_window_unknown = false;
  bool capture_window_recovered = false;

 private:
  void add_loss_row(std::optional<std::uint32_t> pid, std::string what, std::uint64_t count, LossSeverity severity,
                    std::string detail);

  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  RowWriter<rows::String> m_strings_writer;
  std::unordered_map<std::string, std::int64_t, Hash, std::equal_to<>> m_strings;
  // strings.id of a mangled name -> (demangled id, base name id).
  std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>> m_kernel_names;
  std::uint64_t m_first_ns = kOpenEnd;
  std::uint64_t m_last_ns = 0;
  std::int64_t m_next_nvtx_id = 1;
  std::int64_t m_next_memory_id = 1;
  std::int64_t m_next_py_frame_id = 1;
  std::int64_t m_next_py_stack_id = 1;
};

}  // namespace gpuscope::store::detail
