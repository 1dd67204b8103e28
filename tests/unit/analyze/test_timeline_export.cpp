// The streamed Perfetto export (analyze::TraceTimeline → render::write_perfetto_json) writes
// the same bytes as the whole timeline in memory (analyze::load_timeline, flags re-derived
// from the vectors by link_launches), on a built trace and on the committed recording.
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../committed_traces.hpp"
#include "analyze/timeline/timeline.hpp"
#include "render/perfetto_json.hpp"
#include "store/database.hpp"
#include "store/trace.hpp"
#include "gpu_metrics_trace.hpp"
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

// --gpu-metrics: one counter track per metric and GPU, in the track's unit, a point at a
// sample's start where the value changes; NULL values and the gap (sample 7) get no point.
TEST(TimelineExport, SampledMetricsAreCounterTracksPerGpu) {
  TraceDb t;
  test::build_metrics_trace(t);
  const nlohmann::json j = nlohmann::json::parse(streamed(t.db()));
  std::map<std::string, std::vector<std::pair<std::string, double>>> tracks;  // name → (ts, value)
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "C" || e["cat"] != "gpu_metrics") continue;
    EXPECT_EQ(e["pid"], 0);
    EXPECT_EQ(e["tid"], 0);
    tracks[e["name"]].emplace_back(e["ts"].dump(), e["args"]["value"].get<double>());
  }
  std::vector<std::string> names;
  for (const auto& [name, points] : tracks) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"DRAM read GB/s (device 0)", "DRAM write GB/s (device 0)",
                                             "L2 GB/s (device 0)", "SM active % (device 0)", "SM clock MHz (device 0)",
                                             "tensor active % (device 0)", "warps active % (device 0)"}));
  ASSERT_EQ(tracks["SM active % (device 0)"].size(), 9u);
  EXPECT_EQ(tracks["tensor active % (device 0)"].size(), 8u);  // NULL in sample 6
  EXPECT_EQ(tracks["warps active % (device 0)"].size(), 1u);   // 50 % throughout: one point
  EXPECT_EQ(tracks["SM clock MHz (device 0)"].size(), 1u);
  // Times in µs from the trace start (the first sample, the process and the window: kT0).
  EXPECT_EQ(tracks["SM active % (device 0)"][3], (std::pair<std::string, double>{"300.0", 30.0}));
  EXPECT_EQ(tracks["SM active % (device 0)"][7], (std::pair<std::string, double>{"800.0", 80.0}));  // after the gap
  EXPECT_DOUBLE_EQ(tracks["DRAM read GB/s (device 0)"][2].second, 300.0);  // 3e7 bytes in 100 µs
  EXPECT_DOUBLE_EQ(tracks["SM clock MHz (device 0)"][0].second, 1980.0);
  // A sample after every other event ends the trace (its point is at its start).
  const std::int64_t late = test::kMetricsT0 + 2000 * test::kMetricsUs;
  t.add(rows::GpuMetric{.device_id = 0, .start_ns = late, .end_ns = late + 100, .metric_id = 1, .value = 5.0});
  TraceTimeline source(t.db());
  EXPECT_EQ(source.tracks(source.header()).end_ns, late);
  EXPECT_EQ(source.header().base_ns, test::kMetricsT0);
  // Without the tables (a trace from before --gpu-metrics) the export is as before.
  TraceDb old;
  test::build_metrics_trace(old, false);
  const std::string before = streamed(old.db());
  old.db().exec(
      "DROP VIEW v_gpu_metrics; DROP TABLE gpu_metrics; DROP TABLE gpu_metric_names; "
      "DROP TABLE gpu_metrics_sessions");
  EXPECT_EQ(streamed(old.db()), before);
  EXPECT_EQ(before, in_memory(old.db()));
}

TEST(TimelineExport, StreamedEqualsInMemoryOnTheCommittedRecording) {
  store::Database db(test::committed_trace("cnn"), store::Database::Mode::kReadOnly);
  const std::string text = streamed(db);
  EXPECT_EQ(text, in_memory(db));
  EXPECT_GT(text.size(), 100'000u);  // 306 kernels, 331 API calls and their flows
}

// TraceTimeline::set_read_ahead (a second thread reads batches of rows ahead of the visitor):
// the same events in the same order, on the committed recording and on a trace of several
// batches; a visitor's exception stops the reading and reaches the caller.
std::string streamed_read_ahead(store::Database& db) {
  TraceTimeline source(db);
  source.set_read_ahead(true);
  const TimelineHeader header = source.header();
  const TimelineTracks tracks = source.tracks(header);
  std::ostringstream out;
  render::write_perfetto_json(header, tracks, source, out);
  return out.str();
}

TEST(TimelineExport, ReadAheadWritesTheSameBytes) {
  store::Database db(test::committed_trace("cnn"), store::Database::Mode::kReadOnly);
  EXPECT_EQ(streamed_read_ahead(db), streamed(db));

  TraceDb t;
  t.add<rows::Process>({{.pid = 1, .exe = "/bin/a", .start_ns = 100, .end_ns = 100'000'000}});
  t.add<rows::Device>({TraceDb::h100_row(1, "GPU-a")});
  t.strings({{1, "cudaLaunchKernel"}, {2, "k2"}, {3, "k3"}});
  constexpr int kLaunches = 10'000;  // about five batches of each kind
  for (int i = 0; i < kLaunches; ++i) {
    const std::int64_t at = 1'000 + 5'000 * static_cast<std::int64_t>(i);
    t.api(1, 1, 1, at, at + 1'000, i + 1);
    if (i % 3 != 0) t.kernel(1, 0, 7 + i % 2, i + 1, at + 2'000, at + 4'000, 2 + i % 2);
  }
  const std::string text = streamed(t.db());
  EXPECT_EQ(streamed_read_ahead(t.db()), text);
  EXPECT_EQ(text, in_memory(t.db()));

  TraceTimeline source(t.db());
  source.set_read_ahead(true);
  int seen = 0;
  EXPECT_THROW(source.kernels([&seen](const KernelEvent&) {
    if (++seen == 3'000) throw std::runtime_error("stop");
  }),
               std::runtime_error);
  EXPECT_EQ(seen, 3'000);
  std::int64_t last = 0, kernels = 0;  // and the source reads again from the start
  source.kernels([&](const KernelEvent& e) {
    EXPECT_GE(e.start_ns, last);
    last = e.start_ns;
    ++kernels;
  });
  EXPECT_EQ(kernels, kLaunches - (kLaunches + 2) / 3);
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

// gpuscope trace --python-callsites: an API call with a stack carries it, innermost frame
// first, in the JSON's args ("Python stack"); a call without one has no such argument. The
// stack: cudaMemcpyAsync in torch's pin_memory.py:40 copy_to, called from loader.py:123.
TEST(TimelineExport, ApiCallsCarryTheirPythonStack) {
  TraceDb t;
  t.add<rows::Process>({{.pid = 100, .exe = "/usr/bin/python3", .start_ns = 1000, .end_ns = 9000}});
  t.strings({{1, "k"}, {2, "cudaMemcpyAsync"}, {3, "cudaLaunchKernel"}});
  t.pin_memory_stacks(100);
  t.api(100, 1, 2, 1900, 1950, 10, 2);
  t.api(100, 1, 3, 2000, 2050, 11);
  const std::string text = streamed(t.db());
  EXPECT_EQ(text, in_memory(t.db()));
  std::map<std::string, std::optional<std::string>> stacks;
  const nlohmann::json doc = nlohmann::json::parse(text);
  for (const nlohmann::json& e : doc["traceEvents"]) {
    if (e.value("cat", "") != "cuda_runtime") continue;
    const nlohmann::json& args = e["args"];
    stacks[e["name"]] =
        args.contains("Python stack") ? std::optional(args["Python stack"].get<std::string>()) : std::nullopt;
  }
  EXPECT_EQ(stacks["cudaMemcpyAsync"], "pin_memory.py:40 copy_to ← loader.py:123 Loader.__next__");
  EXPECT_EQ(stacks.count("cudaLaunchKernel"), 1U);
  EXPECT_EQ(stacks["cudaLaunchKernel"], std::nullopt);
}

}  // namespace
}  // namespace gpuscope::analyze
