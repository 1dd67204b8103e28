// The requests track of the Perfetto export (render/timeline_layout.hpp): a source that is
// also a RequestSpanSource (core/request_spans.hpp; analyze::TraceTimeline reads the trace's
// requests table) gets a "requests" group, first in the sort order, with concurrent requests
// on separate lanes and each first token as an instant; the JSON and the .pftrace hold the
// same.
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/request_spans.hpp"
#include "pftrace_summary.hpp"
#include "render/perfetto_json.hpp"
#include "render/perfetto_proto.hpp"
#include "timeline_forwarding.hpp"

namespace gpuscope::render {
namespace {

constexpr std::int64_t kBase = 1'700'000'000'000'000'000;  // realistic CLOCK_REALTIME ns

Timeline one_kernel() { return test::one_kernel_timeline(kBase, 1234, "server", "decode_step"); }

// A timeline source that also has request spans (as analyze::TraceTimeline).
class WithRequests final : public test::ForwardingWith<RequestSpanSource, RequestSpanEvent> {
 public:
  using ForwardingWith::ForwardingWith;
  void request_spans(const std::function<void(const RequestSpanEvent&)>& visit) override { visit_all(visit); }
};

// Request 0 and 1 overlap (two lanes); request 2 starts after 0 ended (lane 1 again) and failed.
std::vector<RequestSpanEvent> three_requests() {
  return {{.request = "gpuscope-9-0",
           .start_ns = kBase + 1'000'000,
           .first_token_ns = kBase + 1'250'000,
           .end_ns = kBase + 2'000'000,
           .prompt_tokens = 16,
           .output_tokens = 8,
           .new_connection = true},
          {.request = "gpuscope-9-1",
           .start_ns = kBase + 1'200'000,
           .first_token_ns = kBase + 1'700'000,
           .end_ns = kBase + 2'500'000,
           .prompt_tokens = 16,
           .output_tokens = 8},
          {.request = "gpuscope-9-2",
           .start_ns = kBase + 2'000'000,
           .end_ns = kBase + 2'100'000,
           .prompt_tokens = 16,
           .error = "HTTP 500: mock"}};
}

TEST(RequestTrack, JsonLanesArgsAndFirstTokens) {
  const Timeline tl = one_kernel();
  WithRequests source(tl, three_requests());
  std::ostringstream out;
  write_perfetto_json(tl, timeline_tracks(tl), source, out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  std::vector<nlohmann::json> slices, instants;
  std::int64_t requests_pid = -1;
  std::string lane_names;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "requests (gpuscope bench serve)")
      requests_pid = e["pid"];
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == requests_pid)
      lane_names += e["args"]["name"].get<std::string>() + ";";
    if (e["cat"] == "request" && e["ph"] == "X") slices.push_back(e);
    if (e["cat"] == "request" && e["ph"] == "i") instants.push_back(e);
  }
  ASSERT_GT(requests_pid, 0) << out.str();
  EXPECT_EQ(lane_names, "requests, lane 1;requests, lane 2;");
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[0]["name"], "gpuscope-9-0");
  EXPECT_EQ(slices[0]["ts"].get<double>(), 1000.0);  // µs after base_ns
  EXPECT_EQ(slices[0]["dur"].get<double>(), 1000.0);
  EXPECT_EQ(slices[0]["tid"], 1);
  EXPECT_EQ(slices[1]["tid"], 2);  // overlaps request 0
  EXPECT_EQ(slices[2]["tid"], 1);  // starts when request 0 ended
  EXPECT_EQ(slices[0]["args"]["ttft_ms"], 0.25);
  EXPECT_EQ(slices[0]["args"]["output_tokens"], 8);
  EXPECT_EQ(slices[0]["args"]["new_connection"], true);
  EXPECT_EQ(slices[2]["args"]["error"], "HTTP 500: mock");
  EXPECT_FALSE(slices[2]["args"].contains("ttft_ms"));
  ASSERT_EQ(instants.size(), 2u);  // request 2 had no token
  EXPECT_EQ(instants[1]["name"], "first token");
  EXPECT_EQ(instants[1]["ts"].get<double>(), 1700.0);
  EXPECT_EQ(instants[1]["tid"], 2);
}

TEST(RequestTrack, PftraceHoldsTheSameTrack) {
  const Timeline tl = one_kernel();
  WithRequests json_source(tl, three_requests()), proto_source(tl, three_requests());
  std::ostringstream json, proto;
  write_perfetto_json(tl, timeline_tracks(tl), json_source, json);
  write_perfetto_proto(tl, timeline_tracks(tl), proto_source, proto);
  test::PftraceFacts facts;
  const test::ExportSummary s = test::expect_same_events(proto.str(), json.str(), facts);
  EXPECT_EQ(s.slices.count({"request", "gpuscope-9-1"}), 1u);
  EXPECT_EQ(s.instants.count("first token"), 2u);
  EXPECT_TRUE(s.process_names.contains("requests (gpuscope bench serve)"));
  EXPECT_TRUE(s.thread_names.contains("requests, lane 2"));
  EXPECT_EQ(facts.slice_begins, facts.slice_ends);
}

TEST(RequestTrack, NoRequestsNoTrack) {
  const Timeline tl = one_kernel();
  WithRequests source(tl, {});
  std::ostringstream out;
  write_perfetto_json(tl, timeline_tracks(tl), source, out);
  EXPECT_EQ(out.str().find("requests"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::render
