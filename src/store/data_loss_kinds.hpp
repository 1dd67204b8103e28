// The kinds of data loss a trace can record, declared once: the name stored in
// data_loss.what, the severity stored in data_loss.severity, and the wording of
// data_loss.detail (Perfetto's storage/stats.h is the model). The importer names
// a kind and a count (store/import_state.hpp: add_data_loss); the collector names
// the kinds it reports through DataLossRecord.what_string with data_loss_name();
// readers turn data_loss.severity back into LossSeverity with parse_loss_severity()
// instead of comparing strings.
//
// Header-only and constexpr (no SQLite, no allocation) so the injected collector
// can include it. describe_data_loss(), which builds the detail text, lives in
// data_loss_kinds.cpp (gpuscope_store).
//
// Wording templates: "{count}", "{pid}", "{what}" and "{detail}" are replaced by
// the count, the process id, the stored kind name and the detail the importer
// computed (an error message, an extra clause); nothing else is interpreted.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::store {

/// data_loss.severity. Stored as "info", "warning", "data_loss".
enum class LossSeverity { kInfo, kWarning, kDataLoss };

enum class DataLossKind {
  kUnreadableLog,             // a log that could not be opened; pid NULL
  kTruncatedLog,              // a log not closed by its process (crash, kill)
  kCorruptLog,                // damaged records in the middle of a log, skipped (not a crash)
  kCaptureWindowRecovered,    // a log with no capture record: its window rebuilt from what it recorded
  kCaptureWindowUnknown,      // a log with no capture record and nothing to rebuild its window from
  kUnknownLogRecords,         // records of an unknown kind or size, skipped
  kUnmatchedNvtxPop,          // nvtxRangePop with no open push range
  kUnmatchedNvtxEnd,          // nvtxRangeEnd with no matching start
  kUnclosedNvtxRange,         // ranges never closed by a process that exited cleanly
  kUnclosedNvtxRangeAtCrash,  // ranges still open when the process died (same name, info)
  kMissingKernelRecords,      // kernel launches but no kernel records
  kUnmatchedMemoryFree,       // a free of an allocation the trace never saw
  kMemoryAllocOverLive,       // an allocation at the address of a live one (its free was lost)
  kTruncatedGpuMetricsLog,    // the GPU-metrics sampler's log ends in a partly written record
  kUnreadableTorchMemory,     // a torch-memory-PID.json that could not be read or parsed
  kUnreadableRequests,        // lines of a requests-PID.jsonl (bench serve) that could not be read
  kTorchMemoryHistoryFull,    // PyTorch's allocator history reached its limit: the earliest events dropped
  // Reported by the collector (DataLossRecord.what_string):
  kCuptiDroppedRecords,    // CUPTI's activity buffers overflowed
  kApiRecordsDropped,      // a per-thread API ring was full
  kHostEventsDropped,      // the host event queue was full
  kTorchOpRecordsDropped,  // a per-thread PyTorch operator ring was full
  kGpuMetricsOverflow,     // the GPU-metrics sampler's PM-sampling hardware buffer overflowed
  kPyStacksTorn,           // Python stacks read while their frames changed, discarded
  kPyFramesUnresolved,     // Python frames whose file and line could not be read
  kCollectorDataLoss,      // a collector record with no name; also the wording of unknown names
};

struct DataLossKindDef {
  DataLossKind kind;
  std::string_view name;  // data_loss.what, exactly as stored
  LossSeverity severity;
  bool from_collector;       // written by the collector as a DataLossRecord
  std::string_view wording;  // data_loss.detail template (see the file comment)
};

inline constexpr std::array<DataLossKindDef, 25> kDataLossKinds{{
    {DataLossKind::kUnreadableLog, "unreadable_log", LossSeverity::kDataLoss, false,
     "{detail} (log skipped; the other logs were imported)"},
    {DataLossKind::kTruncatedLog, "truncated_log", LossSeverity::kDataLoss, false,
     "process {pid} ended without closing its log (crash or kill): events after the last "
     "flush, at most ~200 ms, are missing{detail}"},
    {DataLossKind::kCorruptLog, "corrupt_log", LossSeverity::kDataLoss, false,
     "the event log of process {pid} is damaged (not cut short by a crash: whole records follow the damage): "
     "{count} bytes could not be read and were skipped{detail}"},
    {DataLossKind::kCaptureWindowRecovered, "capture_window_recovered", LossSeverity::kWarning, false,
     "the event log of process {pid} holds no capture record although the run used --capture-range {detail}"},
    {DataLossKind::kCaptureWindowUnknown, "capture_window_unknown", LossSeverity::kDataLoss, false,
     "capture window unknown: the event log of process {pid} holds no capture record although the run used "
     "--capture-range {detail}"},
    {DataLossKind::kUnknownLogRecords, "unknown_log_records", LossSeverity::kWarning, false,
     "{count} log records of an unknown kind or size were skipped (collector and importer from "
     "different gpuscope builds?)"},
    {DataLossKind::kUnmatchedNvtxPop, "unmatched_nvtx_pop", LossSeverity::kWarning, false,
     "{count} nvtxRangePop calls had no open push range on their thread and domain; they were "
     "ignored (unbalanced push/pop in the program)"},
    {DataLossKind::kUnmatchedNvtxEnd, "unmatched_nvtx_end", LossSeverity::kWarning, false,
     "{count} nvtxRangeEnd calls had no matching nvtxRangeStart; they were ignored"},
    {DataLossKind::kUnclosedNvtxRange, "unclosed_nvtx_range", LossSeverity::kWarning, false,
     "{count} NVTX ranges were never closed (missing pop/end); they have end_ns NULL"},
    {DataLossKind::kUnclosedNvtxRangeAtCrash, "unclosed_nvtx_range", LossSeverity::kInfo, false,
     "{count} NVTX ranges were still open when the process died; they have end_ns NULL"},
    {DataLossKind::kMissingKernelRecords, "missing_kernel_records", LossSeverity::kDataLoss, false,
     "{count} kernel launches but no kernel records: another CUPTI client (torch.profiler, ncu, "
     "nsys) may have taken over the activity buffers"},
    {DataLossKind::kUnmatchedMemoryFree, "unmatched_memory_free", LossSeverity::kInfo, false,
     "{count} frees of memory the trace never saw allocated (allocated before recording started, or the "
     "record was lost): not subtracted from memory in use, which never goes below what the trace saw"},
    {DataLossKind::kMemoryAllocOverLive, "memory_alloc_over_live", LossSeverity::kWarning, false,
     "{count} allocations at the address of an allocation still live in the trace: its free record was lost; "
     "the old allocation was counted as freed at that moment"},
    {DataLossKind::kTruncatedGpuMetricsLog, "truncated_gpu_metrics_log", LossSeverity::kDataLoss, false,
     "the GPU-metrics sampler's log ends in a partly written record ({count} bytes, dropped): the launcher "
     "stopped while writing it (killed?); samples after the last whole record are missing"},
    {DataLossKind::kUnreadableTorchMemory, "unreadable_torch_memory", LossSeverity::kDataLoss, false,
     "{detail} (PyTorch's allocator state of that process is missing; the rest was imported)"},
    {DataLossKind::kUnreadableRequests, "unreadable_requests", LossSeverity::kDataLoss, false,
     "{count} line(s) of {detail} could not be read: those requests are missing from the requests table"},
    {DataLossKind::kTorchMemoryHistoryFull, "torch_memory_history_full", LossSeverity::kDataLoss, false,
     "PyTorch's allocator kept its latest {count} events only{detail}: torch_memory_events misses the earlier "
     "ones; raise GPUSCOPE_TORCH_MEMORY_ENTRIES"},
    {DataLossKind::kCuptiDroppedRecords, "cupti_dropped_records", LossSeverity::kDataLoss, true,
     "CUPTI dropped {count} activity records (its buffers filled faster than they were drained): "
     "the GPU timeline has gaps; trace fewer activity kinds or a shorter range"},
    {DataLossKind::kApiRecordsDropped, "api_records_dropped", LossSeverity::kDataLoss, true,
     "the collector reported {count} lost ({what})"},
    {DataLossKind::kHostEventsDropped, "host_events_dropped", LossSeverity::kDataLoss, true,
     "the collector reported {count} lost ({what})"},
    {DataLossKind::kTorchOpRecordsDropped, "torch_op_records_dropped", LossSeverity::kDataLoss, true,
     "the collector dropped {count} PyTorch operator or module range edges (a thread's ring was full): "
     "torch_ops and torch_modules miss those calls and their neighbours may nest wrongly"},
    {DataLossKind::kGpuMetricsOverflow, "gpu_metrics_overflow", LossSeverity::kDataLoss, true,
     "GPU metric samples lost: the PM-sampling hardware buffer overflowed {count} time(s) before the sampler "
     "read it (gpu_metrics has gaps there); use a lower --gpu-metrics rate"},
    {DataLossKind::kPyStacksTorn, "py_stacks_torn", LossSeverity::kWarning, true,
     "{count} Python stacks were read while their thread's frames changed (torn: a frame's owner, code object or "
     "instruction did not check out); they were discarded, not stored"},
    {DataLossKind::kPyFramesUnresolved, "py_frames_unresolved", LossSeverity::kWarning, true,
     "{count} Python frames could not be resolved to file and line (the interpreter was finalizing or the code "
     "object was gone); py_frames holds them with file, function and line NULL"},
    {DataLossKind::kCollectorDataLoss, "collector_data_loss", LossSeverity::kDataLoss, true,
     "the collector reported {count} lost ({what})"},
}};

/// The declaration of `kind`.
[[nodiscard]] constexpr const DataLossKindDef& data_loss_def(DataLossKind kind) {
  for (const DataLossKindDef& d : kDataLossKinds) {
    if (d.kind == kind) return d;
  }
  return kDataLossKinds.back();  // unreachable: every enumerator has a row (tested)
}

/// data_loss.what of `kind`, e.g. "cupti_dropped_records".
[[nodiscard]] constexpr std::string_view data_loss_name(DataLossKind kind) { return data_loss_def(kind).name; }

/// The collector-reported kind stored as `what`; nullopt for a name this build does not
/// declare (a newer collector): the importer then keeps the name and uses
/// kCollectorDataLoss's severity and wording.
[[nodiscard]] constexpr std::optional<DataLossKind> collector_loss_kind(std::string_view what) {
  for (const DataLossKindDef& d : kDataLossKinds) {
    if (d.from_collector && d.name == what) return d.kind;
  }
  return std::nullopt;
}

/// "info", "warning" or "data_loss": data_loss.severity as stored.
[[nodiscard]] constexpr std::string_view loss_severity_text(LossSeverity s) {
  switch (s) {
    case LossSeverity::kInfo:
      return "info";
    case LossSeverity::kDataLoss:
      return "data_loss";
    case LossSeverity::kWarning:
      break;
  }
  return "warning";
}

/// data_loss.severity read back. Anything but "info" and "data_loss" (NULL, a typo, a
/// future level) reads as kWarning, so an unknown row is shown rather than hidden.
[[nodiscard]] constexpr LossSeverity parse_loss_severity(std::string_view text) {
  for (LossSeverity s : {LossSeverity::kInfo, LossSeverity::kDataLoss}) {
    if (loss_severity_text(s) == text) return s;
  }
  return LossSeverity::kWarning;
}

/// data_loss.detail for `kind`: its wording with the placeholders filled in. `what` is the
/// stored name (differs from the declared one only for collector names this build does not
/// know); empty = the declared name.
[[nodiscard]] std::string describe_data_loss(DataLossKind kind, std::uint64_t count, std::optional<std::uint32_t> pid,
                                             std::string_view detail = {}, std::string_view what = {});

}  // namespace gpuscope::store
