// Test helper: an in-memory trace database with the real schema, filled through the typed
// row writer (store/row_writer.hpp), so a new column changes store/schema_columns.hpp only.
//
//   TraceDb t;
//   t.strings({{1, "k"}, {10, "cudaLaunchKernel"}});
//   t.kernel(100, 0, 7, 1, 1000, 2000, 1);                       // the common kernel row
//   t.add(rows::CaptureWindow{.pid = 100, .end_ns = 1000, .reason = "all"});
//   t.add<rows::Device>({{.pid = 1, .uuid = "GPU-a"}, {.pid = 2, .uuid = "GPU-b"}});
//
// Members a row leaves out are 0, "" or NULL (store/rows.hpp), as the importer would write
// them for a record that does not carry them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/report.hpp"
#include "store/database.hpp"
#include "store/row_writer.hpp"
#include "store/rows.hpp"
#include "store/schema.hpp"

namespace gpuscope::test {

namespace rows = store::rows;

class TraceDb {
 public:
  TraceDb() : m_db(":memory:", store::Database::Mode::kReadWriteCreate) { m_db.exec(store::create_schema_sql()); }
  store::Database& db() { return m_db; }

  /// Inserts one row of any trace table.
  template <class Row>
  void add(const Row& row) {
    store::insert(m_db, row);
  }
  /// Inserts rows of one table, in order.
  template <class Row>
  void add(std::initializer_list<Row> rows) {
    store::RowWriter<Row> w(m_db);
    for (const Row& r : rows) w.insert(r);
  }

  /// strings rows: (id, value).
  void strings(std::initializer_list<std::pair<std::int64_t, std::string_view>> values) {
    store::RowWriter<rows::String> w(m_db);
    for (const auto& [id, value] : values) w.insert({.id = id, .value = value});
  }

  /// A kernel row of context 1: 264×1×1 blocks of 256×1×1 threads, 32 registers, 1024 B
  /// static and 2048 B dynamic shared memory; name_id refers to strings.
  static rows::Kernel kernel_row(int pid, int device, int stream, int corr, long long start, long long end,
                                 int name_id) {
    return {.pid = pid,
            .device_id = device,
            .context_id = 1,
            .stream_id = stream,
            .correlation_id = corr,
            .start_ns = start,
            .end_ns = end,
            .name_id = name_id,
            .grid_x = 264,
            .grid_y = 1,
            .grid_z = 1,
            .block_x = 256,
            .block_y = 1,
            .block_z = 1,
            .registers_per_thread = 32,
            .static_shared_memory = 1024,
            .dynamic_shared_memory = 2048};
  }
  void kernel(int pid, int device, int stream, int corr, long long start, long long end, int name_id) {
    add(kernel_row(pid, device, stream, corr, start, end, name_id));
  }
  /// A synchronous pageable → device copy on device 0, stream 7, correlation id 0.
  void memcpy(int pid, std::string_view kind, long long start, long long end, long long bytes) {
    add(rows::Memcpy{.pid = pid,
                     .device_id = 0,
                     .context_id = 1,
                     .stream_id = 7,
                     .correlation_id = 0,
                     .start_ns = start,
                     .end_ns = end,
                     .bytes = bytes,
                     .copy_kind = kind,
                     .src_kind = "pageable",
                     .dst_kind = "device"});
  }
  // One memcpy on device 0 with every field the copy reports read.
  struct Copy {
    int pid = 100;
    int stream = 7;
    int corr = 0;
    long long start = 0, end = 0, bytes = 0;
    std::string kind = "HtoD", src = "pinned", dst = "device";
    int is_async = 1;
  };
  void copy(const Copy& c) {
    add(rows::Memcpy{.pid = c.pid,
                     .device_id = 0,
                     .context_id = 1,
                     .stream_id = c.stream,
                     .correlation_id = c.corr,
                     .start_ns = c.start,
                     .end_ns = c.end,
                     .bytes = c.bytes,
                     .copy_kind = c.kind,
                     .src_kind = c.src,
                     .dst_kind = c.dst,
                     .is_async = c.is_async});
  }
  /// A CUDA runtime API call that returned 0; name_id refers to strings; py_stack_id to
  /// py_stacks (the caller's Python stack, --python-callsites).
  void api(int pid, int tid, int name_id, long long start, long long end, int corr,
           rows::OptInt py_stack_id = std::nullopt) {
    add(rows::ApiCall{.pid = pid,
                      .tid = tid,
                      .domain = "runtime",
                      .cbid = 0,
                      .name_id = name_id,
                      .start_ns = start,
                      .end_ns = end,
                      .correlation_id = corr,
                      .return_value = 0,
                      .py_stack_id = py_stack_id});
  }
  /// Python call sites (py_frames, py_stacks) of `pid`: stack 1 = loader.py:123 Loader.__next__
  /// (/data/loader.py, the user's), stack 2 = torch's pin_memory.py:40 copy_to called from it.
  /// Strings 20-23 are the files and functions.
  void pin_memory_stacks(int pid) {
    strings({{20, "/data/loader.py"},
             {21, "/opt/conda/lib/python3.12/site-packages/torch/utils/data/_utils/pin_memory.py"},
             {22, "Loader.__next__"},
             {23, "copy_to"}});
    add({rows::PyFrame{.id = 1, .pid = pid, .file_id = 20, .function_id = 22, .line = 123, .first_line = 120},
         rows::PyFrame{.id = 2, .pid = pid, .file_id = 21, .function_id = 23, .line = 40, .first_line = 38}});
    add({rows::PyStack{.id = 1, .pid = pid, .parent_id = std::nullopt, .frame_id = 1, .depth = 0},
         rows::PyStack{.id = 2, .pid = pid, .parent_id = 1, .frame_id = 2, .depth = 1}});
  }
  /// A cc 9.0 GPU with 132 SMs (H100 SXM) seen by `pid` as device 0 (h100(): uuid GPU-<pid>).
  static rows::Device h100_row(int pid, std::string_view uuid) {
    return {.pid = pid,
            .device_id = 0,
            .name = "NVIDIA H100",
            .uuid = uuid,
            .cc_major = 9,
            .cc_minor = 0,
            .sm_count = 132,
            .max_threads_per_block = 1024,
            .max_warps_per_sm = 64,
            .max_blocks_per_sm = 32,
            .max_registers_per_sm = 65536,
            .max_registers_per_block = 65536,
            .max_shared_memory_per_sm = 233472,
            .max_shared_memory_per_block = 49152};
  }
  void h100(int pid = 100) {
    const std::string uuid = "GPU-" + std::to_string(pid);
    add(h100_row(pid, uuid));
  }

 private:
  store::Database m_db;
};

// Report accessors shared by the analyze tests.
inline std::size_t col(const Report& r, const std::string& name) {
  for (std::size_t i = 0; i < r.columns.size(); ++i)
    if (r.columns[i].name == name) return i;
  ADD_FAILURE() << "no column " << name << " in " << r.name;
  return 0;
}

template <typename T>
T cell(const Report& r, std::size_t row, const std::string& column) {
  const Cell& c = r.rows.at(row).at(col(r, column));
  EXPECT_TRUE(std::holds_alternative<T>(c)) << r.name << "." << column << " row " << row;
  return std::holds_alternative<T>(c) ? std::get<T>(c) : T{};
}

/// The warning notes of a report, each cut at its first ':' (the verdict's name).
inline std::vector<std::string> warnings(const Report& r) {
  std::vector<std::string> out;
  for (const Note& n : r.notes)
    if (n.level == NoteLevel::kWarning) out.push_back(n.text.substr(0, n.text.find(':')));
  return out;
}

inline bool has_note(const Report& r, NoteLevel level, const std::string& fragment) {
  return std::any_of(r.notes.begin(), r.notes.end(),
                     [&](const Note& n) { return n.level == level && n.text.find(fragment) != std::string::npos; });
}

inline bool has_note(const Report& r, const std::string& fragment) {
  return std::any_of(r.notes.begin(), r.notes.end(),
                     [&](const Note& n) { return n.text.find(fragment) != std::string::npos; });
}

}  // namespace gpuscope::test
