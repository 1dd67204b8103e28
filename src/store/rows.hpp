// One row struct per trace table, generated from store/schema_columns.hpp: the members
// are the table's columns, in order, with the types that file gives them. Write rows with
// store/row_writer.hpp.
//
//   rows::Thread t{.pid = 42, .tid = 43, .name = "main"};
//
// Text members are std::string_view: what they view must outlive the insert() call
// (the writer copies it into SQLite; it keeps nothing after).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "store/schema_columns.hpp"

namespace gpuscope::store::rows {

using Int = std::int64_t;
using OptInt = std::optional<std::int64_t>;
using Text = std::string_view;
using OptText = std::optional<std::string_view>;
using Real = double;
using OptReal = std::optional<double>;
/// Bytes bound as a BLOB (not text): for data that need not be UTF-8.
struct Blob {
  std::string_view bytes;
};
using OptBlob = std::optional<Blob>;

/// An event log's unsigned field as SQLite's INTEGER (ids, ns, counts: all below 2^63).
[[nodiscard]] inline std::int64_t i64(std::uint64_t v) { return static_cast<std::int64_t>(v); }
/// nullopt for 0: for *_id columns where 0 means "none" (strings ids, graph ids).
[[nodiscard]] inline OptInt id_or_null(std::int64_t id) { return id == 0 ? std::nullopt : OptInt(id); }
/// nullopt for "": for TEXT columns that are NULL when unknown.
[[nodiscard]] inline OptText text_or_null(std::string_view s) { return s.empty() ? std::nullopt : OptText(s); }

#define GPUSCOPE_ROW_MEMBER(name, type, sql_type, unit, doc) type name{};
#define GPUSCOPE_ROW_COLUMN(name, type, sql_type, unit, doc) std::string_view(#name),
#define GPUSCOPE_ROW_VISIT(name, type, sql_type, unit, doc) f(row.name);
// kTable: the table name; kColumns: column names in declaration order;
// visit(row, f): f(member) for each column in that order.
#define GPUSCOPE_DEFINE_ROW(Struct, table, COLUMNS)                                \
  struct Struct {                                                                  \
    COLUMNS(GPUSCOPE_ROW_MEMBER)                                                   \
    static constexpr std::string_view kTable = table;                              \
    static constexpr std::string_view kColumns[] = {COLUMNS(GPUSCOPE_ROW_COLUMN)}; \
    template <class F>                                                             \
    static void visit(const Struct& row, F&& f) {                                  \
      COLUMNS(GPUSCOPE_ROW_VISIT)                                                  \
    }                                                                              \
  };

GPUSCOPE_DEFINE_ROW(Meta, "meta", GPUSCOPE_COLUMNS_META)
GPUSCOPE_DEFINE_ROW(String, "strings", GPUSCOPE_COLUMNS_STRINGS)
GPUSCOPE_DEFINE_ROW(Process, "processes", GPUSCOPE_COLUMNS_PROCESSES)
GPUSCOPE_DEFINE_ROW(Thread, "threads", GPUSCOPE_COLUMNS_THREADS)
GPUSCOPE_DEFINE_ROW(Device, "devices", GPUSCOPE_COLUMNS_DEVICES)
GPUSCOPE_DEFINE_ROW(Kernel, "kernels", GPUSCOPE_COLUMNS_KERNELS)
GPUSCOPE_DEFINE_ROW(KernelProfile, "kernel_profiles", GPUSCOPE_COLUMNS_KERNEL_PROFILES)
GPUSCOPE_DEFINE_ROW(KernelMetric, "kernel_metrics", GPUSCOPE_COLUMNS_KERNEL_METRICS)
GPUSCOPE_DEFINE_ROW(Memcpy, "memcpys", GPUSCOPE_COLUMNS_MEMCPYS)
GPUSCOPE_DEFINE_ROW(Memset, "memsets", GPUSCOPE_COLUMNS_MEMSETS)
GPUSCOPE_DEFINE_ROW(MemoryEvent, "memory_events", GPUSCOPE_COLUMNS_MEMORY_EVENTS)
GPUSCOPE_DEFINE_ROW(GpuMetricName, "gpu_metric_names", GPUSCOPE_COLUMNS_GPU_METRIC_NAMES)
GPUSCOPE_DEFINE_ROW(GpuMetric, "gpu_metrics", GPUSCOPE_COLUMNS_GPU_METRICS)
GPUSCOPE_DEFINE_ROW(GpuMetricsSession, "gpu_metrics_sessions", GPUSCOPE_COLUMNS_GPU_METRICS_SESSIONS)
GPUSCOPE_DEFINE_ROW(ApiCall, "api_calls", GPUSCOPE_COLUMNS_API_CALLS)
GPUSCOPE_DEFINE_ROW(PyFrame, "py_frames", GPUSCOPE_COLUMNS_PY_FRAMES)
GPUSCOPE_DEFINE_ROW(PyStack, "py_stacks", GPUSCOPE_COLUMNS_PY_STACKS)
GPUSCOPE_DEFINE_ROW(PySample, "py_samples", GPUSCOPE_COLUMNS_PY_SAMPLES)
GPUSCOPE_DEFINE_ROW(Sync, "syncs", GPUSCOPE_COLUMNS_SYNCS)
GPUSCOPE_DEFINE_ROW(NvtxEvent, "nvtx_events", GPUSCOPE_COLUMNS_NVTX_EVENTS)
GPUSCOPE_DEFINE_ROW(TorchOp, "torch_ops", GPUSCOPE_COLUMNS_TORCH_OPS)
GPUSCOPE_DEFINE_ROW(TorchModule, "torch_modules", GPUSCOPE_COLUMNS_TORCH_MODULES)
GPUSCOPE_DEFINE_ROW(TorchStep, "torch_steps", GPUSCOPE_COLUMNS_TORCH_STEPS)
GPUSCOPE_DEFINE_ROW(TorchOpActivity, "torch_op_activities", GPUSCOPE_COLUMNS_TORCH_OP_ACTIVITIES)
GPUSCOPE_DEFINE_ROW(TorchMemoryStat, "torch_memory_stats", GPUSCOPE_COLUMNS_TORCH_MEMORY_STATS)
GPUSCOPE_DEFINE_ROW(TorchMemorySegment, "torch_memory_segments", GPUSCOPE_COLUMNS_TORCH_MEMORY_SEGMENTS)
GPUSCOPE_DEFINE_ROW(TorchMemoryEvent, "torch_memory_events", GPUSCOPE_COLUMNS_TORCH_MEMORY_EVENTS)
GPUSCOPE_DEFINE_ROW(Request, "requests", GPUSCOPE_COLUMNS_REQUESTS)
GPUSCOPE_DEFINE_ROW(Overhead, "overheads", GPUSCOPE_COLUMNS_OVERHEADS)
GPUSCOPE_DEFINE_ROW(CaptureWindow, "capture_windows", GPUSCOPE_COLUMNS_CAPTURE_WINDOWS)
GPUSCOPE_DEFINE_ROW(DataLoss, "data_loss", GPUSCOPE_COLUMNS_DATA_LOSS)
GPUSCOPE_DEFINE_ROW(Message, "messages", GPUSCOPE_COLUMNS_MESSAGES)
GPUSCOPE_DEFINE_ROW(MergedTrace, "merged_traces", GPUSCOPE_COLUMNS_MERGED_TRACES)
GPUSCOPE_DEFINE_ROW(MergedPid, "merged_pids", GPUSCOPE_COLUMNS_MERGED_PIDS)

#undef GPUSCOPE_DEFINE_ROW
#undef GPUSCOPE_ROW_VISIT
#undef GPUSCOPE_ROW_COLUMN
#undef GPUSCOPE_ROW_MEMBER

}  // namespace gpuscope::store::rows
