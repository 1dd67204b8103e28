#include "store/importer.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "log_builder.hpp"
#include "store/database.hpp"
#include "store/schema.hpp"
#include "store/trace.hpp"

namespace gpuscope::store {
namespace {

using log::MemcpyKind;
using log::MemoryKind;
using test::LogBuilder;
using test::TempDir;

constexpr const char* kVecAdd = "_Z6vecAddPKfS0_Pfi";  // vecAdd(float const*, float const*, float*, int)
constexpr const char* kFill =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_";

std::int64_t q_int(Database& db, const std::string& sql) {
  const auto v = db.query_int(sql);
  EXPECT_TRUE(v.has_value()) << sql;
  return v.value_or(-1);
}
std::string q_text(Database& db, const std::string& sql) {
  const auto v = db.query_text(sql);
  EXPECT_TRUE(v.has_value()) << sql;
  return v.value_or("<NULL>");
}
bool q_null(Database& db, const std::string& sql) {
  Statement st = db.prepare(sql);
  EXPECT_TRUE(st.step()) << sql;
  return st.is_null(0);
}

class ImporterTest : public ::testing::Test {
 protected:
  std::string log(std::string_view name) { return m_dir.file(name); }
  ImportResult import(const std::vector<std::string>& logs, ImportOptions opts = {}) {
    opts.overwrite = true;
    if (opts.command.empty()) opts.command = "python train.py";
    return import_logs(logs, m_db_path, opts);
  }
  Database db() { return open_trace(m_db_path); }

  TempDir m_dir;
  std::string m_db_path = m_dir.file("trace.sqlite");
};

// A FIFO named like a log is skipped, not waited on (opening it for reading would block
// until a writer came); the readable log beside it is imported.
TEST_F(ImporterTest, FifoInTheLogsIsSkippedNotWaitedOn) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1000);
    b.end(2000);
    b.close();
  }
  ASSERT_EQ(::mkfifo(log("b.gslog").c_str(), 0600), 0);
  const ImportResult r = import({log("a.gslog"), log("b.gslog")});
  EXPECT_EQ(r.logs_read, 1);
  EXPECT_EQ(r.logs_skipped, 1);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings.front().find("a FIFO, not a regular file"), std::string::npos) << r.warnings.front();
}

// Logs given, none readable: an error, and the trace already there is left as it was.
TEST_F(ImporterTest, NoReadableLogFailsAndKeepsTheOldTrace) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1000);
    b.end(2000);
    b.close();
  }
  (void)import({log("a.gslog")});
  std::ofstream(log("junk.gslog")) << "not a log at all, but long enough to hold a header......";
  try {
    (void)import({log("junk.gslog")});
    ADD_FAILURE() << "importing only unreadable logs must fail";
  } catch (const DatabaseError& e) {
    EXPECT_NE(std::string(e.what()).find("none of the 1 event log(s) could be read"), std::string::npos) << e.what();
  }
  Database d = db();
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM processes"), 1);  // the first import's trace
  EXPECT_FALSE(std::filesystem::exists(m_db_path + ".partial"));
}

// Text the program wrote that is not UTF-8 is repaired once, at import (U+FFFD), and its
// bytes are kept in strings.raw for SQL users; valid names have no raw copy.
TEST_F(ImporterTest, NamesThatAreNotUtf8AreRepairedAndKeptRaw) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1000);
    b.device(0, "GPU \xff");
    b.thread_name(7, "worker\xC3");
    b.api(1100, 1150, 7, 1, "cudaLaunchKernel");
    b.kernel(1160, 1500, 1, "bad\xE2\x82name");
    b.push(1050, 7, "step \x80\x80");
    b.pop(1600, 7);
    b.end(2000);
    b.close();
  }
  (void)import({log("a.gslog")});
  Database d = db();
  EXPECT_EQ(q_text(d, "SELECT name FROM v_kernels"), "bad\xEF\xBF\xBDname");
  EXPECT_EQ(q_text(d, "SELECT hex(raw) FROM strings WHERE value = 'bad' || char(65533) || 'name'"),
            "626164E2826E616D65");
  EXPECT_EQ(q_text(d, "SELECT text FROM v_nvtx"), "step \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(q_text(d, "SELECT name FROM devices"), "GPU \xEF\xBF\xBD");
  EXPECT_EQ(q_text(d, "SELECT name FROM threads WHERE tid = 7"), "worker\xEF\xBF\xBD");
  EXPECT_TRUE(q_null(d, "SELECT raw FROM strings WHERE value = 'cudaLaunchKernel'"));
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM strings WHERE raw IS NOT NULL"), 2);  // kernel name, NVTX text
}

TEST_F(ImporterTest, KernelsApiCallsAndNames) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1000);
    b.device(0, "NVIDIA H100 80GB HBM3");
    b.api(1100, 1150, 7, 1, "cudaLaunchKernel_v7000");
    b.api(1200, 1250, 7, 2, "cudaLaunchKernel_v7000");
    b.api(1300, 1350, 8, 3, "cuLaunchKernel", log::ApiDomain::kDriver);
    b.kernel(1160, 1500, 1, kVecAdd);
    b.kernel(1510, 1600, 2, kFill);
    b.kernel(1610, 1700, 3, "triton_poi_fused_add_0");
    b.end(2000);
    b.close();
  }
  const ImportResult r = import({log("a.gslog")});
  EXPECT_EQ(r.rows.kernels, 3);
  EXPECT_EQ(r.rows.api_calls, 3);
  EXPECT_EQ(r.logs_read, 1);
  EXPECT_EQ(r.data_loss_total, 0);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();

  Database d = db();
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM kernels"), 3);
  EXPECT_EQ(q_text(d, "SELECT name FROM v_kernels WHERE correlation_id = 1"),
            "vecAdd(float const*, float const*, float*, int)");
  EXPECT_EQ(q_text(d, "SELECT short_name FROM v_kernels WHERE correlation_id = 1"), "vecAdd");
  EXPECT_EQ(q_text(d, "SELECT mangled_name FROM v_kernels WHERE correlation_id = 1"), kVecAdd);
  EXPECT_EQ(q_text(d, "SELECT short_name FROM v_kernels WHERE correlation_id = 2"), "vectorized_elementwise_kernel");
  EXPECT_EQ(q_text(d,
                   "SELECT name || '|' || short_name || '|' || mangled_name FROM v_kernels "
                   "WHERE correlation_id = 3"),
            "triton_poi_fused_add_0|triton_poi_fused_add_0|triton_poi_fused_add_0");
  // One string row for the Triton name, shared by the three name columns.
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM strings WHERE value = 'triton_poi_fused_add_0'"), 1);
  EXPECT_EQ(q_int(d, "SELECT duration_ns FROM v_kernels WHERE correlation_id = 1"), 340);
  EXPECT_EQ(q_int(d, "SELECT grid_x * block_x FROM kernels WHERE correlation_id = 1"), 128 * 256);
  EXPECT_TRUE(q_null(d, "SELECT graph_id FROM kernels WHERE correlation_id = 1"));

  // Each kernel joins its launch.
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM kernels k JOIN api_calls a USING (pid, correlation_id)"), 3);
  EXPECT_EQ(q_text(d,
                   "SELECT a.name FROM v_kernels k JOIN v_api_calls a USING (pid, correlation_id) "
                   "WHERE k.short_name = 'triton_poi_fused_add_0'"),
            "cuLaunchKernel");
  EXPECT_EQ(q_text(d, "SELECT domain FROM api_calls WHERE correlation_id = 3"), "driver");
  EXPECT_EQ(q_text(d, "SELECT domain FROM api_calls WHERE correlation_id = 1"), "runtime");

  // Process, threads, device, meta.
  EXPECT_EQ(q_int(d, "SELECT ended_cleanly FROM processes WHERE pid = 100"), 1);
  EXPECT_EQ(q_int(d, "SELECT end_ns FROM processes WHERE pid = 100"), 2000);
  EXPECT_EQ(q_text(d, "SELECT cmdline FROM processes WHERE pid = 100"), "python train.py");
  EXPECT_TRUE(q_null(d, "SELECT rank FROM processes WHERE pid = 100"));
  EXPECT_EQ(q_int(d, "SELECT log_bytes FROM processes WHERE pid = 100"),
            static_cast<std::int64_t>(std::filesystem::file_size(log("a.gslog"))));
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM threads WHERE pid = 100"), 2);
  EXPECT_EQ(q_text(d, "SELECT name FROM devices WHERE pid = 100 AND device_id = 0"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(q_int(d, "SELECT memory_bandwidth_bytes_per_s FROM devices"), 3'352'000'000'000);
  EXPECT_EQ(q_text(d, "SELECT substr(uuid, 1, 6) FROM devices"), "GPU-ab");
  EXPECT_EQ(q_text(d, "SELECT reason FROM capture_windows WHERE pid = 100"), "all");
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM data_loss"), 0);
}

// Ranks from every launcher (RankRecord), and logs of collectors older than RankRecord,
// whose ProcessRecord held $RANK/$LOCAL_RANK: they still import, as torchrun ranks.
TEST_F(ImporterTest, RanksAndTheirLauncher) {
  struct Case {
    std::uint32_t pid;
    int rank, local_rank, world_size;
    log::RankLauncher launcher;
  };
  const Case cases[] = {{10, 3, 1, 4, log::RankLauncher::kTorchrun},
                        {11, 5, 0, 8, log::RankLauncher::kOpenMpi},
                        {12, 6, 2, 16, log::RankLauncher::kSlurm},
                        {13, 2, -1, 3, log::RankLauncher::kPmi}};
  std::vector<std::string> logs;
  for (const Case& c : cases) {
    logs.push_back(log("r" + std::to_string(c.pid) + ".gslog"));
    LogBuilder b(logs.back(), c.pid);
    b.process_rank = c.rank;
    b.process_local_rank = c.local_rank;
    b.process(1000);
    b.rank(c.rank, c.local_rank, c.world_size, c.launcher);
    b.end(2000);
  }
  {
    logs.push_back(log("old.gslog"));  // an older collector: no RankRecord
    LogBuilder b(logs.back(), 20);
    b.process_rank = 1;
    b.process_local_rank = 1;
    b.process(1000);
    b.end(2000);
  }
  {
    logs.push_back(log("none.gslog"));
    LogBuilder b(logs.back(), 21);
    b.process(1000);
    b.end(2000);
  }
  const ImportResult r = import(logs);
  EXPECT_EQ(r.logs_read, 6u);
  Database d = db();
  auto row = [&](int pid) {
    return q_text(d,
                  "SELECT quote(rank) || ' ' || quote(local_rank) || ' ' || quote(world_size) || ' ' || "
                  "quote(launcher) FROM processes WHERE pid = " +
                      std::to_string(pid));
  };
  EXPECT_EQ(row(10), "3 1 4 'torchrun'");
  EXPECT_EQ(row(11), "5 0 8 'openmpi'");
  EXPECT_EQ(row(12), "6 2 16 'slurm'");
  EXPECT_EQ(row(13), "2 NULL 3 'pmi'");
  EXPECT_EQ(row(20), "1 1 NULL 'torchrun'");
  EXPECT_EQ(row(21), "NULL NULL NULL NULL");
}

TEST_F(ImporterTest, MemcpyMemsetSyncOverheadMessage) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1000);
    b.api(1100, 1200, 7, 10, "cudaMemcpyAsync");
    b.memcpy(1150, 1250, 10, 1 << 20, MemcpyKind::kHtoD, MemoryKind::kPinned, MemoryKind::kDevice);
    b.api(1300, 1400, 7, 11, "cudaMemcpy");
    b.memcpy(1350, 1450, 11, 4096, MemcpyKind::kDtoH, MemoryKind::kDevice, MemoryKind::kPageable);
    b.api(1500, 1510, 7, 12, "cudaMemsetAsync");
    b.memset(1520, 1530, 12, 512);
    b.api(1600, 1900, 9, 13, "cudaStreamSynchronize");
    b.sync(1600, 1900, 13, log::SyncType::kStreamSynchronize, 7, 0xffffffffu);
    b.sync(1950, 1960, 99, log::SyncType::kContextSynchronize, 0xffffffffu, 0xffffffffu);
    b.overhead(1000, 1050, 1u << 16);
    b.message(1001, log::Severity::kWarning, "CUPTI subscriber already taken");
    b.end(2000);
    b.close();
  }
  const ImportResult r = import({log("a.gslog")});
  EXPECT_EQ(r.rows.memcpys, 2);
  EXPECT_EQ(r.rows.memsets, 1);
  EXPECT_EQ(r.rows.syncs, 2);
  Database d = db();
  EXPECT_EQ(q_int(d, "SELECT SUM(bytes) FROM memcpys"), (1 << 20) + 4096);
  EXPECT_EQ(q_text(d,
                   "SELECT copy_kind || ',' || src_kind || ',' || dst_kind FROM memcpys "
                   "WHERE correlation_id = 10"),
            "HtoD,pinned,device");
  EXPECT_EQ(q_text(d,
                   "SELECT copy_kind || ',' || src_kind || ',' || dst_kind FROM memcpys "
                   "WHERE correlation_id = 11"),
            "DtoH,device,pageable");
  EXPECT_EQ(q_text(d, "SELECT memory_kind FROM memsets"), "device");
  EXPECT_EQ(q_int(d, "SELECT bytes FROM memsets"), 512);
  // The sync joins the thread of its API call; 0xffffffff ids are NULL.
  EXPECT_EQ(q_int(d, "SELECT tid FROM syncs WHERE correlation_id = 13"), 9);
  EXPECT_EQ(q_text(d, "SELECT sync_type FROM syncs WHERE correlation_id = 13"), "stream_synchronize");
  EXPECT_EQ(q_int(d, "SELECT stream_id FROM syncs WHERE correlation_id = 13"), 7);
  EXPECT_TRUE(q_null(d, "SELECT event_id FROM syncs WHERE correlation_id = 13"));
  EXPECT_TRUE(q_null(d, "SELECT tid FROM syncs WHERE correlation_id = 99"));
  EXPECT_TRUE(q_null(d, "SELECT stream_id FROM syncs WHERE correlation_id = 99"));
  EXPECT_EQ(q_text(d, "SELECT overhead_kind FROM overheads"), "cupti_buffer_flush");
  EXPECT_EQ(q_text(d, "SELECT severity || ': ' || text FROM messages"), "warning: CUPTI subscriber already taken");
}

TEST_F(ImporterTest, NvtxPushPopStartEndMarks) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1000);
    b.nvtx_domain(5, "my_lib");
    b.thread_name(7, "main");
    b.push(1100, 7, "step");     // depth 0
    b.push(1200, 7, "forward");  // depth 1, parent step
    b.push(1300, 7, "matmul");   // depth 2, parent forward
    b.pop(1400, 7);
    b.pop(1500, 7);
    b.push(1250, 8, "loader");  // other thread: its own stack
    b.pop(1260, 8);
    b.pop(1270, 8);                   // unmatched pop
    b.push(1210, 7, "lib_range", 5);  // other domain: its own stack, depth 0
    b.pop(1220, 7, 5);
    b.nvtx(log::NvtxEventType::kMark, 1350, 7, "checkpoint");
    b.nvtx(log::NvtxEventType::kStart, 1600, 7, "async_io", 77);
    b.nvtx(log::NvtxEventType::kEnd, 1800, 9, {}, 77);  // ended on another thread
    b.nvtx(log::NvtxEventType::kEnd, 1850, 9, {}, 78);  // unmatched end
    b.pop(1900, 7);                                     // closes "step"
    b.push(1950, 7, "never_closed");
    b.end(2000);
    b.close();
  }
  const ImportResult r = import({log("a.gslog")});
  Database d = db();
  const auto id_of = [&](const std::string& text) {
    return q_int(d, "SELECT id FROM v_nvtx WHERE text = '" + text + "'");
  };
  EXPECT_EQ(q_int(d, "SELECT depth FROM v_nvtx WHERE text = 'step'"), 0);
  EXPECT_TRUE(q_null(d, "SELECT parent_id FROM v_nvtx WHERE text = 'step'"));
  EXPECT_EQ(q_int(d, "SELECT depth FROM v_nvtx WHERE text = 'forward'"), 1);
  EXPECT_EQ(q_int(d, "SELECT parent_id FROM v_nvtx WHERE text = 'forward'"), id_of("step"));
  EXPECT_EQ(q_int(d, "SELECT depth FROM v_nvtx WHERE text = 'matmul'"), 2);
  EXPECT_EQ(q_int(d, "SELECT parent_id FROM v_nvtx WHERE text = 'matmul'"), id_of("forward"));
  EXPECT_EQ(q_int(d, "SELECT duration_ns FROM v_nvtx WHERE text = 'matmul'"), 100);
  EXPECT_EQ(q_int(d, "SELECT end_ns FROM v_nvtx WHERE text = 'step'"), 1900);
  EXPECT_EQ(q_text(d, "SELECT style FROM v_nvtx WHERE text = 'step'"), "PushPop");
  EXPECT_EQ(q_int(d, "SELECT depth FROM v_nvtx WHERE text = 'loader'"), 0);
  EXPECT_EQ(q_int(d, "SELECT depth FROM v_nvtx WHERE text = 'lib_range'"), 0);
  EXPECT_EQ(q_text(d, "SELECT domain FROM v_nvtx WHERE text = 'lib_range'"), "my_lib");
  EXPECT_TRUE(q_null(d, "SELECT domain_id FROM v_nvtx WHERE text = 'step'"));
  // Mark: no end, inside "matmul" (1300..1400).
  EXPECT_EQ(q_text(d, "SELECT style FROM v_nvtx WHERE text = 'checkpoint'"), "Mark");
  EXPECT_TRUE(q_null(d, "SELECT end_ns FROM v_nvtx WHERE text = 'checkpoint'"));
  EXPECT_TRUE(q_null(d, "SELECT depth FROM v_nvtx WHERE text = 'checkpoint'"));
  EXPECT_EQ(q_int(d, "SELECT parent_id FROM v_nvtx WHERE text = 'checkpoint'"), id_of("matmul"));
  // Start/end across threads.
  EXPECT_EQ(q_text(d, "SELECT style FROM v_nvtx WHERE text = 'async_io'"), "StartEnd");
  EXPECT_EQ(q_int(d, "SELECT tid FROM v_nvtx WHERE text = 'async_io'"), 7);
  EXPECT_EQ(q_int(d, "SELECT end_tid FROM v_nvtx WHERE text = 'async_io'"), 9);
  EXPECT_EQ(q_int(d, "SELECT duration_ns FROM v_nvtx WHERE text = 'async_io'"), 200);
  // Never closed: kept with end NULL; the process ended cleanly, so a warning.
  EXPECT_TRUE(q_null(d, "SELECT end_ns FROM v_nvtx WHERE text = 'never_closed'"));
  EXPECT_EQ(q_text(d, "SELECT severity FROM data_loss WHERE what = 'unclosed_nvtx_range'"), "warning");
  EXPECT_EQ(q_int(d, "SELECT count FROM data_loss WHERE what = 'unclosed_nvtx_range'"), 1);
  EXPECT_EQ(q_int(d, "SELECT count FROM data_loss WHERE what = 'unmatched_nvtx_pop'"), 1);
  EXPECT_EQ(q_text(d, "SELECT severity FROM data_loss WHERE what = 'unmatched_nvtx_pop'"), "warning");
  EXPECT_EQ(q_int(d, "SELECT count FROM data_loss WHERE what = 'unmatched_nvtx_end'"), 1);
  // step, forward, matmul, loader, lib_range, checkpoint, async_io, never_closed.
  EXPECT_EQ(r.rows.nvtx_events, 8);
  EXPECT_EQ(r.data_loss_total, 0);  // warnings, not data loss
  // Threads: 7 (named), 8, 9 (the end thread).
  EXPECT_EQ(q_text(d, "SELECT name FROM threads WHERE tid = 7"), "main");
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM threads"), 3);
}

// gpuscope launch --session: a process never started holds no window (not one over the
// whole process) and none of its events; a window opened by gpuscope start keeps only its
// own. gpuscope stop's trace of running processes (live logs) reports no truncation.
TEST_F(ImporterTest, SessionRecordsOnlyBetweenStartAndStop) {
  {
    LogBuilder b(log("idle.gslog"), 100);  // never started
    b.process(1000);
    b.api(1500, 1510, 7, 1, "cudaLaunchKernel");
    b.kernel(1600, 1700, 1, "idle_kernel");
    b.end(5000);
    b.close();
  }
  {
    LogBuilder b(log("run.gslog"), 200);  // one window, still running (no end record)
    b.process(1000);
    b.api(1500, 1510, 7, 1, "cudaLaunchKernel");
    b.kernel(1600, 1700, 1, "before_kernel");
    b.capture(2000, true, "session");
    b.api(2500, 2510, 7, 2, "cudaLaunchKernel");
    b.kernel(2600, 2700, 2, "window_kernel");
    b.capture(3000, false, "session");
    b.close();
  }
  ImportOptions opts;
  opts.capture_range = "session";
  opts.live_logs = true;
  const ImportResult r = import({log("idle.gslog"), log("run.gslog")}, opts);
  Database d = db();
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM capture_windows WHERE pid = 100"), 0);
  EXPECT_EQ(q_text(d, "SELECT start_ns || '-' || end_ns || ' ' || reason FROM capture_windows WHERE pid = 200"),
            "2000-3000 session");
  EXPECT_EQ(q_text(d, "SELECT group_concat(name) FROM v_kernels"), "window_kernel");
  EXPECT_EQ(r.data_loss_total, 0);  // live: no end record yet is not a loss
  // The same logs after the program ended abnormally (not live): the missing end is data loss.
  opts.live_logs = false;
  const ImportResult after = import({log("idle.gslog"), log("run.gslog")}, opts);
  EXPECT_EQ(after.data_loss_total, 1);
}

// Session windows hold the work launched inside them. Between windows kernel records stay on
// (the collector keeps them on after the first window) while launch calls are not recorded, so
// a kernel queued before window 2 opened starts inside it with no recorded launch call: it is
// not window 2's work. A cudaProfilerStart window keeps such a kernel (CaptureWindowClipping).
TEST_F(ImporterTest, SessionWindowsHoldOnlyTheWorkLaunchedInsideThem) {
  {
    LogBuilder b(log("s.gslog"), 300);
    b.process(1000);
    b.capture(2000, true, "session");
    b.api(2100, 2110, 7, 1, "cudaLaunchKernel");
    b.kernel(2200, 2300, 1, "window1_kernel");
    b.capture(3000, false, "session");
    // Launched between the windows (no launch call recorded), runs after window 2 opened.
    b.kernel(4050, 4100, 2, "queued_before_window2");
    b.capture(4000, true, "session");
    b.api(4200, 4210, 7, 3, "cudaLaunchKernel");
    b.kernel(4300, 4400, 3, "window2_kernel");
    b.capture(5000, false, "session");
    b.end(6000);
    b.close();
  }
  ImportOptions opts;
  opts.capture_range = "session";
  import({log("s.gslog")}, opts);
  Database d = db();
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM capture_windows WHERE pid = 300"), 2);
  EXPECT_EQ(q_text(d, "SELECT group_concat(name) FROM (SELECT name FROM v_kernels ORDER BY start_ns)"),
            "window1_kernel,window2_kernel");
}

TEST_F(ImporterTest, CaptureWindowClipping) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1000);
    b.capture(2000, true, "cudaProfilerStart");
    b.capture(3000, false, "cudaProfilerStop");
    b.capture(4000, true, "cudaProfilerStart");  // never stopped: ends at the process end
    // Before the window: API out, its kernel starts inside the window -> kernel kept.
    b.api(1500, 1510, 7, 1, "cudaLaunchKernel");
    b.kernel(2100, 2200, 1, kVecAdd);
    // API inside, kernel finishes after the window -> both kept.
    b.api(2500, 2510, 7, 2, "cudaLaunchKernel");
    b.kernel(3500, 3600, 2, kFill);
    // API after the window, kernel after it too -> both dropped.
    b.api(3500, 3510, 7, 3, "cudaLaunchKernel");
    b.kernel(3700, 3800, 3, "dropped_kernel");
    b.memcpy(3710, 3720, 3, 64, MemcpyKind::kDtoD, MemoryKind::kDevice, MemoryKind::kDevice);
    // Inside the second, open window.
    b.api(4500, 4510, 7, 4, "cudaLaunchKernel");
    b.kernel(4600, 4700, 4, "late_kernel");
    // NVTX: a range opened before the window is dropped; its child inside is kept (no parent).
    b.push(1900, 7, "outer");
    b.push(2050, 7, "inner");
    b.pop(2060, 7);
    b.pop(2070, 7);
    b.push(3100, 7, "between");
    b.pop(3200, 7);
    b.sync(1600, 1700, 1, log::SyncType::kStreamSynchronize, 7, 0xffffffffu);
    b.sync(2600, 2700, 2, log::SyncType::kStreamSynchronize, 7, 0xffffffffu);
    b.end(5000);
    b.close();
  }
  const ImportResult r = import({log("a.gslog")});
  Database d = db();
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM capture_windows"), 2);
  EXPECT_EQ(q_text(d,
                   "SELECT start_ns || '-' || end_ns || ' ' || reason FROM capture_windows "
                   "ORDER BY start_ns LIMIT 1"),
            "2000-3000 cudaProfilerStart");
  EXPECT_EQ(q_int(d, "SELECT end_ns FROM capture_windows WHERE start_ns = 4000"), 5000);

  EXPECT_EQ(q_text(d,
                   "SELECT group_concat(correlation_id) FROM (SELECT correlation_id FROM "
                   "api_calls ORDER BY correlation_id)"),
            "2,4");
  EXPECT_EQ(q_text(d,
                   "SELECT group_concat(correlation_id) FROM (SELECT correlation_id FROM "
                   "kernels ORDER BY correlation_id)"),
            "1,2,4");
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM memcpys"), 0);
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM v_nvtx WHERE text = 'outer'"), 0);
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM v_nvtx WHERE text = 'between'"), 0);
  EXPECT_EQ(q_int(d, "SELECT depth FROM v_nvtx WHERE text = 'inner'"), 1);
  EXPECT_TRUE(q_null(d, "SELECT parent_id FROM v_nvtx WHERE text = 'inner'"));
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM syncs"), 1);
  EXPECT_EQ(r.events_outside_windows, 2 + 1 + 1 + 2 + 1);  // api 1,3; kernel 3; memcpy; nvtx; sync
  // The clipped "outer" range is not reported as unclosed or unmatched.
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM data_loss"), 0);
  // duration_ns spans the kept events: NVTX "inner" at 2050 .. kernel end 4700.
  EXPECT_EQ(q_text(d, "SELECT value FROM meta WHERE key = 'duration_ns'"), "2650");
}

TEST_F(ImporterTest, StopWithoutStartMeansCapturingFromProcessStart) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1000);
    b.api(1500, 1510, 7, 1, "cudaMalloc");
    b.capture(2000, false, "duration");
    b.api(2500, 2510, 7, 2, "cudaFree");
    b.end(3000);
    b.close();
  }
  (void)import({log("a.gslog")});
  Database d = db();
  EXPECT_EQ(q_text(d, "SELECT start_ns || '-' || end_ns || ' ' || reason FROM capture_windows"),
            "1000-2000 process_start");
  EXPECT_EQ(q_int(d, "SELECT correlation_id FROM api_calls"), 1);
}

TEST_F(ImporterTest, TruncatedLogKeepsPrefixAndRecordsDataLoss) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1000);
    b.api(1100, 1150, 7, 1, "cudaLaunchKernel");
    b.kernel(1160, 1500, 1, kVecAdd);
    b.push(1100, 7, "step");  // open when the process dies
    b.flush();
    b.api(1600, 1650, 7, 2, "cudaLaunchKernel");  // cut in half below
    b.close();                                    // no ProcessEndRecord: killed
  }
  const auto size = std::filesystem::file_size(log("a.gslog"));
  std::filesystem::resize_file(log("a.gslog"), size - 20);
  const std::uint64_t cut = sizeof(log::RecordHeader) + sizeof(log::ApiRecord) - 20;

  const ImportResult r = import({log("a.gslog")});
  EXPECT_EQ(r.rows.kernels, 1);
  EXPECT_EQ(r.rows.api_calls, 1);
  EXPECT_EQ(r.data_loss_total, 1);
  ASSERT_FALSE(r.warnings.empty());
  Database d = db();
  EXPECT_EQ(q_int(d, "SELECT ended_cleanly FROM processes"), 0);
  EXPECT_EQ(q_int(d, "SELECT end_ns FROM processes"), 1500);
  EXPECT_EQ(q_int(d, "SELECT count FROM data_loss WHERE what = 'truncated_log'"), static_cast<std::int64_t>(cut));
  EXPECT_EQ(q_text(d, "SELECT severity FROM data_loss WHERE what = 'truncated_log'"), "data_loss");
  EXPECT_EQ(q_int(d, "SELECT pid FROM data_loss WHERE what = 'truncated_log'"), 100);
  const std::string detail = q_text(d, "SELECT detail FROM data_loss WHERE what = 'truncated_log'");
  EXPECT_NE(detail.find("process 100 ended without closing its log (crash or kill): events after "
                        "the last flush, at most ~200 ms, are missing"),
            std::string::npos)
      << detail;
  // The open range of a crashed process: end NULL, reported as info only.
  EXPECT_TRUE(q_null(d, "SELECT end_ns FROM v_nvtx WHERE text = 'step'"));
  EXPECT_EQ(q_text(d, "SELECT severity FROM data_loss WHERE what = 'unclosed_nvtx_range'"), "info");
}

TEST_F(ImporterTest, TwoProcessesShareOneStringTable) {
  for (std::uint32_t pid : {100u, 200u}) {
    LogBuilder b(log(std::to_string(pid) + ".gslog"), pid);
    b.process(1000 + pid, "node1");
    b.api(1100 + pid, 1150 + pid, pid + 1, 1, "cudaLaunchKernel");  // same correlation id
    b.kernel(1160 + pid, 1500 + pid, 1, kFill);
    b.end(3000);
    b.close();
  }
  ImportOptions opts;
  opts.launched_pid = 100;
  opts.exit_status = 0;
  const ImportResult r = import({log("100.gslog"), log("200.gslog")}, opts);
  EXPECT_EQ(r.rows.processes, 2);
  Database d = db();
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM kernels"), 2);
  EXPECT_EQ(q_int(d, "SELECT COUNT(DISTINCT name_id) FROM kernels"), 1);
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM strings WHERE value = 'cudaLaunchKernel'"), 1);
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM strings WHERE value = 'vectorized_elementwise_kernel'"), 1);
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM strings"), q_int(d, "SELECT COUNT(DISTINCT value) FROM strings"));
  // Correlation ids are per process: the join by (pid, correlation_id) pairs them right.
  EXPECT_EQ(q_int(d,
                  "SELECT COUNT(*) FROM kernels k JOIN api_calls a USING (pid, correlation_id) "
                  "WHERE a.tid = k.pid + 1"),
            2);
  EXPECT_EQ(q_int(d, "SELECT exit_status FROM processes WHERE pid = 100"), 0);
  EXPECT_TRUE(q_null(d, "SELECT exit_status FROM processes WHERE pid = 200"));
  EXPECT_EQ(q_text(d, "SELECT value FROM meta WHERE key = 'process_count'"), "2");
}

TEST_F(ImporterTest, UnreadableLogIsSkippedOthersImported) {
  {
    LogBuilder b(log("good.gslog"), 100);
    b.process(1000);
    b.api(1100, 1150, 7, 1, "cudaMalloc");
    b.end(2000);
    b.close();
    LogBuilder v2(log("v2.gslog"), 200);
    v2.close();
  }
  {
    std::fstream f(log("v2.gslog"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(offsetof(log::FileHeader, format_version));
    const std::uint32_t v = 2;
    f.write(reinterpret_cast<const char*>(&v), sizeof v);
  }
  const ImportResult r = import({log("good.gslog"), log("v2.gslog"), log("missing.gslog")});
  EXPECT_EQ(r.logs_read, 1);
  EXPECT_EQ(r.logs_skipped, 2);
  EXPECT_EQ(r.rows.api_calls, 1);
  Database d = db();
  EXPECT_EQ(q_int(d, "SELECT COUNT(*) FROM data_loss WHERE what = 'unreadable_log'"), 2);
  const std::string detail =
      q_text(d, "SELECT detail FROM data_loss WHERE what = 'unreadable_log' AND detail LIKE '%v2.gslog%'");
  EXPECT_NE(detail.find("log format version 2, this gpuscope reads version 1"), std::string::npos) << detail;
  EXPECT_TRUE(q_null(d, "SELECT pid FROM data_loss WHERE what = 'unreadable_log' LIMIT 1"));
}

TEST_F(ImporterTest, CollectorDataLossAndMissingKernelRecords) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1000);
    b.api(1100, 1150, 7, 1, "cudaLaunchKernel");
    b.api(1200, 1250, 7, 2, "cudaGraphLaunch");
    b.api(1300, 1350, 7, 3, "cudaLaunchHostFunc");  // not a kernel launch
    b.data_loss(1400, 30, "cupti_dropped_records");
    b.data_loss(1500, 12, "cupti_dropped_records");
    b.end(2000);
    b.close();
  }
  const ImportResult r = import({log("a.gslog")});
  EXPECT_EQ(r.data_loss_total, 2);
  Database d = db();
  EXPECT_EQ(q_int(d, "SELECT count FROM data_loss WHERE what = 'cupti_dropped_records'"), 42);
  EXPECT_EQ(q_text(d, "SELECT severity FROM data_loss WHERE what = 'cupti_dropped_records'"), "data_loss");
  EXPECT_EQ(q_int(d, "SELECT count FROM data_loss WHERE what = 'missing_kernel_records'"), 2);
  const std::string detail = q_text(d, "SELECT detail FROM data_loss WHERE what = 'missing_kernel_records'");
  EXPECT_NE(detail.find("another CUPTI client (torch.profiler, ncu, nsys) may have taken over the "
                        "activity buffers"),
            std::string::npos);
}

TEST_F(ImporterTest, MetaTable) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1000, "gpu-node-7");
    b.api(1100, 1150, 7, 1, "cudaMalloc");
    b.api(1900, 2100, 7, 2, "cudaFree");
    b.end(3000);
    b.close();
  }
  ImportOptions opts;
  opts.command = "./train --epochs 1";
  opts.launched_pid = 100;
  opts.start_time = "2025-06-01T12:00:00Z";
  opts.trace_sources = "cuda,nvtx";
  opts.capture_range = "cudaProfilerApi";
  opts.extra_meta = {{"launcher", "test"}};
  (void)import({log("a.gslog")}, opts);
  Database d = db();
  auto meta = [&](const std::string& key) { return q_text(d, "SELECT value FROM meta WHERE key = '" + key + "'"); };
  EXPECT_EQ(meta("schema_version"), std::to_string(kSchemaVersion));
  EXPECT_EQ(meta("gpuscope_version"), "0.1.0");
  EXPECT_EQ(meta("command"), "./train --epochs 1");
  EXPECT_EQ(meta("start_time"), "2025-06-01T12:00:00Z");
  EXPECT_EQ(meta("host"), "gpu-node-7");
  EXPECT_EQ(meta("capture_range"), "cudaProfilerApi");
  EXPECT_EQ(meta("trace_sources"), "cuda,nvtx");
  EXPECT_EQ(meta("clock"), "CLOCK_REALTIME ns, CUPTI");
  EXPECT_EQ(meta("duration_ns"), "1000");
  EXPECT_EQ(meta("process_count"), "1");
  EXPECT_EQ(meta("launcher"), "test");
}

TEST_F(ImporterTest, RefusesToOverwriteUnlessAsked) {
  {
    LogBuilder b(log("a.gslog"), 100);
    b.end(2000);
    b.close();
  }
  ImportOptions opts;
  (void)import_logs({log("a.gslog")}, m_db_path, opts);
  EXPECT_THROW((void)import_logs({log("a.gslog")}, m_db_path, opts), DatabaseError);
  opts.overwrite = true;
  EXPECT_NO_THROW((void)import_logs({log("a.gslog")}, m_db_path, opts));
  EXPECT_FALSE(std::filesystem::exists(m_db_path + ".partial"));
  EXPECT_THROW((void)import_logs({log("a.gslog")}, m_dir.file("no/such/dir/t.sqlite"), opts), DatabaseError);
}

// Throughput sanity check; the rate is printed (bench: ~0.65 M events/s on one idle core).
TEST_F(ImporterTest, ImportsManyEventsFast) {
  constexpr std::uint32_t kLaunches = 200'000;
  {
    LogBuilder b(log("a.gslog"), 100);
    b.process(1000);
    for (std::uint32_t i = 1; i <= kLaunches; ++i) {
      const std::uint64_t t = 1000 + 10ull * i;
      b.api(t, t + 3, 7, i, "cudaLaunchKernel");
      b.kernel(t + 5, t + 9, i, i % 2 ? kFill : kVecAdd);
      if (i % 4096 == 0) b.flush();
    }
    b.end(1000 + 10ull * kLaunches + 100);
    b.close();
  }
  const auto t0 = std::chrono::steady_clock::now();
  const ImportResult r = import({log("a.gslog")});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double rate = 2.0 * kLaunches / s;
  std::printf("[ rate     ] %.0f events/s (%u launches + kernels in %.3f s)\n", rate, kLaunches, s);
  RecordProperty("events_per_s", static_cast<int>(rate));
  EXPECT_EQ(r.rows.kernels, kLaunches);
  EXPECT_EQ(r.rows.api_calls, kLaunches);
  EXPECT_GT(rate, 50'000.0);  // catches accidental O(n^2), not speed: CI machines are shared
}

}  // namespace
}  // namespace gpuscope::store
