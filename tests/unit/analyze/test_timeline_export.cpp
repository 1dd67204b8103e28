// The streamed Perfetto export (analyze::TraceTimeline → render::write_perfetto_json) writes
// the same bytes as the whole timeline in memory (analyze::load_timeline, flags re-derived
// from the vectors by link_launches), on a built trace and on the committed recording.
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

// --cuda-memory-usage: the counter of a GPU sums the levels (memory_events.in_use_bytes) of
// every process on it; rows without a level (host memory, pool operations) are not samples.
TEST(TimelineExport, MemoryCountersSumTheProcessesOnAGpu) {
  TraceDb t;
  t.add<rows::Process>({{.pid = 1, .exe = "/bin/a", .start_ns = 100, .end_ns = 9000},
                        {.pid = 2, .exe = "/bin/b", .start_ns = 150, .end_ns = 9500}});
  rows::Device other = TraceDb::h100_row(1, "GPU-other");
  other.device_id = 1;
  t.add<rows::Device>({TraceDb::h100_row(1, "GPU-same"), TraceDb::h100_row(2, "GPU-same"), other});
  constexpr std::int64_t kMiB = 1 << 20;
  const auto row = [](std::int64_t pid, std::int64_t device, std::int64_t ts, std::string_view op,
                      std::string_view kind, std::int64_t bytes, std::optional<std::int64_t> in_use) {
    return rows::MemoryEvent{.pid = pid,
                             .device_id = device,
                             .ts_ns = ts,
                             .operation = op,
                             .memory_kind = kind,
                             .bytes = bytes,
                             .in_use_bytes = in_use};
  };
  t.add<rows::MemoryEvent>(
      {row(1, 0, 1000, "alloc", "device", 2 * kMiB, 2 * kMiB), row(2, 0, 1100, "alloc", "device", 20 * kMiB, 20 * kMiB),
       row(1, 1, 1200, "alloc", "device", 4 * kMiB, 4 * kMiB), row(1, 0, 1300, "alloc", "pinned", kMiB, std::nullopt),
       row(1, 0, 1400, "pool_create", "device", 32 * kMiB, std::nullopt),
       row(1, 0, 1500, "free", "device", 2 * kMiB, 0), row(2, 0, 9900, "free", "device", 20 * kMiB, 0)});
  const std::string text = streamed(t.db());
  EXPECT_EQ(text, in_memory(t.db()));
  const nlohmann::json j = nlohmann::json::parse(text);
  std::vector<std::pair<std::string, std::int64_t>> samples;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "C") samples.emplace_back(e["name"], e["args"]["bytes"].get<std::int64_t>());
  const std::vector<std::pair<std::string, std::int64_t>> expected = {{"memory in use (device 0)", 2 * kMiB},
                                                                      {"memory in use (device 0)", 22 * kMiB},
                                                                      {"memory in use (device 1)", 4 * kMiB},
                                                                      {"memory in use (device 0)", 20 * kMiB},
                                                                      {"memory in use (device 0)", 0}};
  EXPECT_EQ(samples, expected);
  // The last free (9900 ns) is after both processes' ends: it ends the trace.
  TraceTimeline source(t.db());
  EXPECT_EQ(source.tracks(source.header()).end_ns, 9900);
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
