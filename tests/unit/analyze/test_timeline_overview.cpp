// analyze::timeline_overview: lanes and their labels, density equal to the hand-computed
// busy fraction, the item cap (and the counts that say what was left out), sorted items,
// deduplicated names; on hand-built timelines and on the committed GPU recordings.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "../committed_traces.hpp"
#include "analyze/timeline/timeline.hpp"
#include "analyze/timeline/timeline_overview.hpp"
#include "store/database.hpp"

namespace gpuscope::analyze {
namespace {

constexpr std::int64_t kBase = 1'000'000;

KernelEvent kernel(std::int64_t stream, std::int64_t start, std::int64_t end, std::int64_t corr,
                   const std::string& name = "k") {
  KernelEvent k;
  k.pid = 100;
  k.gpu_index = 0;
  k.stream_id = stream;
  k.start_ns = kBase + start;
  k.end_ns = kBase + end;
  k.correlation_id = corr;
  k.name = name;
  k.grid = {4, 2, 1};
  k.block = {128, 1, 1};
  return k;
}

ApiCallEvent api(std::int64_t tid, std::int64_t start, std::int64_t end, std::int64_t corr,
                 const std::string& name = "cudaLaunchKernel") {
  ApiCallEvent a;
  a.pid = 100;
  a.tid = tid;
  a.name = name;
  a.start_ns = kBase + start;
  a.end_ns = kBase + end;
  a.correlation_id = corr;
  return a;
}

NvtxEvent range(std::int64_t start, std::optional<std::int64_t> end, const std::string& text) {
  NvtxEvent n;
  n.pid = 100;
  n.tid = 100;
  n.style = "PushPop";
  n.text = text;
  n.start_ns = kBase + start;
  if (end) n.end_ns = kBase + *end;
  return n;
}

TimelineProcess process(const std::string& name, const std::string& cmdline) {
  TimelineProcess p;
  p.pid = 100;
  p.name = name;
  p.cmdline = cmdline;
  return p;
}

// One process (pid 100, "app", threads 100 "main" and 101) on GPU 0 (streams 7 and 13),
// spanning [kBase, kBase + 4000].
Timeline small_trace() {
  Timeline tl;
  tl.base_ns = kBase;
  tl.processes.push_back(process("app", "app --train"));
  tl.threads.push_back({.pid = 100, .tid = 100, .name = "main"});
  tl.threads.push_back({.pid = 100, .tid = 101, .name = ""});
  TimelineDevice d;
  d.pid = 100;
  d.name = "NVIDIA H100 80GB HBM3";
  tl.devices.push_back(d);
  tl.api_calls = {api(100, 0, 400, 1), api(101, 1000, 1200, 2), api(100, 3900, 4000, 0, "cudaDeviceSynchronize")};
  tl.nvtx = {range(0, 3000, "step 1"), range(500, 1000, "forward")};
  tl.kernels = {kernel(7, 0, 500, 1, "gemm"), kernel(7, 1500, 2500, 2, "relu"), kernel(13, 100, 200, 0, "gemm")};
  MemcpyEvent m;
  m.pid = 100;
  m.stream_id = 7;
  m.start_ns = kBase + 2600;
  m.end_ns = kBase + 2700;
  m.bytes = 1 << 20;
  m.copy_kind = "HtoD";
  m.src_kind = "pageable";
  m.dst_kind = "device";
  tl.memcpys.push_back(m);
  link_launches(tl);
  return tl;
}

core::TimelineOverview overview_of(const Timeline& tl, const TimelineOverviewOptions& options = {}) {
  TimelineVectors events(tl);
  return timeline_overview(tl, timeline_tracks(tl), events, options);
}

std::vector<std::string> labels(const core::TimelineOverview& o) {
  std::vector<std::string> out;
  for (const auto& l : o.lanes) out.push_back(o.groups.at(static_cast<std::size_t>(l.group)).label + " / " + l.label);
  return out;
}

void expect_sorted_and_named(const core::TimelineOverview& o) {
  for (std::size_t i = 1; i < o.items.size(); ++i) {
    const auto& a = o.items[i - 1];
    const auto& b = o.items[i];
    EXPECT_LE(std::tie(a.lane, a.start_ns), std::tie(b.lane, b.start_ns)) << "item " << i;
  }
  std::set<std::string> distinct(o.names.begin(), o.names.end());
  EXPECT_EQ(distinct.size(), o.names.size()) << "names are listed once";
  std::vector<bool> used(o.names.size(), false);
  for (const auto& it : o.items) {
    ASSERT_GE(it.name, 0);
    ASSERT_LT(static_cast<std::size_t>(it.name), o.names.size());
    used[static_cast<std::size_t>(it.name)] = true;
    ASSERT_LT(static_cast<std::size_t>(it.lane), o.lanes.size());
    EXPECT_GE(it.duration_ns, 0);
    EXPECT_EQ(it.launch_config >= 0, it.kind == OverviewItemKind::kernel);
  }
  EXPECT_TRUE(std::all_of(used.begin(), used.end(), [](bool u) { return u; })) << "every name is used";
  for (const auto& l : o.lanes) EXPECT_EQ(l.density.size(), static_cast<std::size_t>(o.bins));
}

TEST(TimelineOverview, LanesGroupedByProcessAndGpuWithExportsLabels) {
  const core::TimelineOverview o = overview_of(small_trace());
  EXPECT_EQ(o.base_ns, kBase);
  EXPECT_EQ(o.end_ns, kBase + 4000);
  EXPECT_EQ(o.range_begin_ns, 0);
  EXPECT_EQ(o.range_end_ns, 4000);
  EXPECT_EQ(labels(o), (std::vector<std::string>{
                           "app (pid 100) / main (100) \u00b7 CUDA API",
                           "app (pid 100) / main (100) \u00b7 NVTX",
                           "app (pid 100) / thread 101 \u00b7 CUDA API",
                           "GPU 0 / stream 7",
                           "GPU 0 / stream 13",
                       }));
  ASSERT_EQ(o.groups.size(), 2U);
  EXPECT_EQ(o.groups[0].detail, "app --train");
  EXPECT_FALSE(o.groups[0].is_gpu);
  EXPECT_TRUE(o.groups[1].is_gpu);
  EXPECT_EQ(o.groups[1].detail, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(o.lanes[3].kind, OverviewLaneKind::gpu_stream);
  EXPECT_EQ(o.lanes[3].stream_id, 7);
  EXPECT_EQ(o.lanes[3].events, 3);  // two kernels and the memcpy
  EXPECT_EQ(o.total_events, 9);
  EXPECT_EQ(o.items.size(), 9U);
  EXPECT_EQ(o.selection, "all");
  expect_sorted_and_named(o);
}

TEST(TimelineOverview, DensityIsTheHandComputedBusyFraction) {
  TimelineOverviewOptions options;
  options.max_bins = 4;  // bins of 1000 ns over the 4000 ns trace
  const core::TimelineOverview o = overview_of(small_trace(), options);
  ASSERT_EQ(o.bins, 4);
  // main · NVTX: "step 1" [0, 3000) with "forward" nested inside: the union, counted once.
  EXPECT_EQ(o.lanes[1].density, (std::vector<std::uint8_t>{255, 255, 255, 0}));
  EXPECT_EQ(o.lanes[1].busy_ns, 3000);
  // stream 7: gemm [0, 500), relu [1500, 2500), memcpy [2600, 2700).
  EXPECT_EQ(o.lanes[3].density, (std::vector<std::uint8_t>{128, 128, 153, 0}));
  EXPECT_EQ(o.lanes[3].busy_ns, 1600);
  // main · CUDA API: [0, 400) and [3900, 4000).
  EXPECT_EQ(o.lanes[0].density, (std::vector<std::uint8_t>{102, 0, 0, 26}));
}

TEST(TimelineOverview, ItemsCarryKernelAndCopyDetails) {
  const core::TimelineOverview o = overview_of(small_trace());
  const auto relu = std::find_if(o.items.begin(), o.items.end(), [&](const core::OverviewItem& i) {
    return o.names[static_cast<std::size_t>(i.name)] == "relu";
  });
  ASSERT_NE(relu, o.items.end());
  EXPECT_EQ(relu->kind, OverviewItemKind::kernel);
  EXPECT_EQ(relu->start_ns, 1500);
  EXPECT_EQ(relu->duration_ns, 1000);
  EXPECT_EQ(relu->correlation_id, 2);
  ASSERT_GE(relu->launch_config, 0);
  EXPECT_EQ(o.launch_configs[static_cast<std::size_t>(relu->launch_config)],
            (core::OverviewLaunchConfig{{4, 2, 1}, {128, 1, 1}}));
  EXPECT_EQ(o.launch_configs.size(), 1U) << "one configuration, listed once";
  const auto copy = std::find_if(o.items.begin(), o.items.end(),
                                 [](const core::OverviewItem& i) { return i.kind == OverviewItemKind::memcpy; });
  ASSERT_NE(copy, o.items.end());
  EXPECT_EQ(o.names[static_cast<std::size_t>(copy->name)], "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(copy->bytes, 1 << 20);
}

TEST(TimelineOverview, UnclosedRangeEndsAtTheTraceEnd) {
  Timeline tl = small_trace();
  tl.nvtx.push_back(range(3500, std::nullopt, "never closed"));
  const core::TimelineOverview o = overview_of(tl);
  const auto it = std::find_if(o.items.begin(), o.items.end(), [&](const core::OverviewItem& i) {
    return o.names[static_cast<std::size_t>(i.name)] == "never closed";
  });
  ASSERT_NE(it, o.items.end());
  EXPECT_EQ(it->start_ns + it->duration_ns, 4000);
}

// 2,000 launches on one stream, each kernel 1-50 µs: the cap keeps the longest, a spread and
// the launches of the kernels kept, and says how many events there were.
TEST(TimelineOverview, CapRespectedWithLongestSpreadAndLaunches) {
  Timeline tl;
  tl.base_ns = kBase;
  tl.processes.push_back(process("app", ""));
  std::int64_t t = 0;
  for (std::int64_t i = 1; i <= 2000; ++i) {
    const std::int64_t dur = 1000 + (i * 7919) % 49'000;
    tl.api_calls.push_back(api(100, t, t + 500, i));
    tl.kernels.push_back(kernel(7, t + 600, t + 600 + dur, i, "kernel " + std::to_string(i % 40)));
    t += 600 + dur;
  }
  tl.nvtx = {range(0, t, "all")};
  link_launches(tl);
  TimelineOverviewOptions options;
  options.item_cap = 200;
  const core::TimelineOverview o = overview_of(tl, options);
  EXPECT_EQ(o.total_events, 4001);
  EXPECT_LE(o.items.size(), 200U);
  EXPECT_GE(o.items.size(), 150U) << "the cap is used, not wasted";
  EXPECT_EQ(o.item_cap, 200);
  EXPECT_EQ(o.selection, "longest and spread");
  expect_sorted_and_named(o);
  // The longest kernel is there; so is the NVTX range.
  const auto longest = std::max_element(
      tl.kernels.begin(), tl.kernels.end(),
      [](const KernelEvent& a, const KernelEvent& b) { return a.end_ns - a.start_ns < b.end_ns - b.start_ns; });
  std::set<std::int64_t> kernel_corr;
  std::set<std::int64_t> api_corr;
  bool has_range = false;
  std::int64_t first_kernel = t;
  std::int64_t last_kernel = 0;
  for (const auto& it : o.items) {
    if (it.kind == OverviewItemKind::kernel) {
      kernel_corr.insert(it.correlation_id);
      first_kernel = std::min(first_kernel, it.start_ns);
      last_kernel = std::max(last_kernel, it.start_ns);
    }
    if (it.kind == OverviewItemKind::api_call) api_corr.insert(it.correlation_id);
    if (it.kind == OverviewItemKind::nvtx_range) has_range = true;
  }
  EXPECT_TRUE(kernel_corr.contains(longest->correlation_id));
  EXPECT_TRUE(has_range);
  // Every kernel kept has its launch kept.
  for (std::int64_t c : kernel_corr) EXPECT_TRUE(api_corr.contains(c)) << "launch of correlation " << c;
  // Spread across time: kernels from the first and the last tenth of the trace.
  EXPECT_LT(first_kernel, t / 10);
  EXPECT_GT(last_kernel, t - t / 10);
  // The density still counts every kernel: busy time equals the sum of durations.
  std::int64_t busy = 0;
  for (const auto& k : tl.kernels) busy += k.end_ns - k.start_ns;
  const auto stream = std::find_if(o.lanes.begin(), o.lanes.end(),
                                   [](const core::OverviewLane& l) { return l.kind == OverviewLaneKind::gpu_stream; });
  ASSERT_NE(stream, o.lanes.end());
  EXPECT_EQ(stream->busy_ns, busy);
  EXPECT_EQ(stream->events, 2000);
}

TEST(TimelineOverview, EmptyTraceHasNoLanes) {
  Timeline tl;
  const core::TimelineOverview o = overview_of(tl);
  EXPECT_TRUE(o.lanes.empty());
  EXPECT_TRUE(o.items.empty());
  EXPECT_EQ(o.bins, 0);
  EXPECT_EQ(o.total_events, 0);
}

TEST(TimelineOverview, DensityBudgetLowersTheBins) {
  TimelineOverviewOptions options;
  options.max_bins = 16384;
  options.density_budget = 5 * 1024;  // 5 lanes at most (with NVTX: 2 per thread + 2 streams = 6)
  const core::TimelineOverview o = overview_of(small_trace(), options);
  EXPECT_EQ(o.bins, 512);
}

// The committed recordings: one lane per stream with kernels, every kernel included, each
// with its launch configuration and its launching call.
class CommittedOverview : public ::testing::TestWithParam<std::string> {};

TEST_P(CommittedOverview, EveryKernelDrawnOnItsStream) {
  store::Database db(test::committed_trace(GetParam()), store::Database::Mode::kReadOnly);
  const core::TimelineOverview o = timeline_overview(db);
  TraceTimeline timeline(db);
  const TimelineHeader header = timeline.header();
  const TimelineTracks tracks = timeline.tracks(header);
  EXPECT_EQ(o.base_ns, header.base_ns);
  EXPECT_EQ(o.end_ns, tracks.end_ns);
  // The drawn range is the events' (the fixtures' process starts seconds before its first call).
  EXPECT_GT(o.range_begin_ns, 0);
  EXPECT_LE(o.range_end_ns, tracks.end_ns - header.base_ns);
  EXPECT_GT(o.range_end_ns, o.range_begin_ns);
  for (const auto& it : o.items) {
    EXPECT_GE(it.start_ns, o.range_begin_ns);
    EXPECT_LE(it.start_ns + it.duration_ns, o.range_end_ns);
  }
  const auto gpu_lanes = std::count_if(o.lanes.begin(), o.lanes.end(), [](const core::OverviewLane& l) {
    return l.kind == OverviewLaneKind::gpu_stream;
  });
  EXPECT_EQ(static_cast<std::size_t>(gpu_lanes), tracks.gpu_streams.size());
  const std::int64_t kernels = db.query_int("SELECT COUNT(*) FROM kernels").value_or(-1);
  const std::int64_t apis = db.query_int("SELECT COUNT(*) FROM api_calls").value_or(-1);
  ASSERT_GT(kernels, 0);
  ASSERT_LE(o.total_events, 150'000) << "the fixtures are small: every event included";
  EXPECT_EQ(static_cast<std::int64_t>(o.items.size()), o.total_events);
  const auto kernel_items = std::count_if(
      o.items.begin(), o.items.end(), [](const core::OverviewItem& i) { return i.kind == OverviewItemKind::kernel; });
  EXPECT_EQ(kernel_items, kernels);
  const auto api_items = std::count_if(
      o.items.begin(), o.items.end(), [](const core::OverviewItem& i) { return i.kind == OverviewItemKind::api_call; });
  EXPECT_EQ(api_items, apis);
  for (const auto& g : o.groups)
    if (g.is_gpu) {
      EXPECT_EQ(g.label.rfind("GPU ", 0), 0U) << g.label;
    }
  expect_sorted_and_named(o);
  // Some lane is busy somewhere.
  EXPECT_TRUE(std::any_of(o.lanes.begin(), o.lanes.end(), [](const core::OverviewLane& l) {
    return std::any_of(l.density.begin(), l.density.end(), [](std::uint8_t v) { return v > 0; });
  }));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CommittedOverview, ::testing::Values("cnn", "cnn-pytorch"));

// gpuscope kernels' recording has kernel profiles but no timeline events: no lanes, no error.
TEST(TimelineOverview, TraceWithoutTimelineEvents) {
  store::Database db(test::committed_trace("kernels-h100"), store::Database::Mode::kReadOnly);
  const core::TimelineOverview o = timeline_overview(db);
  EXPECT_TRUE(o.lanes.empty());
  EXPECT_TRUE(o.items.empty());
  EXPECT_EQ(o.total_events, 0);
}

}  // namespace
}  // namespace gpuscope::analyze
