// render::timeline_overview_json: the page's compact encoding read back equals the overview
// (every column, every lane's density), names stay data, and its size per event is what
// keeps a 1M-event report within 10 MB.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "render/timeline_overview_json.hpp"

namespace gpuscope::render {
namespace {

using core::OverviewItem;
using core::OverviewItemKind;
using core::OverviewLaneKind;

core::TimelineOverview sample() {
  core::TimelineOverview o;
  o.base_ns = 1'700'000'000'000'000'000;
  o.end_ns = o.base_ns + 6'000'000'000;
  o.range_begin_ns = 0;
  o.range_end_ns = 5'000'000'000;
  o.bins = 8;
  o.total_events = 10;
  o.item_cap = 150'000;
  o.selection = "longest and spread";
  o.groups = {{false, 4242, "app (pid 4242)", "app --x"}, {true, 0, "GPU 0", "NVIDIA H100"}};
  core::OverviewLane a;
  a.group = 0;
  a.kind = OverviewLaneKind::cuda_api;
  a.label = "main (4242) \u00b7 CUDA API";
  a.pid = 4242;
  a.tid = 4242;
  a.events = 6;
  a.busy_ns = 123;
  a.density = {0, 1, 2, 255, 128, 0, 0, 7};
  core::OverviewLane g;
  g.group = 1;
  g.kind = OverviewLaneKind::gpu_stream;
  g.label = "stream 7";
  g.pid = 4242;
  g.gpu_index = 0;
  g.stream_id = 7;
  g.events = 4;
  g.busy_ns = 4'000'000'000;
  g.density = {255, 255, 255, 255, 255, 255, 255, 254};
  o.lanes = {a, g};
  o.names = {"cudaLaunchKernel", "void gemm<float, 128>(float const*, float*)", "Memcpy HtoD (Pageable -> Device)",
             "<script>alert(1)</script>\"'</svg>\x01"};
  o.launch_configs = {{{1024, 1, 1}, {256, 1, 1}}, {{1, 2, 3}, {4, 5, 6}}};
  o.items = {
      {0, OverviewItemKind::api_call, 0, 5000, 0, 1, -1, 0},
      {0, OverviewItemKind::api_call, 10'000, 4000, 0, 2, -1, 0},
      {0, OverviewItemKind::api_call, 4'999'990'000, 10'000, 3, 0, -1, 0},
      {1, OverviewItemKind::kernel, 6000, 3'000'000'000, 1, 1, 0, 0},
      {1, OverviewItemKind::kernel, 3'000'006'000, 20, 1, 2, 1, 0},
      {1, OverviewItemKind::memcpy, 3'000'007'000, 99'000, 2, 100'000'000'000, -1, 1 << 20},
  };
  return o;
}

void expect_same(const core::TimelineOverview& a, const core::TimelineOverview& b) {
  EXPECT_EQ(a.base_ns, b.base_ns);
  EXPECT_EQ(a.end_ns, b.end_ns);
  EXPECT_EQ(a.range_begin_ns, b.range_begin_ns);
  EXPECT_EQ(a.range_end_ns, b.range_end_ns);
  EXPECT_EQ(a.bins, b.bins);
  EXPECT_EQ(a.total_events, b.total_events);
  EXPECT_EQ(a.item_cap, b.item_cap);
  EXPECT_EQ(a.selection, b.selection);
  ASSERT_EQ(a.groups.size(), b.groups.size());
  for (std::size_t i = 0; i < a.groups.size(); ++i) {
    EXPECT_EQ(a.groups[i].label, b.groups[i].label);
    EXPECT_EQ(a.groups[i].detail, b.groups[i].detail);
    EXPECT_EQ(a.groups[i].is_gpu, b.groups[i].is_gpu);
    EXPECT_EQ(a.groups[i].id, b.groups[i].id);
  }
  ASSERT_EQ(a.lanes.size(), b.lanes.size());
  for (std::size_t i = 0; i < a.lanes.size(); ++i) {
    const auto& x = a.lanes[i];
    const auto& y = b.lanes[i];
    EXPECT_EQ(std::tie(x.group, x.kind, x.label, x.pid, x.tid, x.gpu_index, x.stream_id, x.events, x.busy_ns),
              std::tie(y.group, y.kind, y.label, y.pid, y.tid, y.gpu_index, y.stream_id, y.events, y.busy_ns));
    EXPECT_EQ(x.density, y.density);
  }
  EXPECT_EQ(a.names, b.names);
  EXPECT_EQ(a.launch_configs, b.launch_configs);
  EXPECT_EQ(a.items, b.items);
}

TEST(TimelineOverviewJson, RoundTrip) {
  const core::TimelineOverview o = sample();
  const nlohmann::json j = timeline_overview_json(o);
  EXPECT_EQ(j["included_events"], 6);
  EXPECT_EQ(j["span_ns"], 5'000'000'000);
  EXPECT_EQ(j["lanes"]["items"], nlohmann::json::array({3, 3}));
  EXPECT_EQ(j["lanes"]["kind"], nlohmann::json::array({"cuda_api", "gpu_stream"}));
  // Through text, as the page carries it.
  expect_same(timeline_overview_from_json(nlohmann::json::parse(j.dump())), o);
}

TEST(TimelineOverviewJson, NamesAreDataAsIs) {
  const nlohmann::json j = timeline_overview_json(sample());
  EXPECT_EQ(j["names"][3], "<script>alert(1)</script>\"'</svg>\x01") << "escaping for <script> is the page's job";
}

TEST(TimelineOverviewJson, InvalidUtf8BecomesValidText) {
  core::TimelineOverview o = sample();
  o.names[0] = std::string("bad \xff\xfe name");
  o.lanes[0].label = std::string("thread \xc3");
  const nlohmann::json j = timeline_overview_json(o);
  EXPECT_NO_THROW((void)j.dump()) << "the page's JSON dump must not throw on a trace's bytes";
  EXPECT_NE(j["names"][0].get<std::string>().find("name"), std::string::npos);
}

TEST(TimelineOverviewJson, EmptyOverview) {
  const core::TimelineOverview o;
  const nlohmann::json j = timeline_overview_json(o);
  EXPECT_EQ(j["items"]["count"], 0);
  EXPECT_TRUE(j["lanes"]["label"].empty());
  expect_same(timeline_overview_from_json(j), o);
}

TEST(TimelineOverviewJson, BadInputIsAnError) {
  nlohmann::json j = timeline_overview_json(sample());
  j["items"]["start"] = "AA==";  // one varint for six items
  EXPECT_THROW((void)timeline_overview_from_json(j), std::invalid_argument);
  EXPECT_THROW((void)timeline_overview_from_json(nlohmann::json::object()), std::invalid_argument);
}

// 150,000 kernels and launches as a synthetic trace's sample would hold them (4 streams,
// 40 names, µs-scale gaps and durations, correlation ids near each other): well under the
// 10 MB page, about 15 bytes an event.
TEST(TimelineOverviewJson, SizePerEvent) {
  core::TimelineOverview o;
  o.base_ns = 0;
  o.end_ns = 5'000'000'000;
  o.range_end_ns = 5'000'000'000;
  o.bins = 16384;
  for (int i = 0; i < 5; ++i) {
    core::OverviewLane l;
    l.group = i == 0 ? 0 : 1;
    l.kind = i == 0 ? OverviewLaneKind::cuda_api : OverviewLaneKind::gpu_stream;
    l.label = i == 0 ? "main (4242) \u00b7 CUDA API" : "stream " + std::to_string(i);
    l.density.assign(16384, static_cast<std::uint8_t>(i * 40));
    o.lanes.push_back(l);
  }
  o.groups = {{false, 4242, "app (pid 4242)", ""}, {true, 0, "GPU 0", ""}};
  for (int n = 0; n < 40; ++n) o.names.push_back("kernel_" + std::to_string(n));
  o.names.push_back("cudaLaunchKernel");
  o.launch_configs = {{{1024, 1, 1}, {256, 1, 1}}};
  std::uint64_t x = 12345;
  auto rnd = [&x](std::int64_t mod) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::int64_t>((x >> 33) % static_cast<std::uint64_t>(mod));
  };
  const std::int64_t per_lane = 30'000;
  for (std::int32_t lane = 0; lane < 5; ++lane) {
    std::int64_t t = 0;
    for (std::int64_t k = 0; k < per_lane; ++k) {
      t += 5'000 + rnd(200'000);
      const bool gpu = lane > 0;
      o.items.push_back({lane, gpu ? OverviewItemKind::kernel : OverviewItemKind::api_call, t,
                         gpu ? 2'000 + rnd(60'000) : 3'000 + rnd(5'000), gpu ? static_cast<std::int32_t>(rnd(40)) : 40,
                         k * 4 + lane, gpu ? 0 : -1, 0});
    }
  }
  o.total_events = 1'000'000;
  const std::string text = timeline_overview_json(o).dump();
  const double per_item = static_cast<double>(text.size() - 5 * 16384 * 4 / 3) / static_cast<double>(o.items.size());
  EXPECT_LT(per_item, 20.0) << text.size() << " bytes for " << o.items.size() << " items";
  EXPECT_LT(text.size(), 4'000'000U);
}

}  // namespace
}  // namespace gpuscope::render
