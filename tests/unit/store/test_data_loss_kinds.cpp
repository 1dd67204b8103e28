#include "store/data_loss_kinds.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace gpuscope::store {
namespace {

TEST(DataLossKinds, EveryKindDeclaredOnceWithSeverityAndWording) {
  std::set<DataLossKind> kinds;
  for (const DataLossKindDef& d : kDataLossKinds) {
    EXPECT_TRUE(kinds.insert(d.kind).second) << d.name << " declared twice";
    EXPECT_FALSE(d.name.empty());
    EXPECT_FALSE(d.wording.empty()) << d.name;
    const std::string_view sev = loss_severity_text(d.severity);
    EXPECT_TRUE(sev == "info" || sev == "warning" || sev == "data_loss") << d.name;
    EXPECT_EQ(&data_loss_def(d.kind), &d) << d.name;
  }
  // Every enumerator up to the last has a row.
  EXPECT_EQ(kinds.size(), static_cast<std::size_t>(DataLossKind::kCollectorDataLoss) + 1);
}

TEST(DataLossKinds, NamesAreUniqueExceptTheTwoUnclosedNvtxVariants) {
  std::set<std::string_view> names;
  for (const DataLossKindDef& d : kDataLossKinds) {
    if (d.kind == DataLossKind::kUnclosedNvtxRangeAtCrash) continue;  // same name, info
    EXPECT_TRUE(names.insert(d.name).second) << d.name;
  }
  EXPECT_EQ(data_loss_name(DataLossKind::kUnclosedNvtxRangeAtCrash), data_loss_name(DataLossKind::kUnclosedNvtxRange));
}

TEST(DataLossKinds, SeverityTextRoundTrips) {
  for (LossSeverity s : {LossSeverity::kInfo, LossSeverity::kWarning, LossSeverity::kDataLoss}) {
    EXPECT_EQ(parse_loss_severity(loss_severity_text(s)), s);
  }
  EXPECT_EQ(loss_severity_text(LossSeverity::kDataLoss), "data_loss");
  EXPECT_EQ(loss_severity_text(LossSeverity::kInfo), "info");
  EXPECT_EQ(loss_severity_text(LossSeverity::kWarning), "warning");
  // Unknown or missing text is shown as a warning, never hidden.
  EXPECT_EQ(parse_loss_severity(""), LossSeverity::kWarning);
  EXPECT_EQ(parse_loss_severity("error"), LossSeverity::kWarning);
}

TEST(DataLossKinds, CollectorNames) {
  EXPECT_EQ(collector_loss_kind("cupti_dropped_records"), DataLossKind::kCuptiDroppedRecords);
  EXPECT_EQ(collector_loss_kind("api_records_dropped"), DataLossKind::kApiRecordsDropped);
  EXPECT_EQ(collector_loss_kind("host_events_dropped"), DataLossKind::kHostEventsDropped);
  EXPECT_EQ(collector_loss_kind("gpu_metrics_overflow"), DataLossKind::kGpuMetricsOverflow);
  EXPECT_EQ(collector_loss_kind("truncated_log"), std::nullopt);  // the importer's, not the collector's
  EXPECT_EQ(collector_loss_kind("from_a_newer_collector"), std::nullopt);
}

// The names, severities and details stored in traces before the kinds were declared in
// one place: a trace must not change.
TEST(DataLossKinds, StoredTextUnchanged) {
  struct Case {
    DataLossKind kind;
    std::string_view name, severity;
    std::uint64_t count;
    std::string_view detail, expected;
  };
  const Case cases[] = {
      {DataLossKind::kUnreadableLog, "unreadable_log", "data_loss", 1, "x.gslog: not an event log",
       "x.gslog: not an event log (log skipped; the other logs were imported)"},
      {DataLossKind::kTruncatedLog, "truncated_log", "data_loss", 0, "",
       "process 42 ended without closing its log (crash or kill): events after the last flush, "
       "at most ~200 ms, are missing"},
      {DataLossKind::kTruncatedLog, "truncated_log", "data_loss", 7, "; a partly written record (7 bytes) was dropped",
       "process 42 ended without closing its log (crash or kill): events after the last flush, "
       "at most ~200 ms, are missing; a partly written record (7 bytes) was dropped"},
      {DataLossKind::kCorruptLog, "corrupt_log", "data_loss", 176, " in 1 place(s)",
       "the event log of process 42 is damaged (not cut short by a crash: whole records follow the damage): 176 "
       "bytes could not be read and were skipped in 1 place(s)"},
      {DataLossKind::kCaptureWindowRecovered, "capture_window_recovered", "warning", 1, "cudaProfilerApi: rebuilt",
       "the event log of process 42 holds no capture record although the run used --capture-range "
       "cudaProfilerApi: rebuilt"},
      {DataLossKind::kCaptureWindowUnknown, "capture_window_unknown", "data_loss", 60, "cudaProfilerApi (x)",
       "capture window unknown: the event log of process 42 holds no capture record although the run used "
       "--capture-range cudaProfilerApi (x)"},
      {DataLossKind::kUnknownLogRecords, "unknown_log_records", "warning", 3, "",
       "3 log records of an unknown kind or size were skipped (collector and importer from "
       "different gpuscope builds?)"},
      {DataLossKind::kUnmatchedNvtxPop, "unmatched_nvtx_pop", "warning", 2, "",
       "2 nvtxRangePop calls had no open push range on their thread and domain; they were "
       "ignored (unbalanced push/pop in the program)"},
      {DataLossKind::kUnmatchedNvtxEnd, "unmatched_nvtx_end", "warning", 1, "",
       "1 nvtxRangeEnd calls had no matching nvtxRangeStart; they were ignored"},
      {DataLossKind::kUnclosedNvtxRange, "unclosed_nvtx_range", "warning", 4, "",
       "4 NVTX ranges were never closed (missing pop/end); they have end_ns NULL"},
      {DataLossKind::kUnclosedNvtxRangeAtCrash, "unclosed_nvtx_range", "info", 4, "",
       "4 NVTX ranges were still open when the process died; they have end_ns NULL"},
      {DataLossKind::kMissingKernelRecords, "missing_kernel_records", "data_loss", 5, "",
       "5 kernel launches but no kernel records: another CUPTI client (torch.profiler, ncu, "
       "nsys) may have taken over the activity buffers"},
      {DataLossKind::kUnmatchedMemoryFree, "unmatched_memory_free", "info", 2, "",
       "2 frees of memory the trace never saw allocated (allocated before recording started, or the record "
       "was lost): not subtracted from memory in use, which never goes below what the trace saw"},
      {DataLossKind::kMemoryAllocOverLive, "memory_alloc_over_live", "warning", 1, "",
       "1 allocations at the address of an allocation still live in the trace: its free record was lost; the "
       "old allocation was counted as freed at that moment"},
      {DataLossKind::kTruncatedGpuMetricsLog, "truncated_gpu_metrics_log", "data_loss", 24, "",
       "the GPU-metrics sampler's log ends in a partly written record (24 bytes, dropped): the launcher stopped "
       "while writing it (killed?); samples after the last whole record are missing"},
      {DataLossKind::kCuptiDroppedRecords, "cupti_dropped_records", "data_loss", 9, "",
       "CUPTI dropped 9 activity records (its buffers filled faster than they were drained): "
       "the GPU timeline has gaps; trace fewer activity kinds or a shorter range"},
      {DataLossKind::kApiRecordsDropped, "api_records_dropped", "data_loss", 6, "",
       "the collector reported 6 lost (api_records_dropped)"},
      {DataLossKind::kHostEventsDropped, "host_events_dropped", "data_loss", 6, "",
       "the collector reported 6 lost (host_events_dropped)"},
      {DataLossKind::kGpuMetricsOverflow, "gpu_metrics_overflow", "data_loss", 12, "",
       "GPU metric samples lost: the PM-sampling hardware buffer overflowed 12 time(s) before the sampler read "
       "it (gpu_metrics has gaps there); use a lower --gpu-metrics rate"},
      {DataLossKind::kCollectorDataLoss, "collector_data_loss", "data_loss", 6, "",
       "the collector reported 6 lost (collector_data_loss)"},
  };
  for (const Case& c : cases) {
    const DataLossKindDef& d = data_loss_def(c.kind);
    EXPECT_EQ(d.name, c.name);
    EXPECT_EQ(loss_severity_text(d.severity), c.severity) << c.name;
    EXPECT_EQ(describe_data_loss(c.kind, c.count, 42u, c.detail), c.expected) << c.name;
  }
  // A collector name this build does not know keeps its name in the wording.
  EXPECT_EQ(describe_data_loss(DataLossKind::kCollectorDataLoss, 2, 42u, {}, "future_drops"),
            "the collector reported 2 lost (future_drops)");
}

}  // namespace
}  // namespace gpuscope::store
