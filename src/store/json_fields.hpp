// Internal: reading the fields of a JSON object with errors that name the file and the
// field's path ("cases[2].timing.median_s"), for the JSON files store/ reads (machine
// profiles, bench results). `Error` is the exception type thrown (constructed from the
// message "SOURCE: what is wrong").
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <system_error>

#include <nlohmann/json.hpp>

#include "store/atomic_file.hpp"
#include "store/input_file.hpp"

namespace gpuscope::store::detail {

using Json = nlohmann::ordered_json;

/// NaN and infinities → null (JSON has no NaN); anything else → the number.
[[nodiscard]] inline Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

/// Parses `text` (the contents of `source`); on bad syntax or a number outside double's
/// range (nlohmann's out_of_range.406, e.g. 1e999) calls `fail` with "SOURCE: not a valid
/// JSON NOUN: in field 'ceilings[0].measured' (byte offset 812): number overflow parsing '1e999'",
/// the field found by a second, SAX pass over the text. `fail` must throw.
[[nodiscard]] Json parse_json_text(const std::string& text, const std::string& source, const std::string& noun,
                                   const std::function<void(const std::string&)>& fail);

/// Reads and parses the JSON file `path`; throws Error "PATH: ..." when it is missing
/// (`missing`, e.g. "no such bench result file"), a folder, a FIFO or other special file
/// (refused without waiting: store/input_file.hpp), unreadable or not valid JSON
/// (naming `noun`, e.g. "bench result", the field and the parser's position: parse_json_text).
template <class Error>
[[nodiscard]] Json read_json_file(const std::filesystem::path& path, const std::string& noun,
                                  const std::string& missing) {
  namespace fs = std::filesystem;
  const std::string source = path.string();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(source + ": " + missing);
  if (fs::is_directory(path, ec)) throw Error(source + ": is a folder, not a " + noun + " file");
  std::string error;  // a FIFO or device is refused, never waited on (store/input_file.hpp)
  const std::optional<std::string> text = read_input_file(path, noun, error);
  if (!text) throw Error(error);
  return parse_json_text(*text, source, noun, [](const std::string& message) { throw Error(message); });
}

/// Writes `doc` (2-space indented, newline at the end) to `path` atomically
/// (store/atomic_file.hpp: a reader never sees half a file; on failure the old file is
/// kept). An existing file is replaced only under Overwrite::kReplace, else
/// OutputExistsError is thrown (unchanged, so every command reports it alike); any other
/// failure throws Error with the message of FileWriteError, which names the file, the reason
/// and what was kept. `what` ("the machine profile") is not used in messages any more.
template <class Error>
void write_json_file(const Json& doc, const std::filesystem::path& path, const std::string& /*what*/,
                     Overwrite overwrite) {
  try {
    write_file_atomically(path, overwrite, [&doc](std::ostream& out) { out << doc.dump(2) << '\n'; });
  } catch (const OutputExistsError&) {
    throw;
  } catch (const FileWriteError& e) {
    throw Error(e.what());
  }
}

/// "number", "string", "object", ... for messages.
[[nodiscard]] inline std::string json_type_name(const Json& j) {
  return j.is_number() ? "number" : std::string(j.type_name());
}

template <class Error>
class JsonFields {
 public:
  /// `path` is the object's own path ("" for the top level, "cases[2].timing").
  JsonFields(const Json& object, const std::string& source, std::string path)
      : m_obj(object), m_source(source), m_path(std::move(path)) {}

  [[nodiscard]] bool has(const char* key) const { return m_obj.contains(key); }

  /// The full path of `key` in this object.
  [[nodiscard]] std::string field(const char* key) const { return m_path.empty() ? key : m_path + "." + key; }

  [[noreturn]] void fail(const std::string& message) const { throw Error(m_source + ": " + message); }

  [[noreturn]] void wrong(const char* key, const char* expected, const Json& found) const {
    fail("field '" + field(key) + "' must be " + expected + ", found " + json_type_name(found));
  }

  const Json& required(const char* key) const {
    if (!has(key)) fail("missing required field '" + field(key) + "'");
    return m_obj.at(key);
  }

  /// A number or null (→ NaN); absent and optional → NaN.
  [[nodiscard]] double number(const char* key, bool is_required = false) const {
    if (!is_required && !has(key)) return std::numeric_limits<double>::quiet_NaN();
    const Json& v = required(key);
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!v.is_number()) wrong(key, "a number or null", v);
    return v.get<double>();
  }

  [[nodiscard]] std::int64_t integer(const char* key, std::int64_t fallback = 0, bool is_required = false) const {
    if (!is_required && !has(key)) return fallback;
    const Json& v = required(key);
    if (!v.is_number_integer()) wrong(key, "an integer", v);
    return v.get<std::int64_t>();
  }

  /// An integer that must fit an int.
  [[nodiscard]] int int32(const char* key, int fallback = 0, bool is_required = false) const {
    const std::int64_t v = integer(key, fallback, is_required);
    if (v < INT32_MIN || v > INT32_MAX) fail("field '" + field(key) + "' is out of range: " + std::to_string(v));
    return static_cast<int>(v);
  }

  [[nodiscard]] std::string text(const char* key, bool is_required = false) const {
    if (!is_required && !has(key)) return {};
    const Json& v = required(key);
    if (!v.is_string()) wrong(key, "a string", v);
    return v.get<std::string>();
  }

  [[nodiscard]] bool flag(const char* key) const {
    if (!has(key)) return false;
    const Json& v = m_obj.at(key);
    if (!v.is_boolean()) wrong(key, "true or false", v);
    return v.get<bool>();
  }

 private:
  const Json& m_obj;
  const std::string& m_source;
  std::string m_path;
};

}  // namespace gpuscope::store::detail
