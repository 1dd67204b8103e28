// Appends records to a gpuscope event log (format: core/event_log_format.hpp).
//
// Used by the in-process collector's background writer thread: records are
// batched in memory and written with one write(2) per flush(), so what was
// flushed survives a crash or SIGKILL of the process. Not thread-safe: one
// thread owns a writer. No exceptions: errors are returned and remembered.
//
// Write errors (disk full: ENOSPC; file size limit: EFBIG, `ulimit -f`) stop the log for
// good: the file is cut back to its last whole flush, so it stays readable with everything
// written before; later records are dropped (counted, not buffered: the traced program's
// memory does not grow); failed() turns true once. SIGXFSZ, which the kernel sends to the
// writing thread at the size limit and which would kill the traced program, is blocked
// around each write and consumed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/event_log_format.hpp"

namespace gpuscope::store {

class EventLogWriter {
 public:
  EventLogWriter() = default;
  ~EventLogWriter();
  EventLogWriter(const EventLogWriter&) = delete;
  EventLogWriter& operator=(const EventLogWriter&) = delete;

  /// Creates `path` (O_EXCL: never clobbers) and writes the FileHeader.
  /// Returns false and sets *error (errno text) on failure.
  [[nodiscard]] bool open(const std::string& path, std::uint32_t pid, std::string* error);

  /// Appends one fixed-size record to the batch.
  template <class T>
  void add(log::RecordKind kind, const T& payload) {
    add_raw(kind, &payload, sizeof(T));
  }
  void add_raw(log::RecordKind kind, const void* payload, std::uint32_t size);

  /// Returns the id of `s`, adding a String record to the batch the first time.
  /// Returns 0 for an empty string.
  [[nodiscard]] std::uint64_t intern(std::string_view s);

  /// Writes the batch to the file (one write(2) loop). Returns false on error, and on
  /// every call after one (see failed()).
  bool flush();
  void close();

  [[nodiscard]] bool is_open() const { return m_fd >= 0; }
  [[nodiscard]] std::uint64_t records_written() const { return m_records; }
  [[nodiscard]] std::uint64_t bytes_written() const { return m_bytes; }
  [[nodiscard]] std::size_t pending_bytes() const { return m_batch.size(); }
  [[nodiscard]] const std::string& last_error() const { return m_error; }
  /// True once a write failed: the log ends at its last whole flush, nothing more is written.
  [[nodiscard]] bool failed() const { return m_failed; }
  /// Records added after the failure (not written).
  [[nodiscard]] std::uint64_t records_dropped() const { return m_dropped; }

 private:
  int m_fd = -1;
  std::vector<char> m_batch;
  std::unordered_map<std::string, std::uint64_t> m_strings;
  std::uint64_t m_next_string = 1;
  std::uint64_t m_records = 0;
  std::uint64_t m_bytes = 0;
  std::string m_error;
  bool m_failed = false;
  std::uint64_t m_dropped = 0;
};

}  // namespace gpuscope::store
