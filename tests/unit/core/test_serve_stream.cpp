// core/serve_stream: server-sent-event framing, the meaning of each OpenAI streaming
// chunk, and a request's record (token times, count, errors) built from bytes at known
// times — what `gpuscope bench serve` measures, without a network.
#include "core/serve_stream.hpp"

#include <gtest/gtest.h>

namespace gpuscope::core::serve {
namespace {

std::string completion(const std::string& text) {
  return R"(data: {"id":"c","object":"text_completion","choices":[{"index":0,"text":")" + text +
         R"(","finish_reason":null}]})"
         "\n\n";
}

TEST(SseParser, SplitsEventsAcrossAnyChunking) {
  const std::string stream = "data: {\"a\":1}\n\n: a comment\n\ndata: [DONE]\n\n";
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    SseParser p;
    std::vector<std::string> got = p.feed(stream.substr(0, cut));
    for (std::string& e : p.feed(stream.substr(cut))) got.push_back(e);
    for (std::string& e : p.finish()) got.push_back(e);
    ASSERT_EQ(got, (std::vector<std::string>{"{\"a\":1}", "[DONE]"})) << "cut at " << cut;
  }
}

TEST(SseParser, CrLfAndCrLineEndsMultiLineDataAndOtherFields) {
  SseParser p;
  const auto got = p.feed("event: x\r\nid: 7\r\ndata: one\r\ndata:two\r\n\r\ndata: three\r\rretry: 5\n\n");
  EXPECT_EQ(got, (std::vector<std::string>{"one\ntwo", "three"}));
}

TEST(SseParser, PendingEventIsDispatchedAtTheEnd) {
  SseParser p;
  EXPECT_TRUE(p.feed("data: [DONE]").empty());
  EXPECT_EQ(p.finish(), (std::vector<std::string>{"[DONE]"}));
  EXPECT_TRUE(p.finish().empty());
}

TEST(ParseChunk, CompletionChatUsageDoneErrorAndMalformed) {
  Chunk c = parse_chunk(R"({"choices":[{"index":0,"text":" hello"}]})");
  EXPECT_EQ(c.kind, ChunkKind::kText);
  EXPECT_EQ(c.text, " hello");
  EXPECT_FALSE(c.completion_tokens);

  c = parse_chunk(R"({"choices":[{"index":0,"delta":{"content":"hi"}}]})");
  EXPECT_EQ(c.text, "hi");
  c = parse_chunk(R"({"choices":[{"index":0,"delta":{"role":"assistant"}}]})");
  EXPECT_EQ(c.kind, ChunkKind::kText);
  EXPECT_EQ(c.text, "");

  c = parse_chunk(R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":12,"total_tokens":17}})");
  EXPECT_EQ(c.text, "");
  ASSERT_TRUE(c.completion_tokens);
  EXPECT_EQ(*c.completion_tokens, 12);

  EXPECT_EQ(parse_chunk("[DONE]").kind, ChunkKind::kDone);

  c = parse_chunk(R"({"error":{"message":"out of memory","code":500}})");
  EXPECT_EQ(c.kind, ChunkKind::kError);
  EXPECT_EQ(c.message, "out of memory");

  c = parse_chunk("{not json");
  EXPECT_EQ(c.kind, ChunkKind::kMalformed);
  EXPECT_NE(c.message.find("not JSON ('{not json')"), std::string::npos) << c.message;
  EXPECT_EQ(parse_chunk("[1,2]").kind, ChunkKind::kMalformed);
}

TEST(RequestTracker, TokenTimesAreTheArrivalTimesOfEventsWithText) {
  RequestTracker t(3, false, 10.0, 128);
  t.on_bytes(10.050, completion("a"));
  t.on_bytes(10.060, completion("b") + completion(""));  // an empty chunk is no token
  t.on_bytes(10.070, completion("c").substr(0, 20));     // half an event: not yet
  t.on_bytes(10.075, completion("c").substr(20));
  t.on_bytes(10.080, "data: [DONE]\n\n");
  const RequestRecord r = t.finish(10.081, 200, "");
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.index, 3);
  EXPECT_DOUBLE_EQ(r.start_s, 10.0);
  EXPECT_DOUBLE_EQ(r.end_s, 10.081);
  EXPECT_EQ(r.token_times_s, (std::vector<double>{10.050, 10.060, 10.075}));
  EXPECT_EQ(r.output_tokens(), 3);
  EXPECT_EQ(r.prompt_tokens, 128);
}

TEST(RequestTracker, UsageCompletionTokensOverridesTheChunkCount) {
  RequestTracker t(0, false, 0.0, 0);
  t.on_bytes(0.1, completion("two tokens"));
  t.on_bytes(0.2, R"(data: {"choices":[],"usage":{"completion_tokens":5}})"
                  "\n\ndata: [DONE]\n\n");
  const RequestRecord r = t.finish(0.2, 200, "");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.token_times_s.size(), 1u);
  EXPECT_EQ(r.output_tokens(), 5);
}

TEST(RequestTracker, EachFailureGivesItsOwnError) {
  {  // HTTP 500 with a JSON body: the status and the body
    RequestTracker t(1, false, 0, 0);
    t.on_bytes(0.01, R"({"error":"model not loaded"})");
    EXPECT_EQ(t.finish(0.01, 500, "").error, R"(HTTP 500: {"error":"model not loaded"})");
  }
  {  // closed mid-stream, cleanly (no [DONE])
    RequestTracker t(2, false, 0, 0);
    t.on_bytes(0.01, completion("a") + completion("b"));
    EXPECT_EQ(t.finish(0.02, 200, "").error, "stream ended before data: [DONE] after 2 tokens");
  }
  {  // closed mid-chunk: the transfer error of the HTTP library
    RequestTracker t(3, false, 0, 0);
    t.on_bytes(0.01, completion("a"));
    EXPECT_EQ(t.finish(0.02, 200, "Transferred a partial file").error,
              "connection: Transferred a partial file (after 1 tokens)");
  }
  {  // a malformed event, numbered
    RequestTracker t(4, false, 0, 0);
    t.on_bytes(0.01, completion("a") + "data: {oops\n\n" + completion("b") + "data: [DONE]\n\n");
    const RequestRecord r = t.finish(0.02, 200, "");
    EXPECT_EQ(r.error.rfind("malformed event 2: not JSON ('{oops')", 0), 0u) << r.error;
  }
  {  // an error event
    RequestTracker t(5, false, 0, 0);
    t.on_bytes(0.01, R"(data: {"error":{"message":"preempted"}})"
                     "\n\n");
    EXPECT_EQ(t.finish(0.02, 200, "").error, "server error in event 1: preempted");
  }
  {  // [DONE] and nothing else
    RequestTracker t(6, false, 0, 0);
    t.on_bytes(0.01, "data: [DONE]\n\n");
    EXPECT_EQ(t.finish(0.02, 200, "").error, "no tokens in the stream");
  }
  {  // refused: no status at all
    RequestTracker t(7, false, 0, 0);
    EXPECT_EQ(t.finish(0.0, 0, "Couldn't connect to server").error,
              "connection: Couldn't connect to server (after 0 tokens)");
  }
}

}  // namespace
}  // namespace gpuscope::core::serve
