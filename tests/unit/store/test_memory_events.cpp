// memory_events at import (gpuscope trace --cuda-memory-usage): allocations matched to their
// frees by store/memory_tracker.hpp in time order, the memory in use after each, pool rows,
// capture windows, and logs written before the MemoryRecord existed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "log_builder.hpp"
#include "store/database.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"

namespace gpuscope::store {
namespace {

using log::MemoryKind;
using log::MemoryOperation;
using test::LogBuilder;
using test::TempDir;

constexpr std::int64_t kMiB = 1 << 20;

struct Row {
  std::int64_t id = 0;
  std::int64_t device = 0;
  std::int64_t ts = 0;
  std::string op, kind;
  std::int64_t address = 0, bytes = 0;
  std::optional<std::int64_t> alloc_id, in_use;
  std::optional<std::string> api_name;
};

std::vector<Row> rows(Database& db) {
  std::vector<Row> out;
  Statement st = db.prepare(
      "SELECT id, device_id, ts_ns, operation, memory_kind, address, bytes, alloc_id, in_use_bytes, api_name "
      "FROM v_memory ORDER BY ts_ns, id");
  while (st.step()) {
    Row r;
    r.id = st.column_int(0);
    r.device = st.column_int(1);
    r.ts = st.column_int(2);
    r.op = st.column_text(3);
    r.kind = st.column_text(4);
    r.address = st.column_int(5);
    r.bytes = st.column_int(6);
    if (!st.is_null(7)) r.alloc_id = st.column_int(7);
    if (!st.is_null(8)) r.in_use = st.column_int(8);
    if (!st.is_null(9)) r.api_name = st.column_text(9);
    out.push_back(r);
  }
  return out;
}

class MemoryEvents : public ::testing::Test {
 protected:
  std::string log(std::string_view name) { return m_dir.file(name); }
  ImportResult import(const std::vector<std::string>& logs) {
    ImportOptions opts;
    opts.overwrite = true;
    opts.command = "python train.py";
    return import_logs(logs, m_db_path, opts);
  }
  Database db() { return open_trace(m_db_path); }

  TempDir m_dir;
  std::string m_db_path = m_dir.file("trace.sqlite");
};

// Two devices; alloc/free pairs (one free logged before its allocation: CUPTI's per-thread
// buffers arrive out of order), a free of memory never seen allocated, pinned host memory,
// and a pool with a stream-ordered allocation.
TEST_F(MemoryEvents, InUseIsAllocationsMinusFreesPerDevice) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1'000);
    b.device(0, "NVIDIA H100 80GB HBM3", 0xab);
    b.device(1, "NVIDIA H100 80GB HBM3", 0xcd);
    b.api(10'000, 11'000, 100, 1, "cudaMalloc_v3020");
    b.alloc(10'500, 0x1000, 2 * kMiB, 1);
    b.api(30'000, 31'000, 100, 3, "cudaFree_v3020");
    b.free(30'500, 0x1000, 0, 3);  // logged before the allocation below: sorted by time
    b.api(20'000, 21'000, 100, 2, "cudaMalloc_v3020");
    b.alloc(20'500, 0x2000, 20 * kMiB, 2);
    b.alloc(25'000, 0x3000, 4 * kMiB, 4, /*device=*/1);
    b.free(40'000, 0x9000, 8 * kMiB, 5);                                    // never seen allocated
    b.alloc(45'000, 0x7000, kMiB, 6, 0, MemoryKind::kPinned);               // host memory
    b.pool(MemoryOperation::kPoolCreate, 5'000, 0x50000000, 32 * kMiB, 7);  // a pool
    b.alloc_async(6'000, 0x50000000, 8 * kMiB, 0x50000000, 32 * kMiB, /*stream=*/13, 8);
    b.pool(MemoryOperation::kPoolTrim, 50'000, 0x50000000, 8 * kMiB, 9, 0, /*min_bytes_to_keep=*/kMiB);
    b.end(60'000);
    b.close();
  }
  const ImportResult result = import({log("a.gslog")});
  EXPECT_EQ(result.rows.memory_events, 9);
  Database d = db();
  const std::vector<Row> r = rows(d);
  ASSERT_EQ(r.size(), 9u);
  // In time order; ids follow it.
  const std::vector<std::string> ops = {"pool_create", "alloc", "alloc", "alloc",    "alloc",
                                        "free",        "free",  "alloc", "pool_trim"};
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_EQ(r[i].op, ops[i]) << i;
    if (i > 0) {
      EXPECT_GT(r[i].id, r[i - 1].id) << i;
    }
  }
  // pool_create: no level.
  EXPECT_FALSE(r[0].in_use.has_value());
  EXPECT_EQ(r[0].bytes, 32 * kMiB);
  // Stream-ordered allocation from the pool: counted while allocated.
  EXPECT_EQ(r[1].ts, 6'000);
  EXPECT_EQ(r[1].in_use, 8 * kMiB);
  // cudaMalloc 2 MiB, then 20 MiB on device 0; 4 MiB on device 1 apart.
  EXPECT_EQ(r[2].in_use, 10 * kMiB);
  EXPECT_EQ(r[2].api_name, std::optional<std::string>("cudaMalloc"));
  EXPECT_EQ(r[3].in_use, 30 * kMiB);
  EXPECT_EQ(r[4].device, 1);
  EXPECT_EQ(r[4].in_use, 4 * kMiB);
  EXPECT_FALSE(r[4].api_name.has_value());  // its call was not recorded
  // The free of 0x1000: matched to the 2 MiB allocation (its own record said 0 bytes).
  EXPECT_EQ(r[5].ts, 30'500);
  EXPECT_EQ(r[5].alloc_id, std::optional<std::int64_t>(r[2].id));
  EXPECT_EQ(r[5].bytes, 2 * kMiB);
  EXPECT_EQ(r[5].in_use, 28 * kMiB);
  EXPECT_EQ(r[5].api_name, std::optional<std::string>("cudaFree"));
  // A free of memory never seen allocated: in use unchanged, not negative, no alloc_id.
  EXPECT_FALSE(r[6].alloc_id.has_value());
  EXPECT_EQ(r[6].bytes, 8 * kMiB);
  EXPECT_EQ(r[6].in_use, 28 * kMiB);
  // Pinned host memory: a row, no level.
  EXPECT_EQ(r[7].kind, "pinned");
  EXPECT_FALSE(r[7].in_use.has_value());
  EXPECT_FALSE(r[8].in_use.has_value());

  // Pool facts.
  EXPECT_EQ(d.query_text("SELECT pool_type FROM memory_events WHERE operation = 'pool_trim'").value_or(""), "local");
  EXPECT_EQ(d.query_int("SELECT pool_min_bytes_to_keep FROM memory_events WHERE operation = 'pool_trim'"), kMiB);
  EXPECT_EQ(d.query_int("SELECT stream_id FROM memory_events WHERE is_async = 1"), 13);
  EXPECT_EQ(d.query_int("SELECT pool_size_bytes FROM memory_events WHERE is_async = 1"), 32 * kMiB);
  EXPECT_EQ(d.query_int("SELECT COUNT(*) FROM memory_events WHERE is_async = 0 AND stream_id IS NOT NULL"), 0);
  EXPECT_EQ(d.query_int("SELECT COUNT(*) FROM memory_events WHERE operation = 'pool_create' AND context_id IS NULL"),
            1);

  // The unseen free is counted in data_loss, as info.
  EXPECT_EQ(d.query_int("SELECT count FROM data_loss WHERE what = 'unmatched_memory_free'"), 1);
  EXPECT_EQ(d.query_text("SELECT severity FROM data_loss WHERE what = 'unmatched_memory_free'").value_or(""), "info");
}

// Allocations before and after a capture window get no row, but the level counts them: a
// free inside the window of an allocation made before it subtracts it (no alloc_id).
TEST_F(MemoryEvents, CaptureWindowsKeepRowsButLevelsCountEverything) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1'000);
    b.device(0, "GPU");
    b.alloc(10'000, 0x1000, 4 * kMiB);
    b.capture(15'000, true);
    b.alloc(20'000, 0x2000, 2 * kMiB);
    b.free(30'000, 0x1000, 0);  // the record's size is not needed: the allocation's counts
    b.capture(35'000, false, "cudaProfilerStop");
    b.alloc(40'000, 0x3000, 8 * kMiB);
    b.end(50'000);
    b.close();
  }
  const ImportResult result = import({log("a.gslog")});
  EXPECT_EQ(result.events_outside_windows, 2);
  Database d = db();
  const std::vector<Row> r = rows(d);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].op, "alloc");
  EXPECT_EQ(r[0].in_use, 6 * kMiB);  // 4 MiB from before the window + 2 MiB
  EXPECT_EQ(r[1].op, "free");
  EXPECT_FALSE(r[1].alloc_id.has_value());  // its allocation has no row
  EXPECT_EQ(r[1].bytes, 4 * kMiB);
  EXPECT_EQ(r[1].in_use, 2 * kMiB);
  EXPECT_EQ(d.query_int("SELECT COUNT(*) FROM data_loss WHERE what LIKE '%memory%'"), 0);
}

// A lost free: the next allocation at the same address replaces the live one (warning).
TEST_F(MemoryEvents, AllocationOverALiveAddressIsAWarning) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1'000);
    b.alloc(10'000, 0x1000, 4 * kMiB);
    b.alloc(20'000, 0x1000, 2 * kMiB);
    b.end(30'000);
    b.close();
  }
  const ImportResult result = import({log("a.gslog")});
  Database d = db();
  EXPECT_EQ(d.query_int("SELECT in_use_bytes FROM memory_events ORDER BY id DESC LIMIT 1"), 2 * kMiB);
  EXPECT_EQ(d.query_text("SELECT severity FROM data_loss WHERE what = 'memory_alloc_over_live'").value_or(""),
            "warning");
  EXPECT_FALSE(result.warnings.empty());
}

// Two processes: levels are per process (the report sums a GPU's processes).
TEST_F(MemoryEvents, LevelsArePerProcess) {
  for (std::uint32_t pid : {100u, 200u}) {
    LogBuilder b(log("p" + std::to_string(pid) + ".gslog"), pid);
    b.process(1'000);
    b.device(0, "GPU");
    b.alloc(10'000 + pid, 0x1000, pid * kMiB / 100);  // the same address in both: not the same memory
    b.end(30'000);
    b.close();
  }
  (void)import({log("p100.gslog"), log("p200.gslog")});
  Database d = db();
  EXPECT_EQ(d.query_int("SELECT in_use_bytes FROM memory_events WHERE pid = 100"), kMiB);
  EXPECT_EQ(d.query_int("SELECT in_use_bytes FROM memory_events WHERE pid = 200"), 2 * kMiB);
  EXPECT_EQ(d.query_int("SELECT COUNT(*) FROM data_loss"), 0);
}

// A log written before MemoryRecords existed imports as before: the table is there, empty.
// A record kind this reader does not know (a newer collector's) is skipped and counted.
TEST_F(MemoryEvents, OldLogsImportAndUnknownKindsAreSkipped) {
  {
    LogBuilder b(log("old.gslog"), 100);
    b.process(1'000);
    b.device(0, "GPU");
    b.api(2'000, 3'000, 100, 1, "cudaLaunchKernel");
    b.kernel(4'000, 5'000, 1, "k");
    b.raw(99, std::string(16, '\0'));  // a future record kind
    b.end(6'000);
    b.close();
  }
  const ImportResult result = import({log("old.gslog")});
  EXPECT_EQ(result.rows.kernels, 1);
  EXPECT_EQ(result.rows.memory_events, 0);
  Database d = db();
  EXPECT_EQ(d.query_int("SELECT COUNT(*) FROM memory_events"), 0);
  EXPECT_EQ(d.query_int("SELECT count FROM data_loss WHERE what = 'unknown_log_records'"), 1);
}

// A memory record cut short (a damaged log) is skipped as malformed, never read past its end.
TEST_F(MemoryEvents, ShortMemoryRecordIsMalformed) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1'000);
    b.raw(static_cast<std::uint16_t>(log::RecordKind::kMemory), std::string(12, '\x01'));
    b.alloc(2'000, 0x1000, kMiB);
    b.end(3'000);
    b.close();
  }
  (void)import({log("a.gslog")});
  Database d = db();
  EXPECT_EQ(d.query_int("SELECT COUNT(*) FROM memory_events"), 1);
  EXPECT_EQ(d.query_int("SELECT count FROM data_loss WHERE what = 'unknown_log_records'"), 1);
}

}  // namespace
}  // namespace gpuscope::store
