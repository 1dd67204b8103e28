// The streamed Perfetto protobuf export (analyze::TraceTimeline → render::write_perfetto_proto)
// holds what the JSON export of the same trace holds, read back with the protobuf parser:
// on the committed recording (tests/data/cnn.logs) and on a trace with sampled GPU metrics.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "../committed_traces.hpp"
#include "../render/pftrace_summary.hpp"
#include "analyze/timeline/timeline.hpp"
#include "gpu_metrics_trace.hpp"
#include "render/perfetto_json.hpp"
#include "render/perfetto_proto.hpp"
#include "store/database.hpp"
#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

struct Exports {
  std::string json;
  std::string pftrace;
};

// Both formats, each from its own pass over the trace database, as `gpuscope export` runs.
Exports both(store::Database& db) {
  Exports e;
  for (const bool proto : {false, true}) {
    TraceTimeline source(db);
    const TimelineHeader header = source.header();
    const TimelineTracks tracks = source.tracks(header);
    std::ostringstream out;
    if (proto) {
      render::write_perfetto_proto(header, tracks, source, out);
      e.pftrace = out.str();
    } else {
      render::write_perfetto_json(header, tracks, source, out);
      e.json = out.str();
    }
  }
  return e;
}

void expect_same_content(const Exports& e) {
  test::PftraceFacts facts;
  (void)test::expect_same_events(e.pftrace, e.json, facts);
  EXPECT_EQ(facts.interned_names, static_cast<std::int64_t>(facts.distinct_names.size()));
}

TEST(TimelinePftrace, CommittedRecordingHoldsWhatTheJsonHolds) {
  store::Database db(test::committed_trace("cnn"), store::Database::Mode::kReadOnly);
  const Exports e = both(db);
  expect_same_content(e);
  const test::ExportSummary s = test::summarize_pftrace(e.pftrace);
  std::int64_t kernels = 0;
  for (const auto& [cat, name] : s.slices) kernels += cat == "kernel";
  EXPECT_GT(kernels, 100);
  EXPECT_GT(s.flow_steps, 100);  // launch → kernel
  EXPECT_LT(e.pftrace.size() * 5, e.json.size());
}

TEST(TimelinePftrace, SampledMetricsAreCounterTracks) {
  test::TraceDb t;
  test::build_metrics_trace(t);
  const Exports e = both(t.db());
  expect_same_content(e);
  const test::ExportSummary s = test::summarize_pftrace(e.pftrace);
  EXPECT_EQ(s.counter_points.at("SM active % (device 0)"), 9);
  EXPECT_EQ(s.counter_points.at("warps active % (device 0)"), 1);
}

// Benchmark, not a test (disabled; validation/bench_export_formats.sh runs the CLI the same
// way): exports GPUSCOPE_BENCH_TRACE in GPUSCOPE_BENCH_FORMAT (perfetto or pftrace; none: only
// reads the events) to
// GPUSCOPE_BENCH_OUTPUT, as `gpuscope export` does, and prints the time; run it under
// /usr/bin/time -v for the peak memory.
TEST(TimelinePftraceBenchmark, DISABLED_ExportBigTrace) {
  const char* trace = std::getenv("GPUSCOPE_BENCH_TRACE");
  const char* format = std::getenv("GPUSCOPE_BENCH_FORMAT");
  const char* output = std::getenv("GPUSCOPE_BENCH_OUTPUT");
  if (!trace || !format || !output) GTEST_SKIP() << "set GPUSCOPE_BENCH_TRACE, _FORMAT and _OUTPUT";
  const auto start = std::chrono::steady_clock::now();
  store::Database db(trace, store::Database::Mode::kReadOnly);
  TraceTimeline source(db);
  const TimelineHeader header = source.header();
  const TimelineTracks tracks = source.tracks(header);
  std::ofstream out(output, std::ios::binary);
  if (std::string(format) == "none") {  // reading the trace alone, the floor of both
    source.api_calls([](const ApiCallEvent&) {});
    source.nvtx([](const NvtxEvent&) {});
    source.syncs([](const SyncEvent&) {});
    source.kernels([](const KernelEvent&) {});
    source.memcpys([](const MemcpyEvent&) {});
    source.memsets([](const MemsetEvent&) {});
    source.memory([](const MemoryCounterEvent&) {});
  } else if (std::string(format) == "pftrace") {
    render::write_perfetto_proto(header, tracks, source, out);
  } else {
    render::write_perfetto_json(header, tracks, source, out);
  }
  out.close();
  ASSERT_FALSE(out.fail());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << format << ": " << s << " s\n";
}

}  // namespace
}  // namespace gpuscope::analyze
