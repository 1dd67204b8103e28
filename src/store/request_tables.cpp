#include "store/request_tables.hpp"

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/data_loss_kinds.hpp"
#include "store/import_state.hpp"
#include "store/input_file.hpp"
#include "store/rows.hpp"

namespace gpuscope::store::detail {
namespace {

using Json = nlohmann::json;
constexpr std::string_view kPrefix = "requests-", kSuffix = ".jsonl";

struct BadLine : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::int64_t integer(const Json& obj, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_integer()) throw BadLine(std::string("field '") + key + "' is not an integer");
  return it->get<std::int64_t>();
}

bool boolean(const Json& obj, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_boolean()) throw BadLine(std::string("field '") + key + "' is not true or false");
  return it->get<bool>();
}

const std::string& text(const Json& obj, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) throw BadLine(std::string("field '") + key + "' is not a string");
  return it->get_ref<const std::string&>();
}

// One request; its text views `doc`.
rows::Request parse(const Json& doc, std::int64_t client_pid) {
  if (!doc.is_object()) throw BadLine("not a JSON object");
  std::optional<std::int64_t> first;
  if (const auto it = doc.find("first_token_ns"); it != doc.end() && !it->is_null())
    first = integer(doc, "first_token_ns");
  const std::string& error = text(doc, "error");
  rows::Request r{.id = std::nullopt,
                  .client_pid = client_pid,
                  .request = text(doc, "id"),
                  .request_index = integer(doc, "index"),
                  .warmup = boolean(doc, "warmup") ? 1 : 0,
                  .start_ns = integer(doc, "start_ns"),
                  .first_token_ns = first,
                  .end_ns = integer(doc, "end_ns"),
                  .prompt_tokens = integer(doc, "prompt_tokens"),
                  .output_tokens = integer(doc, "output_tokens"),
                  .new_connection = boolean(doc, "new_connection") ? 1 : 0,
                  .error = error.empty() ? std::nullopt : std::optional<std::string_view>(error)};
  if (r.end_ns < r.start_ns) throw BadLine("end_ns is before start_ns");
  return r;
}

}  // namespace

bool is_requests_file(std::string_view name) {
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) || !name.ends_with(kSuffix))
    return false;
  const std::string_view digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  return digits.find_first_not_of("0123456789") == std::string_view::npos;
}

void import_requests(ImportState& state, const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  std::int64_t client_pid = 0;
  if (is_requests_file(name)) {
    const std::string_view digits =
        std::string_view(name).substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
    std::from_chars(digits.data(), digits.data() + digits.size(), client_pid);
  }
  std::string error;
  const std::optional<std::string> text = read_input_file(path, "requests file", error);
  if (!text) {
    state.add_data_loss(std::nullopt, DataLossKind::kUnreadableRequests, 1, path + " (" + error + ")");
    return;
  }
  std::istringstream in(*text);
  std::uint64_t bad = 0;
  std::string first_error;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      const Json doc = Json::parse(line);
      state.requests.insert(parse(doc, client_pid));
      ++state.result.rows.requests;
    } catch (const std::exception& e) {  // BadLine, nlohmann's parse/type errors
      if (bad++ == 0) first_error = "line " + std::to_string(number) + ": " + e.what();
    }
  }
  if (bad > 0)
    state.add_data_loss(std::nullopt, DataLossKind::kUnreadableRequests, bad, path + " (first: " + first_error + ")");
}

}  // namespace gpuscope::store::detail
