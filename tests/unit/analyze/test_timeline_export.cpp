// The streamed Perfetto export (analyze::TraceTimeline → render::write_perfetto_json) writes
// the same bytes as the whole timeline in memory (analyze::load_timeline, flags re-derived
// from the vectors by link_launches), on a built trace and on the committed recording.
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../committed_traces.hpp"
#include "analyze/timeline.hpp"
#include "render/perfetto_json.hpp"
#include "store/database.hpp"
#include "store/trace.hpp"
#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using test::TraceDb;
namespace rows = store::rows;

std::string streamed(store::Database& db) {
  TraceTimeline source(db);
  const TimelineHeader header = source.header();
  const TimelineTracks tracks = source.tracks(header);
  std::ostringstream out;
  render::write_perfetto_json(header, tracks, source, out);
  return out.str();
}

std::string in_memory(store::Database& db) {
  Timeline tl = load_timeline(db);
  link_launches(tl);  // the vector rule, not the SQL flags
  std::ostringstream out;
  render::write_perfetto_json(tl, out);
  return out.str();
}

TEST(TimelineExport, StreamedEqualsInMemoryOnTwoProcessesSharingAGpu) {
  TraceDb t;
  t.add<rows::Process>({{.pid = 1, .exe = "/bin/a", .start_ns = 100, .end_ns = 9000},
                        {.pid = 2, .exe = "/bin/b", .start_ns = 150, .end_ns = 9500}});
  t.add<rows::Device>({TraceDb::h100_row(1, "GPU-same"), TraceDb::h100_row(2, "GPU-same")});
  t.strings({{1, "cudaLaunchKernel"}, {2, "k"}});
  t.api(1, 1, 1, 1000, 1100, 5);
  t.api(1, 2, 1, 1200, 1300, 5);  // repeated correlation: one flow start
  t.api(2, 2, 1, 1000, 1100, 5);
  t.kernel(1, 0, 7, 5, 2000, 2500, 2);
  t.kernel(2, 0, 7, 5, 2000, 2600, 2);  // same start: tie broken by row id
  t.kernel(2, 0, 9, 9, 2700, 2800, 2);
  const std::string text = streamed(t.db());
  EXPECT_EQ(text, in_memory(t.db()));
  const nlohmann::json j = nlohmann::json::parse(text);
  int flow_starts = 0, flow_ends = 0;
  for (const auto& e : j["traceEvents"]) {
    flow_starts += e["ph"] == "s";
    flow_ends += e["ph"] == "f";
  }
  EXPECT_EQ(flow_starts, 2);  // (1, 5) once, (2, 5)
  EXPECT_EQ(flow_ends, 2);    // correlation 9 has no launch call
}

TEST(TimelineExport, StreamedEqualsInMemoryOnTheCommittedRecording) {
  store::Database db(test::committed_trace("cnn"), store::Database::Mode::kReadOnly);
  const std::string text = streamed(db);
  EXPECT_EQ(text, in_memory(db));
  EXPECT_GT(text.size(), 100'000u);  // 306 kernels, 331 API calls and their flows
}

}  // namespace
}  // namespace gpuscope::analyze

namespace gpuscope::analyze {
namespace {

// A recording made with --pytorch=ops,modules: the operator and module ranges come out as
// torch.profiler's trace names them (cpu_op with the operator's name and sequence number,
// python_function for module forwards), one per row of torch_ops and torch_modules.
TEST(TimelineExport, PytorchRangesAreCpuOpsAndPythonFunctions) {
  store::Database db = store::open_trace(gpuscope::test::committed_trace("cnn-pytorch"));
  const nlohmann::json doc = nlohmann::json::parse(streamed(db));
  std::int64_t ops = 0, modules = 0, with_seq = 0;
  for (const nlohmann::json& e : doc["traceEvents"]) {
    const std::string cat = e.value("cat", "");
    if (cat == "cpu_op") {
      ++ops;
      EXPECT_EQ(e["name"].get<std::string>().find("op_id"), std::string::npos) << e.dump();
      with_seq += e["args"].contains("Sequence number") ? 1 : 0;
    }
    if (cat == "python_function") ++modules;
  }
  EXPECT_EQ(ops, db.query_int("SELECT COUNT(*) FROM torch_ops").value_or(-1));
  EXPECT_EQ(modules, db.query_int("SELECT COUNT(*) FROM torch_modules").value_or(-1));
  EXPECT_EQ(with_seq, db.query_int("SELECT COUNT(*) FROM torch_ops WHERE seq IS NOT NULL").value_or(-1));
  EXPECT_GT(with_seq, 0);
}

}  // namespace
}  // namespace gpuscope::analyze
