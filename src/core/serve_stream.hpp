// serve_stream: what `gpuscope bench serve` makes of one streamed response from an
// OpenAI-compatible server (/v1/completions, /v1/chat/completions with "stream": true) —
// the server-sent-event framing, the meaning of each event, and the request's record
// (when each token arrived, how many tokens, or why the request failed). Pure: the caller
// passes the bytes as they arrive and the steady-clock time of their arrival (seconds
// since any fixed origin); nothing here reads a clock or a socket.
//
// Server-sent events (WHATWG HTML, "Server-sent events", §9.2.6 interpreting an event
// stream): lines end in "\n", "\r\n" or "\r"; a line "data: X" (one optional space after
// the colon) appends X to the event's data; a line starting with ":" is a comment; other
// fields (event:, id:, retry:) are ignored; an empty line dispatches the event. A stream
// that ends with data pending dispatches it too (lenient: some servers omit the last
// blank line).
//
// Events (the OpenAI streaming format, as vLLM, SGLang, TGI and TensorRT-LLM serve it):
//   data: [DONE]                 the end of the stream;
//   data: {"choices":[{"text":"..."}], ...}            /v1/completions chunk;
//   data: {"choices":[{"delta":{"content":"..."}}]}    /v1/chat/completions chunk;
//   data: {..., "usage": {"completion_tokens": N}}    usage (the last chunk, with
//                                                      stream_options.include_usage);
//   data: {"error": {...}} or {"error": "..."}         the server gave up mid-stream.
// Anything else that is not a JSON object is a malformed event.
//
// Token counting rule: each event whose text (text, delta.content or
// delta.reasoning_content) is non-empty counts as one token and its arrival time is a
// token time; when the stream carries usage.completion_tokens, that number replaces the
// count (a server that sends several tokens per chunk is then counted right, while the
// inter-token latencies stay per chunk).
//
// Errors of a request (RequestRecord::error, "" when it succeeded), in the order checked:
//   "HTTP 500: <body excerpt>"   a status other than 200;
//   "connection: ..."            the transfer failed (refused, reset, timed out, closed
//                                mid-chunk); the text comes from the HTTP library;
//   "malformed event N: ..."     an event's data is neither [DONE] nor a JSON object;
//   "server error in event N: ..."  an event carried an "error" object;
//   "stream ended before data: [DONE] after K tokens"  the server closed early;
//   "no tokens in the stream"    [DONE] came with no text at all.
// A failed request keeps the times it saw but its metrics are not used.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::core::serve {

/// Splits a byte stream into server-sent events; returns each event's data.
class SseParser {
 public:
  /// Consumes `bytes`; returns the data of the events they complete, in order.
  [[nodiscard]] std::vector<std::string> feed(std::string_view bytes);
  /// The end of the stream: the pending event (data seen, no blank line yet), if any.
  [[nodiscard]] std::vector<std::string> finish();

 private:
  void line(std::string_view text, std::vector<std::string>& out);
  std::string m_line;  // the current, unfinished line
  std::string m_data;  // the current event's data
  bool m_has_data = false;
  bool m_after_cr = false;  // the last byte was "\r": a "\n" next is part of the same break
};

enum class ChunkKind { kText, kDone, kError, kMalformed };

/// The meaning of one event's data.
struct Chunk {
  ChunkKind kind = ChunkKind::kText;
  std::string text;                               // kText: the generated text ("" for a role/usage chunk)
  std::optional<std::int64_t> completion_tokens;  // kText: usage.completion_tokens when present
  std::string message;                            // kError / kMalformed: what was wrong
};

/// Interprets one event's data (see the file comment).
[[nodiscard]] Chunk parse_chunk(std::string_view data);

/// One request, as `bench serve` measured it. Times: seconds, same origin as start_s.
struct RequestRecord {
  int index = 0;  // position in the run (warm-up requests have their own numbering)
  bool warmup = false;
  std::string id;                     // the X-Request-Id header it was sent with ("" if none)
  bool new_connection = false;        // it opened a TCP connection (else it reused a kept-alive one)
  double start_s = 0;                 // just before the request was sent
  double end_s = 0;                   // when the transfer ended
  std::vector<double> token_times_s;  // arrival of each event with text
  std::optional<std::int64_t> usage_completion_tokens;
  std::int64_t prompt_tokens = 0;  // as sent (synthetic: words; JSONL: the file's count, else 0)
  std::string error;               // "" = succeeded (the list in the file comment)
  [[nodiscard]] bool ok() const { return error.empty(); }
  /// usage_completion_tokens if the server sent it, else token_times_s.size().
  [[nodiscard]] std::int64_t output_tokens() const;
};

/// Builds a RequestRecord from the bytes of one response as they arrive.
class RequestTracker {
 public:
  RequestTracker(int index, bool warmup, double start_s, std::int64_t prompt_tokens);
  /// Bytes of the response body arrived at `now_s`.
  void on_bytes(double now_s, std::string_view bytes);
  /// The transfer ended at `now_s` with this HTTP status (0 if none) and transport error
  /// ("" if the transfer completed). Returns the finished record.
  [[nodiscard]] RequestRecord finish(double now_s, long http_status, const std::string& transport_error);

 private:
  void on_event(double now_s, const std::string& data);
  RequestRecord m_record;
  SseParser m_parser;
  std::string m_body_head;  // the first bytes of the body, for an HTTP error's message
  int m_events = 0;
  bool m_done = false;
  std::string m_stream_error;  // the first malformed or error event
};

}  // namespace gpuscope::core::serve
