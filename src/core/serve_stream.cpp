#include "core/serve_stream.hpp"

#include <nlohmann/json.hpp>

namespace gpuscope::core::serve {
namespace {

constexpr std::size_t kBodyHead = 300;  // bytes of an error body kept for the message
constexpr std::size_t kExcerpt = 80;    // bytes of a malformed event quoted

std::string excerpt(std::string_view s, std::size_t n = kExcerpt) {
  std::string out(s.substr(0, n));
  for (char& c : out)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (s.size() > n) out += "...";
  return out;
}

// A string member, or "" when it is missing or not a string.
std::string text_of(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::vector<std::string> SseParser::feed(std::string_view bytes) {
  std::vector<std::string> out;
  for (char c : bytes) {
    if (c == '\n' && m_after_cr) {  // the "\n" of a "\r\n" break
      m_after_cr = false;
      continue;
    }
    m_after_cr = c == '\r';
    if (c == '\n' || c == '\r') {
      line(m_line, out);
      m_line.clear();
    } else {
      m_line += c;
    }
  }
  return out;
}

std::vector<std::string> SseParser::finish() {
  std::vector<std::string> out;
  if (!m_line.empty()) line(m_line, out);
  m_line.clear();
  if (m_has_data) out.push_back(std::move(m_data));
  m_data.clear();
  m_has_data = false;
  return out;
}

void SseParser::line(std::string_view text, std::vector<std::string>& out) {
  if (text.empty()) {  // dispatch
    if (m_has_data) out.push_back(std::move(m_data));
    m_data.clear();
    m_has_data = false;
    return;
  }
  if (text.front() == ':') return;  // comment
  const std::size_t colon = text.find(':');
  const std::string_view field = text.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field != "data") return;  // event:, id:, retry: mean nothing here
  if (m_has_data) m_data += '\n';
  m_data += value;
  m_has_data = true;
}

Chunk parse_chunk(std::string_view data) {
  Chunk c;
  if (data == "[DONE]") {
    c.kind = ChunkKind::kDone;
    return c;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(data);
  } catch (const nlohmann::json::parse_error& e) {
    c.kind = ChunkKind::kMalformed;
    c.message = "not JSON ('" + excerpt(data) + "'): " + e.what();
    return c;
  }
  if (!j.is_object()) {
    c.kind = ChunkKind::kMalformed;
    c.message = "not a JSON object ('" + excerpt(data) + "')";
    return c;
  }
  if (const auto err = j.find("error"); err != j.end() && !err->is_null()) {
    c.kind = ChunkKind::kError;
    const std::string message = err->is_string() ? err->get<std::string>() : text_of(*err, "message");
    c.message = message.empty() ? excerpt(err->dump()) : excerpt(message, 200);
    return c;
  }
  if (const auto choices = j.find("choices"); choices != j.end() && choices->is_array() && !choices->empty()) {
    const nlohmann::json& first = choices->front();
    c.text = text_of(first, "text");
    if (c.text.empty() && first.is_object() && first.contains("delta")) {
      const nlohmann::json& delta = first["delta"];
      c.text = text_of(delta, "content");
      if (c.text.empty()) c.text = text_of(delta, "reasoning_content");
    }
  }
  if (const auto usage = j.find("usage"); usage != j.end() && usage->is_object()) {
    const auto tokens = usage->find("completion_tokens");
    if (tokens != usage->end() && tokens->is_number_integer()) c.completion_tokens = tokens->get<std::int64_t>();
  }
  return c;
}

std::int64_t RequestRecord::output_tokens() const {
  return usage_completion_tokens ? *usage_completion_tokens : static_cast<std::int64_t>(token_times_s.size());
}

RequestTracker::RequestTracker(int index, bool warmup, double start_s, std::int64_t prompt_tokens) {
  m_record.index = index;
  m_record.warmup = warmup;
  m_record.start_s = start_s;
  m_record.prompt_tokens = prompt_tokens;
}

void RequestTracker::on_bytes(double now_s, std::string_view bytes) {
  if (m_body_head.size() < kBodyHead) m_body_head.append(bytes.substr(0, kBodyHead - m_body_head.size()));
  for (const std::string& data : m_parser.feed(bytes)) on_event(now_s, data);
}

void RequestTracker::on_event(double now_s, const std::string& data) {
  ++m_events;
  if (m_done || !m_stream_error.empty()) return;  // after [DONE] or a bad event: ignored
  const Chunk c = parse_chunk(data);
  switch (c.kind) {
    case ChunkKind::kDone:
      m_done = true;
      break;
    case ChunkKind::kMalformed:
      m_stream_error = "malformed event " + std::to_string(m_events) + ": " + c.message;
      break;
    case ChunkKind::kError:
      m_stream_error = "server error in event " + std::to_string(m_events) + ": " + c.message;
      break;
    case ChunkKind::kText:
      if (!c.text.empty()) m_record.token_times_s.push_back(now_s);
      if (c.completion_tokens) m_record.usage_completion_tokens = c.completion_tokens;
      break;
  }
}

RequestRecord RequestTracker::finish(double now_s, long http_status, const std::string& transport_error) {
  for (const std::string& data : m_parser.finish()) on_event(now_s, data);
  m_record.end_s = now_s;
  std::string& error = m_record.error;
  if (http_status != 0 && http_status != 200) {
    error = "HTTP " + std::to_string(http_status) + ": " + excerpt(m_body_head, 200);
  } else if (!transport_error.empty()) {
    error = "connection: " + transport_error + " (after " + std::to_string(m_record.token_times_s.size()) + " tokens)";
  } else if (!m_stream_error.empty()) {
    error = m_stream_error;
  } else if (!m_done) {
    error = "stream ended before data: [DONE] after " + std::to_string(m_record.token_times_s.size()) + " tokens";
  } else if (m_record.token_times_s.empty()) {
    error = "no tokens in the stream";
  }
  return std::move(m_record);
}

}  // namespace gpuscope::core::serve
