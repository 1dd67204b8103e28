#include "render/perfetto_json.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/metric_attribution.hpp"
#include "timeline_forwarding.hpp"

namespace gpuscope::render {
namespace {

using nlohmann::json;

constexpr std::int64_t kBase = 1'700'000'000'000'000'000;  // realistic CLOCK_REALTIME ns

Timeline one_process() {
  Timeline tl;
  tl.base_ns = kBase;
  tl.processes.push_back(
      {.pid = 1234, .name = "python3", .cmdline = "python3 x.py", .start_ns = kBase, .end_ns = kBase + 5'000'000});
  tl.threads.push_back({1234, 1240, "loader"});
  TimelineDevice dev;
  dev.pid = 1234;
  dev.device_id = 0;
  dev.gpu_index = 0;
  dev.name = "NVIDIA H100 80GB HBM3";
  dev.sm_count = 132;
  dev.max_warps_per_sm = 64;
  tl.devices.push_back(dev);

  tl.api_calls.push_back({.pid = 1234,
                          .tid = 1234,
                          .name = "cudaLaunchKernel",
                          .cbid = 211,
                          .start_ns = kBase + 1000,
                          .end_ns = kBase + 3000,
                          .correlation_id = 5});
  tl.api_calls.push_back({.pid = 1234,
                          .tid = 1240,
                          .name = "cudaMemcpyAsync",
                          .cbid = 41,
                          .start_ns = kBase + 4000,
                          .end_ns = kBase + 4500,
                          .correlation_id = 6});
  tl.api_calls.push_back({.pid = 1234,
                          .tid = 1234,
                          .is_driver = true,
                          .name = "cuCtxGetCurrent",
                          .start_ns = kBase + 100,
                          .end_ns = kBase + 200});

  tl.nvtx.push_back({.pid = 1234,
                     .tid = 1234,
                     .style = "PushPop",
                     .text = "step",
                     .start_ns = kBase + 500,
                     .end_ns = kBase + 900'000});
  tl.nvtx.push_back({.pid = 1234, .tid = 1234, .style = "Mark", .text = "here", .start_ns = kBase + 600});
  tl.nvtx.push_back({.pid = 1234, .tid = 1234, .style = "PushPop", .text = "open", .start_ns = kBase + 700});
  tl.syncs.push_back({.pid = 1234,
                      .sync_type = "stream_synchronize",
                      .context_id = 1,
                      .stream_id = 7,
                      .start_ns = kBase + 2'000'000,
                      .end_ns = kBase + 2'000'001,
                      .correlation_id = 9});

  KernelEvent k;
  k.pid = 1234;
  k.stream_id = 7;
  k.context_id = 1;
  k.correlation_id = 5;
  k.start_ns = kBase + 1'234'567;  // → "ts": 1234.567
  k.end_ns = kBase + 1'244'568;    // → "dur": 10.001
  k.name = "vec_add(float*, int)";
  k.grid = {264, 1, 1};
  k.block = {48, 1, 1};
  k.registers_per_thread = 32;
  k.static_shared_memory = 1024;
  k.dynamic_shared_memory = 2048;
  tl.kernels.push_back(k);

  MemcpyEvent m;
  m.pid = 1234;
  m.stream_id = 8;
  m.correlation_id = 6;
  m.start_ns = kBase + 5000;
  m.end_ns = kBase + 7000;
  m.bytes = 4'000'000;
  m.copy_kind = "HtoD";
  m.src_kind = "pageable";
  m.dst_kind = "device";
  tl.memcpys.push_back(m);

  MemsetEvent s;
  s.pid = 1234;
  s.stream_id = 7;
  s.start_ns = kBase + 8000;
  s.end_ns = kBase + 8000;  // zero length: no bandwidth arg, no division by zero
  s.bytes = 64;
  s.memory_kind = "device";
  tl.memsets.push_back(s);
  return tl;
}

// As export does for a trace: the launch flags derived first (link_launches).
std::string write(Timeline tl) {
  link_launches(tl);
  std::ostringstream out;
  write_perfetto_json(tl, out);
  return out.str();
}

std::vector<json> events(const json& j, const std::string& ph, const std::string& cat = "") {
  std::vector<json> out;
  for (const json& e : j["traceEvents"])
    if (e["ph"] == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
  return out;
}

const json* by_name(const std::vector<json>& v, const std::string& name) {
  for (const json& e : v)
    if (e["name"] == name) return &e;
  return nullptr;
}

TEST(FormatUs, ExactThreeDecimalsFromIntegerNs) {
  EXPECT_EQ(format_us(0), "0.000");
  EXPECT_EQ(format_us(999), "0.999");
  EXPECT_EQ(format_us(1000), "1.000");
  EXPECT_EQ(format_us(1234567), "1234.567");
  EXPECT_EQ(format_us(-5), "-0.005");
  EXPECT_EQ(format_us(9'007'199'254'740'993), "9007199254740.993");  // beyond double precision
}

TEST(PerfettoJson, TopLevelFollowsKineto) {
  const std::string text = write(one_process());
  const json j = json::parse(text);
  EXPECT_EQ(j["schemaVersion"], 1);
  EXPECT_EQ(j["displayTimeUnit"], "ms");
  EXPECT_EQ(j["baseTimeNanoseconds"].get<std::int64_t>(), kBase);
  ASSERT_EQ(j["deviceProperties"].size(), 1u);
  EXPECT_EQ(j["deviceProperties"][0]["id"], 0);
  EXPECT_EQ(j["deviceProperties"][0]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(j["deviceProperties"][0]["numSms"], 132);
  EXPECT_EQ(j["deviceProperties"][0]["maxThreadsPerMultiprocessor"], 2048);
  EXPECT_TRUE(j["traceEvents"].is_array());
}

TEST(PerfettoJson, TimesAreMicrosecondsWithExactNanoseconds) {
  const std::string text = write(one_process());
  // Raw text: ns kept exactly, 3 decimals, relative to baseTimeNanoseconds.
  EXPECT_NE(text.find(R"("ts": 1234.567, "dur": 10.001)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("ts": 1.000, "dur": 2.000)"), std::string::npos);  // cudaLaunchKernel
  EXPECT_NE(text.find(R"("ts": 8.000, "dur": 0.000)"), std::string::npos);  // memset
}

TEST(PerfettoJson, KernelEventAndArgs) {
  const json j = json::parse(write(one_process()));
  const auto kernels = events(j, "X", "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  const json& k = kernels[0];
  EXPECT_EQ(k["name"], "vec_add(float*, int)");
  EXPECT_EQ(k["pid"], 0);  // GPU index
  EXPECT_EQ(k["tid"], 7);  // stream
  const json& a = k["args"];
  EXPECT_EQ(a["queued"], 0);
  EXPECT_EQ(a["device"], 0);
  EXPECT_EQ(a["context"], 1);
  EXPECT_EQ(a["stream"], 7);
  EXPECT_EQ(a["correlation"], 5);
  EXPECT_EQ(a["registers per thread"], 32);
  EXPECT_EQ(a["shared memory"], 3072);
  EXPECT_DOUBLE_EQ(a["blocks per SM"].get<double>(), 2.0);  // 264 blocks / 132 SMs
  EXPECT_DOUBLE_EQ(a["warps per SM"].get<double>(), 4.0);   // 48 threads = 2 warps per block
  EXPECT_EQ(a["grid"], json::array({264, 1, 1}));
  EXPECT_EQ(a["block"], json::array({48, 1, 1}));
}

TEST(PerfettoJson, CpuEventsMemcpyMemsetNvtxSync) {
  const json j = json::parse(write(one_process()));
  const auto runtime = events(j, "X", "cuda_runtime");
  ASSERT_EQ(runtime.size(), 2u);
  const json* launch = by_name(runtime, "cudaLaunchKernel");
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ((*launch)["pid"], 1234);
  EXPECT_EQ((*launch)["tid"], 1234);
  EXPECT_EQ((*launch)["args"]["cbid"], 211);
  EXPECT_EQ((*launch)["args"]["correlation"], 5);
  ASSERT_EQ(events(j, "X", "cuda_driver").size(), 1u);

  const auto copies = events(j, "X", "gpu_memcpy");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0]["name"], "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(copies[0]["tid"], 8);
  EXPECT_EQ(copies[0]["args"]["bytes"], 4000000);
  EXPECT_DOUBLE_EQ(copies[0]["args"]["memory bandwidth (GB/s)"].get<double>(), 2000.0);

  const auto sets = events(j, "X", "gpu_memset");
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0]["name"], "Memset (Device)");
  EXPECT_FALSE(sets[0]["args"].contains("memory bandwidth (GB/s)"));

  const auto ranges = events(j, "X", "user_annotation");
  ASSERT_EQ(ranges.size(), 2u);
  const json* open = by_name(ranges, "open");
  ASSERT_NE(open, nullptr);
  EXPECT_EQ((*open)["args"]["unclosed"], true);
  EXPECT_DOUBLE_EQ((*open)["dur"].get<double>(), 4999.3);  // to the process end
  const auto marks = events(j, "i", "user_annotation");
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0]["s"], "t");
  EXPECT_EQ(marks[0]["name"], "here");

  const auto syncs = events(j, "X", "cuda_sync");
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0]["name"], "Stream Sync");
  EXPECT_EQ(syncs[0]["tid"], 1234);  // unknown thread → main thread
}

TEST(PerfettoJson, FlowsPairLaunchesWithGpuWork) {
  const json j = json::parse(write(one_process()));
  const auto starts = events(j, "s");
  const auto ends = events(j, "f");
  ASSERT_EQ(starts.size(), 2u);  // kernel launch and memcpy; the memset has no correlation
  ASSERT_EQ(ends.size(), 2u);
  std::map<std::int64_t, json> start_by_id;
  for (const json& s : starts) {
    EXPECT_EQ(s["cat"], "ac2g");
    EXPECT_EQ(s["pid"], 1234);
    start_by_id[s["id"].get<std::int64_t>()] = s;
  }
  for (const json& f : ends) {
    EXPECT_EQ(f["cat"], "ac2g");
    EXPECT_EQ(f["bp"], "e");
    EXPECT_EQ(f["pid"], 0);
    ASSERT_TRUE(start_by_id.count(f["id"].get<std::int64_t>())) << f.dump();
  }
  const auto& s5 = start_by_id.at(5);
  EXPECT_EQ(s5["tid"], 1234);
  EXPECT_DOUBLE_EQ(s5["ts"].get<double>(), 1.0);
  EXPECT_EQ(start_by_id.at(6)["tid"], 1240);
}

TEST(PerfettoJson, MetadataNamesAndSortsRows) {
  const json j = json::parse(write(one_process()));
  std::map<std::pair<std::string, std::int64_t>, json> process_meta;
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, json> thread_meta;
  for (const json& m : events(j, "M")) {
    const std::string name = m["name"];
    if (name.rfind("process_", 0) == 0)
      process_meta[{name, m["pid"].get<std::int64_t>()}] = m["args"];
    else
      thread_meta[{name, m["pid"].get<std::int64_t>(), m["tid"].get<std::int64_t>()}] = m["args"];
  }
  EXPECT_EQ(process_meta.at({"process_name", 1234})["name"], "python3 (pid 1234)");
  EXPECT_EQ(process_meta.at({"process_name", 0})["name"], "GPU 0");
  EXPECT_EQ(process_meta.at({"process_labels", 0})["labels"], "NVIDIA H100 80GB HBM3");
  EXPECT_GT(process_meta.at({"process_sort_index", 0})["sort_index"].get<std::int64_t>(),
            process_meta.at({"process_sort_index", 1234})["sort_index"].get<std::int64_t>());
  EXPECT_EQ(thread_meta.at({"thread_name", 0, 7})["name"], "stream 7");
  EXPECT_EQ(thread_meta.at({"thread_name", 0, 8})["name"], "stream 8");
  EXPECT_EQ(thread_meta.at({"thread_name", 1234, 1240})["name"], "loader (1240)");
  EXPECT_EQ(thread_meta.at({"thread_name", 1234, 1234})["name"], "thread 1234");
}

TEST(PerfettoJson, TwoProcessesOnOneGpuGetDistinctStreamRowsAndFlowIds) {
  Timeline tl;
  tl.base_ns = 0;
  tl.processes.push_back({.pid = 10, .name = "a"});
  tl.processes.push_back({.pid = 20, .name = "b"});
  for (std::int64_t pid : {10, 20}) {
    tl.api_calls.push_back(
        {.pid = pid, .tid = pid, .name = "cudaLaunchKernel", .start_ns = 0, .end_ns = 10, .correlation_id = 1});
    KernelEvent k;
    k.pid = pid;
    k.stream_id = 7;
    k.correlation_id = 1;
    k.start_ns = 100;
    k.end_ns = 200;
    k.name = "k";
    tl.kernels.push_back(k);
  }
  const json j = json::parse(write(tl));
  const auto kernels = events(j, "X", "kernel");
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0]["pid"], kernels[1]["pid"]);  // one GPU row group
  EXPECT_NE(kernels[0]["tid"], kernels[1]["tid"]);  // distinct stream rows
  EXPECT_EQ(kernels[0]["tid"], 1000007);            // (process index 0 + 1) * 1e6 + stream 7
  EXPECT_EQ(kernels[1]["tid"], 2000007);
  std::set<std::int64_t> ids;
  for (const json& s : events(j, "s")) ids.insert(s["id"].get<std::int64_t>());
  EXPECT_EQ(ids.size(), 2u);  // same correlation id 1 in both processes, distinct flows
  for (const json& f : events(j, "f")) EXPECT_TRUE(ids.count(f["id"].get<std::int64_t>()));
  bool named = false;
  for (const json& m : events(j, "M"))
    if (m["name"] == "thread_name" && m["args"]["name"] == "stream 7 (pid 20)") named = true;
  EXPECT_TRUE(named);
}

// A job: two ranks on two hosts, each with a compute kernel and three all-reduces.
Timeline two_ranks() {
  Timeline tl;
  tl.base_ns = 0;
  tl.processes.push_back({.pid = 10, .name = "python3", .rank = 0, .host = "node1"});
  tl.processes.push_back({.pid = 20, .name = "python3", .rank = 1, .host = "node2"});
  for (std::int64_t pid : {10, 20}) {
    const std::int64_t gpu = pid == 10 ? 0 : 1;
    KernelEvent k;
    k.pid = pid;
    k.gpu_index = gpu;
    k.stream_id = 7;
    k.start_ns = 100;
    k.end_ns = 200;
    k.name = "gemm";
    tl.kernels.push_back(k);
    for (std::int64_t i = 0; i < 3; ++i) {
      KernelEvent n = k;
      n.stream_id = 13;
      // Rank 1 starts each all-reduce 50 ns after rank 0; both end together.
      n.start_ns = 1000 * (i + 1) + (pid == 20 ? 50 : 0);
      n.end_ns = 1000 * (i + 1) + 500;
      n.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
      tl.kernels.push_back(n);
    }
  }
  std::sort(tl.kernels.begin(), tl.kernels.end(),
            [](const KernelEvent& a, const KernelEvent& b) { return a.start_ns < b.start_ns; });
  return tl;
}

std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names(const json& j) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> names;
  for (const json& m : events(j, "M"))
    if (m["name"] == "thread_name") names[{m["pid"], m["tid"]}] = m["args"]["name"];
  return names;
}

TEST(PerfettoJson, EachRankIsAProcessGroupWithItsGpuAndNcclLanes) {
  const json j = json::parse(write(two_ranks()));
  std::map<std::int64_t, std::string> groups;
  for (const json& m : events(j, "M"))
    if (m["name"] == "process_name") groups[m["pid"]] = m["args"]["name"];
  EXPECT_EQ(groups[10], "rank 0 (node1, GPU 0)");
  EXPECT_EQ(groups[20], "rank 1 (node2, GPU 1)");
  EXPECT_EQ(groups.count(0), 0u);  // no GPU group: every kernel is in its rank's
  const auto names = thread_names(j);
  for (const json& k : events(j, "X", "kernel")) {
    const std::string lane = names.at({k["pid"], k["tid"]});
    if (k["name"] == "gemm") {
      EXPECT_EQ(lane, k["pid"] == 10 ? "GPU 0 stream 7" : "GPU 1 stream 7");
    } else {
      EXPECT_EQ(lane, k["pid"] == 10 ? "GPU 0 NCCL" : "GPU 1 NCCL");
    }
    EXPECT_GE(k["tid"].get<std::int64_t>(), 4'000'000'000);  // never an OS thread's
    EXPECT_LT(k["tid"].get<std::int64_t>(), std::int64_t{1} << 32);
  }
}

TEST(PerfettoJson, FlowsJoinTheSameCollectiveAcrossRanks) {
  const json j = json::parse(write(two_ranks()));
  const auto starts = events(j, "s", "nccl");
  const auto ends = events(j, "f", "nccl");
  ASSERT_EQ(starts.size(), 3u);  // one arrow per all-reduce: rank 0 (first to start) → rank 1
  ASSERT_EQ(ends.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(starts[i]["id"], ends[i]["id"]);
    EXPECT_EQ(starts[i]["pid"], 10);
    EXPECT_EQ(ends[i]["pid"], 20);
    EXPECT_EQ(ends[i]["bp"], "e");
  }
  EXPECT_NE(starts[0]["id"], starts[1]["id"]);
  EXPECT_DOUBLE_EQ(starts[1]["ts"].get<double>(), 2.0);  // the 2nd all-reduce of rank 0 (µs)
  EXPECT_DOUBLE_EQ(ends[1]["ts"].get<double>(), 2.05);   // joins the 2nd of rank 1
}

TEST(PerfettoJson, WithoutRanksNcclKernelsGetALaneOnTheGpuRow) {
  Timeline tl = two_ranks();
  for (auto& p : tl.processes) p.rank.reset();
  const json j = json::parse(write(tl));
  const auto names = thread_names(j);
  EXPECT_EQ(names.at({0, 999'999}), "NCCL");
  EXPECT_EQ(names.at({1, 999'999}), "NCCL");
  std::size_t on_lane = 0;
  for (const json& k : events(j, "X", "kernel"))
    if (k["tid"] == 999'999) ++on_lane;
  EXPECT_EQ(on_lane, 6u);
  EXPECT_EQ(events(j, "s", "nccl").size(), 3u);  // still joined across processes
  std::map<std::int64_t, std::string> groups;
  for (const json& m : events(j, "M"))
    if (m["name"] == "process_name") groups[m["pid"]] = m["args"]["name"];
  EXPECT_EQ(groups[10], "python3 (pid 10)");
  EXPECT_EQ(groups[0], "GPU 0");
}

// --cuda-memory-usage: a counter "memory in use (device N)" on GPU N's row, in bytes.
TEST(PerfettoJson, MemoryInUseIsACounterPerGpu) {
  Timeline tl = one_process();
  tl.memory.push_back({.gpu_index = 0, .ts_ns = kBase + 2'000, .in_use_bytes = 2 << 20});
  tl.memory.push_back({.gpu_index = 1, .ts_ns = kBase + 2'500, .in_use_bytes = 8 << 20});
  tl.memory.push_back({.gpu_index = 0, .ts_ns = kBase + 3'000, .in_use_bytes = 22 << 20});
  tl.memory.push_back({.gpu_index = 0, .ts_ns = kBase + 9'000, .in_use_bytes = 0});
  const std::string text = write(tl);
  const json j = json::parse(text);
  const auto counters = events(j, "C");
  ASSERT_EQ(counters.size(), 4u) << text;
  for (const json& c : counters) {
    EXPECT_EQ(c["cat"], "gpu_memory");
    EXPECT_EQ(c["name"], "memory in use (device " + std::to_string(c["pid"].get<std::int64_t>()) + ")");
    EXPECT_EQ(c["tid"], 0);
    ASSERT_TRUE(c["args"].contains("bytes"));
  }
  EXPECT_EQ(counters[0]["pid"], 0);  // the GPU's row group, as its kernels
  EXPECT_EQ(counters[0]["args"]["bytes"].get<std::int64_t>(), 2 << 20);
  EXPECT_EQ(counters[1]["name"], "memory in use (device 1)");
  EXPECT_EQ(counters[1]["pid"], 1);
  EXPECT_EQ(counters[2]["args"]["bytes"].get<std::int64_t>(), 22 << 20);
  EXPECT_EQ(counters[3]["args"]["bytes"].get<std::int64_t>(), 0);  // back to zero: the track drops
  EXPECT_NE(text.find(R"("ts": 3.000, "args": {"bytes": 23068672})"), std::string::npos) << text;
  EXPECT_EQ(timeline_tracks(tl).end_ns, kBase + 5'000'000);  // inside the process span here
  tl.memory.push_back({.gpu_index = 0, .ts_ns = kBase + 6'000'000, .in_use_bytes = 0});
  EXPECT_EQ(timeline_tracks(tl).end_ns, kBase + 6'000'000);  // a later sample ends the trace
}

// A timeline source that also has sampled GPU metrics (as analyze::TraceTimeline).
class WithMetrics final : public test::ForwardingTimeline, public GpuMetricCounterSource {
 public:
  WithMetrics(const Timeline& tl, std::vector<GpuMetricCounterEvent> points)
      : ForwardingTimeline(tl), m_points(std::move(points)) {}
  void gpu_metric_counters(const std::function<void(const GpuMetricCounterEvent&)>& visit) override {
    for (const GpuMetricCounterEvent& e : m_points) visit(e);
  }

 private:
  std::vector<GpuMetricCounterEvent> m_points;
};

// --gpu-metrics: a counter track per metric on the GPU's row, after the timeline's events.
TEST(PerfettoJson, SampledMetricsAreCountersOnTheGpuRow) {
  Timeline tl = one_process();
  link_launches(tl);
  WithMetrics source(tl,
                     {{.gpu_index = 0, .ts_ns = kBase + 2'000, .track = "SM active % (device 0)", .value = 42.5},
                      {.gpu_index = 0, .ts_ns = kBase + 2'100, .track = "SM active % (device 0)", .value = 0},
                      {.gpu_index = 1, .ts_ns = kBase + 2'000, .track = "DRAM read GB/s (device 1)", .value = 1234.5}});
  std::ostringstream out;
  write_perfetto_json(tl, timeline_tracks(tl), source, out);
  const std::string text = out.str();
  const json j = json::parse(text);
  const auto counters = events(j, "C");
  ASSERT_EQ(counters.size(), 3u) << text;
  EXPECT_NE(text.find(R"j({"ph": "C", "cat": "gpu_metrics", "name": "SM active % (device 0)", "pid": 0, "tid": 0, )j"
                      R"j("ts": 2.000, "args": {"value": 42.5}})j"),
            std::string::npos)
      << text;
  EXPECT_EQ(counters[1]["args"]["value"], 0.0);
  EXPECT_EQ(counters[2]["name"], "DRAM read GB/s (device 1)");
  EXPECT_EQ(counters[2]["pid"], 1);
  // The same timeline from a source without metrics: the same bytes less the counters.
  std::ostringstream plain;
  TimelineVectors vectors(tl);
  write_perfetto_json(tl, timeline_tracks(tl), vectors, plain);
  EXPECT_TRUE(events(json::parse(plain.str()), "C").empty());
}

TEST(PerfettoJson, EmptyTimelineIsValidJson) {
  const json j = json::parse(write(Timeline{}));
  EXPECT_TRUE(j["traceEvents"].empty());
  EXPECT_TRUE(j["deviceProperties"].empty());
}

}  // namespace
}  // namespace gpuscope::render
