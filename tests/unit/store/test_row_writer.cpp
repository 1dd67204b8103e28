#include "store/row_writer.hpp"

#include <gtest/gtest.h>

#include <string>

#include "store/database.hpp"
#include "store/schema.hpp"

namespace gpuscope::store {
namespace {

class RowWriterTest : public ::testing::Test {
 protected:
  RowWriterTest() { m_db.exec(create_tables_sql()); }
  Database m_db{":memory:", Database::Mode::kReadWriteCreate};
};

template <class Row>
std::vector<std::string_view> columns_of_table() {
  for (const TableDef& t : tables()) {
    if (t.name == Row::kTable) {
      std::vector<std::string_view> names;
      for (const ColumnDef& c : t.columns) names.push_back(c.name);
      return names;
    }
  }
  ADD_FAILURE() << "no table " << Row::kTable;
  return {};
}

template <class... Row>
void expect_rows_match_schema() {
  std::size_t n = 0;
  (
      [&] {
        const std::vector<std::string_view> row(std::begin(Row::kColumns), std::end(Row::kColumns));
        EXPECT_EQ(row, columns_of_table<Row>()) << Row::kTable;
        ++n;
      }(),
      ...);
  EXPECT_EQ(n, tables().size()) << "a table has no row struct";
}

TEST_F(RowWriterTest, EveryTableHasARowWithItsColumnsInOrder) {
  expect_rows_match_schema<rows::Meta, rows::String, rows::Process, rows::Thread, rows::Device, rows::Kernel,
                           rows::KernelProfile, rows::KernelMetric, rows::Memcpy, rows::Memset, rows::MemoryEvent,
                           rows::GpuMetricName, rows::GpuMetric, rows::GpuMetricsSession, rows::ApiCall, rows::PyStack,
                           rows::PySample, rows::PyFrame, rows::Sync, rows::NvtxEvent, rows::TorchOp, rows::TorchModule,
                           rows::TorchStep, rows::TorchOpActivity, rows::TorchMemoryStat, rows::TorchMemorySegment,
                           rows::TorchMemoryEvent, rows::Request, rows::Overhead, rows::CaptureWindow, rows::DataLoss,
                           rows::Message, rows::MergedTrace, rows::MergedPid>();
}

TEST_F(RowWriterTest, InsertSql) {
  EXPECT_EQ(detail::insert_sql<rows::Thread>(Conflict::kAbort),
            "INSERT INTO threads(pid, tid, name) VALUES (?1, ?2, ?3)");
  EXPECT_EQ(detail::insert_sql<rows::Meta>(Conflict::kIgnore),
            "INSERT OR IGNORE INTO meta(key, value) VALUES (?1, ?2)");
}

TEST_F(RowWriterTest, KernelRowReadBack) {
  RowWriter<rows::Kernel> w(m_db);
  w.insert({.pid = 42,
            .device_id = 1,
            .context_id = 2,
            .stream_id = 7,
            .correlation_id = 9,
            .start_ns = 1000,
            .end_ns = 2500,
            .name_id = rows::id_or_null(0),
            .grid_x = 128,
            .block_x = 256,
            .registers_per_thread = 32,
            .graph_id = 5,
            .launch_type = 1});
  w.insert({.pid = 43, .start_ns = 3000, .end_ns = 3100});  // the writer is reused
  Statement st = m_db.prepare(
      "SELECT id, pid, device_id, stream_id, correlation_id, end_ns - start_ns, name_id, grid_x, "
      "grid_y, block_x, registers_per_thread, graph_id, graph_node_id, launch_type "
      "FROM kernels ORDER BY id");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.column_int(0), 1);  // id nullopt: SQLite's rowid
  EXPECT_EQ(st.column_int(1), 42);
  EXPECT_EQ(st.column_int(2), 1);
  EXPECT_EQ(st.column_int(3), 7);
  EXPECT_EQ(st.column_int(4), 9);
  EXPECT_EQ(st.column_int(5), 1500);
  EXPECT_TRUE(st.is_null(6));  // id_or_null(0)
  EXPECT_EQ(st.column_int(7), 128);
  EXPECT_EQ(st.column_int(8), 0);  // Int members default to 0, not NULL
  EXPECT_EQ(st.column_int(9), 256);
  EXPECT_EQ(st.column_int(10), 32);
  EXPECT_EQ(st.column_int(11), 5);
  EXPECT_TRUE(st.is_null(12));  // OptInt members default to NULL
  EXPECT_EQ(st.column_int(13), 1);
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.column_int(0), 2);
  EXPECT_EQ(st.column_int(1), 43);
  EXPECT_TRUE(st.is_null(11));  // nothing left over from the first row's bindings
  EXPECT_FALSE(st.step());
}

TEST_F(RowWriterTest, TextRealAndNullReadBack) {
  insert(m_db, rows::Thread{.pid = 1, .tid = 2, .name = "main"});
  insert(m_db, rows::Thread{.pid = 1, .tid = 3, .name = rows::text_or_null("")});
  EXPECT_EQ(m_db.query_text("SELECT name FROM threads WHERE tid = 2"), "main");
  EXPECT_EQ(m_db.query_text("SELECT name FROM threads WHERE tid = 3"), std::nullopt);

  insert(m_db, rows::KernelMetric{.profile_id = 4, .metric_id = 5, .value = 0.25});
  Statement st = m_db.prepare("SELECT value, typeof(value) FROM kernel_metrics");
  ASSERT_TRUE(st.step());
  EXPECT_DOUBLE_EQ(st.column_double(0), 0.25);
  EXPECT_EQ(st.column_text(1), "real");

  insert(m_db, rows::DataLoss{.what = "truncated_log", .count = 3, .severity = "data_loss", .detail = ""});
  Statement dl = m_db.prepare("SELECT pid, what, count, severity, detail FROM data_loss");
  ASSERT_TRUE(dl.step());
  EXPECT_TRUE(dl.is_null(0));
  EXPECT_EQ(dl.column_text(1), "truncated_log");
  EXPECT_EQ(dl.column_int(2), 3);
  EXPECT_FALSE(dl.is_null(4));  // Text "" stays "", not NULL
  EXPECT_EQ(dl.column_text(4), "");
}

TEST_F(RowWriterTest, ConflictIgnoreKeepsTheFirstRow) {
  RowWriter<rows::Meta> w(m_db, Conflict::kIgnore);
  w.insert({.key = "host", .value = "node1"});
  w.insert({.key = "host", .value = "node2"});
  EXPECT_EQ(m_db.query_text("SELECT value FROM meta WHERE key = 'host'"), "node1");
  EXPECT_THROW(insert(m_db, rows::Meta{.key = "host", .value = "node3"}), DatabaseError);
}

}  // namespace
}  // namespace gpuscope::store
