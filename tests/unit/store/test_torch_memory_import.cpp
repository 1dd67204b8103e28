// Importing PyTorch's allocator state (torch-memory-PID.json, store/torch_memory_tables.hpp):
// the rows it makes, the file names it takes, and bad files (data_loss, nothing else lost).
#include "store/torch_memory_tables.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "log_builder.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"

namespace gpuscope::store {
namespace {

using test::TempDir;

// A process log with one kernel, and `json` as pid 7's allocator state.
Database import_with(const TempDir& dir, const std::string& json, const std::string& name = "torch-memory-7.json") {
  const std::string log = test::write_one_kernel_log(dir);
  const std::string file = dir.file(name);
  std::ofstream(file) << json;
  const std::string db = dir.file("t.sqlite");
  (void)import_logs({log, file}, db, ImportOptions{});
  return open_trace(db);
}

const char* kState = R"({"format": "gpuscope torch memory 1", "pid": 7, "time_ns": 4000,
  "torch_version": "2.11.0+cu130", "history_max_entries": 3, "devices": [{"device": 0,
  "max_reserved": 4194304, "reserved": 2097152, "max_allocated": 1024, "allocated": 512,
  "max_requested": 1000, "requested": 500,
  "segments": [{"address": 18446744073709551104, "bytes": 2097152, "stream": 94, "pool": "small"}],
  "history": [["segment_alloc", 4096, 2097152, 0, 2], ["alloc", 4096, 512, 0, 3], ["alloc", 4608, 512, 0, 3]]}]})";

TEST(TorchMemoryImport, StatsSegmentsAndEvents) {
  TempDir dir;
  Database db = import_with(dir, kState);
  EXPECT_EQ(db.query_text("SELECT max_reserved_bytes || ' ' || reserved_bytes || ' ' || max_allocated_bytes || ' ' || "
                          "allocated_bytes || ' ' || max_requested_bytes || ' ' || requested_bytes || ' ' || segments "
                          "|| ' ' || history_events || ' ' || history_max_events "
                          "|| ' ' || torch_version FROM torch_memory_stats WHERE pid = 7 AND device_id = 0"),
            "4194304 2097152 1024 512 1000 500 1 3 3 2.11.0+cu130");
  // An address above 2^63 keeps its bit pattern, as memory_events.address.
  EXPECT_EQ(db.query_text("SELECT address || ' ' || bytes || ' ' || stream || ' ' || pool FROM torch_memory_segments"),
            "-512 2097152 94 small");
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM torch_memory_events"), 3);
  // time_us -> ns on the trace clock.
  EXPECT_EQ(db.query_text("SELECT action || ' ' || ts_ns || ' ' || address || ' ' || bytes FROM torch_memory_events "
                          "ORDER BY rowid LIMIT 1"),
            "segment_alloc 2000 4096 2097152");
  // 3 events of at most 3 kept: the earliest may be gone.
  EXPECT_EQ(db.query_int("SELECT count FROM data_loss WHERE what = 'torch_memory_history_full' AND pid = 7"), 3);
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM kernels"), 1);
}

TEST(TorchMemoryImport, BadFilesAreDataLossAndTheTraceIsKept) {
  for (const std::string bad : {std::string("{\"format\": \"gpuscope torch memory 1\", \"pid\": 7"),  // cut short
                                std::string("{\"format\": \"something else\"}"),
                                std::string(R"({"format": "gpuscope torch memory 1", "pid": 7, "time_ns": 1,
                                  "devices": [{"device": 0, "segments": []}]})")}) {  // no counters
    TempDir dir;
    Database db = import_with(dir, bad);
    EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM data_loss WHERE what = 'unreadable_torch_memory'"), 1) << bad;
    EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM torch_memory_stats"), 0) << bad;
    EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM torch_memory_segments"), 0) << bad;
    EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM kernels"), 1) << bad;
  }
}

TEST(TorchMemoryImport, FileNamesAndListing) {
  using detail::is_torch_memory_file;
  EXPECT_TRUE(is_torch_memory_file("torch-memory-123.json"));
  EXPECT_FALSE(is_torch_memory_file("torch-memory-.json"));
  EXPECT_FALSE(is_torch_memory_file("torch-memory-12a.json"));
  EXPECT_FALSE(is_torch_memory_file("torch-memory-123.json.tmp"));  // the hooks' half-written file
  EXPECT_FALSE(is_torch_memory_file("x-torch-memory-1.json"));
  TempDir dir;
  for (const char* f : {"b.gslog", "torch-memory-5.json", "torch-memory-5.json.tmp", "run.json", "a.gslog"})
    std::ofstream(dir.file(f)) << "x";
  std::error_code ec;
  std::vector<std::string> names;
  for (const std::string& p : list_trace_inputs(dir.file(""), ec)) names.push_back(p.substr(p.rfind('/') + 1));
  EXPECT_FALSE(ec);
  EXPECT_EQ(names, (std::vector<std::string>{"a.gslog", "b.gslog", "torch-memory-5.json"}));
}

}  // namespace
}  // namespace gpuscope::store
