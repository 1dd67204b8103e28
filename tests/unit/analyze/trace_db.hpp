// Test helper: an in-memory trace database with the real schema, filled by SQL.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <variant>

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
