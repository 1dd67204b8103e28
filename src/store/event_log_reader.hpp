// Reads one gpuscope event log (format: core/event_log_format.hpp).
//
// The file is memory-mapped read-only; records are handed to an EventLogVisitor
// one by one, in file order, as the packed structs of the format header (copied
// out, so they are properly aligned). String records are resolved by the reader
// into a per-log id -> string table, readable from the visitor at any time with
// string(id): a log writes each String record before its first use.
//
// Errors: open() returns a LogStatus; a file that is not a gpuscope log, or one
// written with another format version, is refused (kind kVersionMismatch, the
// message names both versions). A trailing record cut short by a crash/SIGKILL
// of the target is NOT an error: reading stops there and LogReadStats reports
// truncated_bytes. A damaged record header in the middle of a log (a size running past the
// end of the file, or reserved flags set), with whole records after it, is corruption, not a
// crash: the reader looks for the next offset where a chain of plausible record headers
// starts (known kinds, flags 0, sizes that fit: at least four in a row, or a chain ending
// exactly at the end of the file in two records or in the ProcessEnd record), skips the
// bytes before it, counts them in corrupt_bytes / corrupt_regions, and reads on; only when
// no such chain follows is the rest a truncated tail. Unknown record kinds are skipped and counted; records shorter
// than their struct are skipped and counted as malformed, and so are the
// variable-length GPU-metrics records whose size is not their struct plus the array
// their count announces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/event_log_format.hpp"

namespace gpuscope::store {

enum class LogErrorKind {
  kNone,
  kCannotOpen,       // missing file, permissions, mmap failure
  kNotALog,          // too short for a FileHeader, or wrong magic
  kVersionMismatch,  // magic fine, format_version != log::kFormatVersion
  kBadHeader,        // header_size smaller than the FileHeader
};

struct LogStatus {
  LogErrorKind kind = LogErrorKind::kNone;
  std::string message;              // plain-language reason, names the file
  std::uint32_t found_version = 0;  // set for kVersionMismatch

  [[nodiscard]] bool ok() const { return kind == LogErrorKind::kNone; }
};

struct LogReadStats {
  std::uint64_t file_bytes = 0;
  std::uint64_t records = 0;                   // whole records read (String records included)
  std::uint64_t truncated_bytes = 0;           // bytes after the last whole record (0 = clean)
  std::uint64_t corrupt_bytes = 0;             // bytes skipped over damaged records mid-log (0 = none)
  std::uint64_t corrupt_regions = 0;           // damaged places skipped (each cost at least one record)
  std::uint64_t first_corrupt_offset = 0;      // file offset of the first damaged record header
  std::uint64_t records_after_corruption = 0;  // whole records read after the first damage
  std::uint64_t unknown_records = 0;           // records of a kind this reader does not know
  std::uint64_t malformed_records = 0;         // known kind, payload shorter than its struct (or not
                                               // struct + array for a variable-length record)
};

/// Receives records in file order. Every method defaults to doing nothing.
class EventLogVisitor {
 public:
  virtual ~EventLogVisitor() = default;
  virtual void on_string(std::uint64_t /*id*/, std::string_view /*value*/) {}
  virtual void on_process(const log::ProcessRecord&) {}
  virtual void on_device(const log::DeviceRecord&) {}
  virtual void on_context(const log::ContextRecord&) {}
  virtual void on_kernel(const log::KernelRecord&) {}
  virtual void on_memcpy(const log::MemcpyRecord&) {}
  virtual void on_memset(const log::MemsetRecord&) {}
  virtual void on_api(const log::ApiRecord&) {}
  virtual void on_sync(const log::SyncRecord&) {}
  virtual void on_nvtx(const log::NvtxRecord&) {}
  virtual void on_nvtx_domain(const log::NvtxDomainRecord&) {}
  virtual void on_thread_name(const log::ThreadNameRecord&) {}
  virtual void on_overhead(const log::OverheadRecord&) {}
  virtual void on_data_loss(const log::DataLossRecord&) {}
  virtual void on_capture(const log::CaptureRecord&) {}
  virtual void on_process_end(const log::ProcessEndRecord&) {}
  virtual void on_message(const log::MessageRecord&) {}
  virtual void on_kernel_profile(const log::KernelProfileRecord&) {}
  virtual void on_kernel_metric(const log::KernelMetricRecord&) {}
  virtual void on_memory(const log::MemoryRecord&) {}
  virtual void on_rank(const log::RankRecord&) {}
  virtual void on_torch_op(const log::TorchOpRecord&) {}
  virtual void on_torch_op_cost(const log::TorchOpCostRecord&) {}
  virtual void on_py_frame(const log::PyFrameRecord&) {}
  virtual void on_py_stack(const log::PyStackRecord&) {}
  virtual void on_py_sample(const log::PySampleRecord&) {}
  /// `metric_ids`: the session's metric_count metric name string ids, in value order.
  virtual void on_gpu_metrics_session(const log::GpuMetricsSessionRecord&,
                                      std::span<const std::uint64_t> /*metric_ids*/) {}
  /// `values`: the sample's `count` values (NaN where CUPTI could not evaluate one). The
  /// span is valid during the call only.
  virtual void on_gpu_metric_sample(const log::GpuMetricSampleRecord&, std::span<const double> /*values*/) {}
};

class EventLogReader {
 public:
  EventLogReader() = default;
  ~EventLogReader();
  EventLogReader(const EventLogReader&) = delete;
  EventLogReader& operator=(const EventLogReader&) = delete;

  /// Maps `path` and validates its FileHeader (magic, format version, size).
  [[nodiscard]] LogStatus open(const std::string& path);

  /// Visits every whole record; may be called again for another pass (the
  /// string table is rebuilt on each pass). Requires a successful open().
  [[nodiscard]] LogReadStats read(EventLogVisitor& visitor);

  /// The string with log-local `id`, "" for 0 or an id not (yet) seen. Always valid
  /// UTF-8: text the program wrote that is not is repaired here, once (core/utf8.hpp:
  /// each ill-formed subpart becomes U+FFFD). The view stays valid while the reader is alive.
  [[nodiscard]] std::string_view string(std::uint64_t id) const;

  /// The bytes the log holds for `id` when string(id) had to be repaired; nullopt when
  /// they were valid UTF-8 (or the id is unknown). For the strings table's `raw` column.
  [[nodiscard]] std::optional<std::string_view> raw_string(std::uint64_t id) const;

  /// String ids below this can be numbered by this log: writers number strings 1, 2, 3...,
  /// and a log of N bytes holds at most N / 16 String records (at most 2^24). Tables indexed
  /// by log string id are sized by it; a larger id is damage and goes to a map, so a corrupt
  /// id cannot make a small log allocate a large table.
  [[nodiscard]] std::uint64_t dense_string_limit() const;

  [[nodiscard]] std::uint32_t pid() const { return m_pid; }
  [[nodiscard]] std::uint64_t file_bytes() const { return m_size; }
  [[nodiscard]] const std::string& path() const { return m_path; }

 private:
  void close();
  void add_string(std::uint64_t id, std::string_view value);
  /// After a damaged header at `from`: the offset of the next chain of plausible records, or
  /// nullopt when none follows (the rest is a truncated tail).
  [[nodiscard]] std::optional<std::size_t> resync(std::size_t from) const;

  std::string m_path;
  const char* m_data = nullptr;  // mmap of the whole file
  std::size_t m_size = 0;
  std::size_t m_body = 0;  // offset of the first record
  std::uint32_t m_pid = 0;
  // Writers number strings 1, 2, 3...: a vector serves them, a map the rest.
  std::vector<std::string_view> m_dense_strings;
  std::unordered_map<std::uint64_t, std::string_view> m_sparse_strings;
  // Repaired copies of strings that were not valid UTF-8 (deque: stable addresses), and
  // the original bytes of each, by id.
  std::deque<std::string> m_repaired;
  std::unordered_map<std::uint64_t, std::string_view> m_raw_strings;
  // The trailing arrays of GPU-metrics records, copied out aligned (reused per record).
  std::vector<std::uint64_t> m_ids;
  std::vector<double> m_values;
};

/// Text for a version mismatch, e.g. "log format version 2, this gpuscope reads
/// version 1: re-record with this gpuscope or use a newer one".
[[nodiscard]] std::string log_version_message(std::uint32_t found, std::uint32_t expected);

}  // namespace gpuscope::store
