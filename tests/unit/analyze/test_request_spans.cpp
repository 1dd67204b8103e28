// analyze::TraceTimeline as a RequestSpanSource (core/request_spans.hpp): the trace's
// requests table in start order, every column carried; a trace without rows: none.
#include <vector>

#include <gtest/gtest.h>

#include "analyze/timeline/timeline.hpp"
#include "store/rows.hpp"
#include "trace_db.hpp"

namespace gpuscope::analyze {
namespace {

using test::TraceDb;
namespace rows = store::rows;

struct Seen {
  std::string request, error;
  std::int64_t start_ns, first_token_ns, end_ns, prompt_tokens, output_tokens;
  bool warmup, new_connection;
  bool operator==(const Seen&) const = default;
};

std::vector<Seen> spans(store::Database& db) {
  TraceTimeline source(db);
  std::vector<Seen> out;
  source.request_spans([&out](const RequestSpanEvent& e) {
    out.push_back({std::string(e.request), std::string(e.error), e.start_ns, e.first_token_ns.value_or(-1), e.end_ns,
                   e.prompt_tokens, e.output_tokens, e.warmup, e.new_connection});
  });
  return out;
}

TEST(RequestSpans, TheRequestsTableInStartOrder) {
  TraceDb t;
  t.add<rows::Request>({{.client_pid = 9,
                         .request = "gpuscope-9-1",
                         .request_index = 1,
                         .warmup = 0,
                         .start_ns = 3000,
                         .first_token_ns = std::nullopt,
                         .end_ns = 3100,
                         .prompt_tokens = 4,
                         .output_tokens = 0,
                         .new_connection = 0,
                         .error = "HTTP 500: x"},
                        {.client_pid = 9,
                         .request = "gpuscope-9-warmup-0",
                         .request_index = 0,
                         .warmup = 1,
                         .start_ns = 1000,
                         .first_token_ns = 1400,
                         .end_ns = 2000,
                         .prompt_tokens = 4,
                         .output_tokens = 3,
                         .new_connection = 1}});
  const std::vector<Seen> expected{{"gpuscope-9-warmup-0", "", 1000, 1400, 2000, 4, 3, true, true},
                                   {"gpuscope-9-1", "HTTP 500: x", 3000, -1, 3100, 4, 0, false, false}};
  EXPECT_EQ(spans(t.db()), expected);
}

TEST(RequestSpans, NoneInATraceWithoutRequests) {
  TraceDb t;
  EXPECT_TRUE(spans(t.db()).empty());
}

}  // namespace
}  // namespace gpuscope::analyze
