// Test helper: an in-memory trace database with the real schema, filled by SQL.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "store/database.hpp"
#include "core/report.hpp"
#include "store/schema.hpp"

namespace gpuscope::test {

class TraceDb {
 public:
  TraceDb() : m_db(":memory:", store::Database::Mode::kReadWriteCreate) {
    m_db.exec(store::create_schema_sql());
  }
  store::Database& db() { return m_db; }
  void exec(const std::string& sql) { m_db.exec(sql); }

  // One kernel row; name_id refers to strings.
  void kernel(int pid, int device, int stream, int corr, long long start, long long end, int name_id) {
    exec("INSERT INTO kernels (pid, device_id, context_id, stream_id, correlation_id, start_ns, end_ns, "
         "name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, "
         "static_shared_memory, dynamic_shared_memory) VALUES (" +
         std::to_string(pid) + "," + std::to_string(device) + ",1," + std::to_string(stream) + "," +
         std::to_string(corr) + "," + std::to_string(start) + "," + std::to_string(end) + "," +
         std::to_string(name_id) + ",264,1,1,256,1,1,32,1024,2048)");
  }
  void memcpy(int pid, const std::string& kind, long long start, long long end, long long bytes) {
    exec("INSERT INTO memcpys (pid, device_id, context_id, stream_id, correlation_id, start_ns, end_ns, "
         "bytes, copy_kind, src_kind, dst_kind) VALUES (" +
         std::to_string(pid) + ",0,1,7,0," + std::to_string(start) + "," + std::to_string(end) + "," +
         std::to_string(bytes) + ",'" + kind + "','pageable','device')");
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
    exec("INSERT INTO memcpys (pid, device_id, context_id, stream_id, correlation_id, start_ns, end_ns, bytes, "
         "copy_kind, src_kind, dst_kind, is_async) VALUES (" +
         std::to_string(c.pid) + ",0,1," + std::to_string(c.stream) + "," + std::to_string(c.corr) + "," +
         std::to_string(c.start) + "," + std::to_string(c.end) + "," + std::to_string(c.bytes) + ",'" + c.kind +
         "','" + c.src + "','" + c.dst + "'," + std::to_string(c.is_async) + ")");
  }
  // One CUDA API call; name_id refers to strings.
  void api(int pid, int tid, int name_id, long long start, long long end, int corr) {
    exec("INSERT INTO api_calls (pid, tid, domain, cbid, name_id, start_ns, end_ns, correlation_id, return_value) "
         "VALUES (" + std::to_string(pid) + "," + std::to_string(tid) + ",'runtime',0," + std::to_string(name_id) +
         "," + std::to_string(start) + "," + std::to_string(end) + "," + std::to_string(corr) + ",0)");
  }
  // A cc 9.0 GPU with 132 SMs (H100 SXM) seen by `pid` as device 0, uuid GPU-<pid>.
  void h100(int pid = 100) {
    exec("INSERT INTO devices (pid, device_id, name, uuid, cc_major, cc_minor, sm_count, max_threads_per_block, "
         "max_warps_per_sm, max_blocks_per_sm, max_registers_per_sm, max_registers_per_block, "
         "max_shared_memory_per_sm, max_shared_memory_per_block) VALUES (" +
         std::to_string(pid) + ", 0, 'NVIDIA H100', 'GPU-" + std::to_string(pid) +
         "', 9, 0, 132, 1024, 64, 32, 65536, 65536, 233472, 49152)");
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
  return std::any_of(r.notes.begin(), r.notes.end(), [&](const Note& n) {
    return n.level == level && n.text.find(fragment) != std::string::npos;
  });
}

inline bool has_note(const Report& r, const std::string& fragment) {
  return std::any_of(r.notes.begin(), r.notes.end(),
                     [&](const Note& n) { return n.text.find(fragment) != std::string::npos; });
}

}  // namespace gpuscope::test
