// Python call sites through the importer (--python-callsites): the collector's PyFrameRecords
// and PyStackRecords become py_frames and py_stacks with trace-wide ids, and api_calls name
// the stack their call was made from.
#include <gtest/gtest.h>

#include "log_builder.hpp"
#include "store/database.hpp"
#include "store/importer.hpp"
#include "store/trace.hpp"

namespace gpuscope::store {
namespace {

using test::LogBuilder;
using test::TempDir;

ImportOptions options() {
  ImportOptions o;
  o.overwrite = true;
  o.command = "python train.py";
  return o;
}

// Two processes with the same log ids: the trace's ids differ; each call names its own
// process's stack; a call without a stack, and one naming a stack never defined, have none.
TEST(PythonStacksImport, CallSitesJoinApiCallsPerProcess) {
  TempDir dir;
  for (std::uint32_t pid : {100U, 200U}) {
    LogBuilder b(dir.file("p" + std::to_string(pid) + ".gslog"), pid);
    b.process(1000);
    b.py_frame(1, "/srv/train.py", 57, "<module>", 1);
    b.py_frame(2, "/srv/train.py", pid == 100 ? 12 : 13, "loss_value", 10);
    b.py_stack(1, 0, 1, 0);
    b.py_stack(2, 1, 2, 1);
    b.api(1100, 1200, 7, 1, "cudaStreamSynchronize_v3020");  // no stack
    b.api_py_stack = 2;
    b.api(1300, 1900, 7, 2, "cudaMemcpyAsync_v3020");
    b.api_py_stack = 9;  // never defined
    b.api(2000, 2100, 7, 3, "cudaMemcpyAsync_v3020");
    b.end(3000);
    b.close();
  }
  (void)import_logs({dir.file("p100.gslog"), dir.file("p200.gslog")}, dir.file("t.sqlite"), options());
  Database db = open_trace(dir.file("t.sqlite"));
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM py_frames"), 4);
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM py_stacks"), 4);
  const std::string where_line =
      "SELECT f.line || ' ' || s.value || ' <- ' || pf.line FROM api_calls a JOIN py_stacks k ON k.id = a.py_stack_id "
      "JOIN py_frames f ON f.id = k.frame_id JOIN strings s ON s.id = f.function_id "
      "JOIN py_stacks pk ON pk.id = k.parent_id JOIN py_frames pf ON pf.id = pk.frame_id "
      "WHERE a.correlation_id = 2 AND a.pid = ";
  EXPECT_EQ(db.query_text(where_line + "100"), "12 loss_value <- 57");
  EXPECT_EQ(db.query_text(where_line + "200"), "13 loss_value <- 57");
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM api_calls WHERE py_stack_id IS NULL"), 4);
  EXPECT_EQ(db.query_text("SELECT s.value FROM py_frames f JOIN strings s ON s.id = f.file_id LIMIT 1"),
            "/srv/train.py");
  EXPECT_EQ(db.query_int("SELECT MAX(depth) FROM py_stacks"), 1);
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM py_stacks WHERE parent_id IS NULL"), 2);
}

// A stack may come before its frame (resolved later, with the GIL), a call before its stack;
// a frame never resolved keeps a row whose file, function and line are NULL.
TEST(PythonStacksImport, FramesResolvedLateOrNever) {
  TempDir dir;
  {
    LogBuilder b(dir.file("a.gslog"), 100);
    b.process(1000);
    b.py_stack(1, 0, 1, 0);
    b.py_stack(2, 1, 2, 1);
    b.api_py_stack = 2;
    b.api(1300, 1900, 7, 2, "cudaMemcpyAsync_v3020");
    b.py_frame(1, "/srv/train.py", 57, "<module>", 1);
    b.py_frame(1, "/srv/again.py", 1, "<module>", 1);  // a repeat is ignored
    b.api_py_stack = 3;                                // named before its record
    b.api(2000, 2100, 7, 4, "cudaStreamSynchronize_v3020");
    b.py_stack(3, 1, 1, 1);
    b.end(3000);
    b.close();
  }
  (void)import_logs({dir.file("a.gslog")}, dir.file("t.sqlite"), options());
  Database db = open_trace(dir.file("t.sqlite"));
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM py_frames"), 2);
  EXPECT_EQ(db.query_text("SELECT s.value || ':' || f.line FROM py_stacks k JOIN py_frames f ON f.id = k.frame_id "
                          "JOIN strings s ON s.id = f.file_id WHERE k.depth = 0"),
            "/srv/train.py:57");
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM py_frames f JOIN py_stacks k ON k.frame_id = f.id "
                         "WHERE k.depth = 1 AND f.file_id IS NULL AND f.line IS NULL"),
            1);
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM api_calls WHERE py_stack_id IS NOT NULL"), 2);
  EXPECT_EQ(db.query_int("SELECT k.depth FROM api_calls a JOIN py_stacks k ON k.id = a.py_stack_id "
                         "WHERE a.correlation_id = 4"),
            1);
}

// Periodic samples (--python-sampling) name the same stacks as the call sites; a sample with no
// Python frame has none, as does one naming a stack the log never defined; the flags are columns.
TEST(PythonStacksImport, SamplesNameTheirStacks) {
  TempDir dir;
  {
    LogBuilder b(dir.file("a.gslog"), 100);
    b.process(1000);
    b.py_frame(1, "/srv/train.py", 57, "<module>", 1);
    b.py_frame(2, "/srv/data.py", 123, "Loader.__next__", 120);
    b.py_stack(1, 0, 1, 0);
    b.py_stack(2, 1, 2, 1);
    b.py_sample(1100, 100, 2, log::kPySampleHoldsGil | log::kPySampleOnCpu);
    b.py_sample(1100, 101, 0, 0);
    b.py_sample(1200, 100, 2, log::kPySampleOnCpu);
    b.py_sample(1300, 100, 7, 0);  // a stack never defined
    b.end(3000);
    b.close();
  }
  (void)import_logs({dir.file("a.gslog")}, dir.file("t.sqlite"), options());
  Database db = open_trace(dir.file("t.sqlite"));
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM py_samples"), 4);
  EXPECT_EQ(
      db.query_text("SELECT GROUP_CONCAT(x, ' ') FROM (SELECT p.ts_ns || ':' || p.tid || ':' || "
                    "IFNULL(f.line, '-') || ':' || p.holds_gil || p.on_cpu AS x FROM py_samples p LEFT JOIN "
                    "py_stacks k ON k.id = p.py_stack_id LEFT JOIN py_frames f ON f.id = k.frame_id ORDER BY p.id)"),
      "1100:100:123:11 1100:101:-:00 1200:100:123:01 1300:100:-:00");
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM py_samples WHERE py_stack_id IS NULL"), 2);  // no frame; undefined
  EXPECT_EQ(db.query_int("SELECT COUNT(*) FROM threads WHERE tid = 101"), 1);
}

}  // namespace
}  // namespace gpuscope::store
