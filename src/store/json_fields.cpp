#include "store/json_fields.hpp"

#include <vector>

namespace gpuscope::store::detail {
namespace {

// A SAX pass that keeps the path of the value being read ("ceilings[0].measured") and,
// at the first error, where it was. nlohmann's DOM parser throws out_of_range.406 for a
// number outside double's range without a position; through SAX the same error arrives at
// parse_error() with the byte offset, while the path is still known.
class PathTracker final : public nlohmann::json_sax<Json> {
 public:
  std::string error;  // "in field 'a.b' (byte offset 42): number overflow parsing '1e999'"

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    m_stack.push_back({false, {}, 0});
    return true;
  }
  bool key(string_t& k) override {
    m_stack.back().key = k;
    return true;
  }
  bool end_object() override { return end(); }
  bool start_array(std::size_t) override {
    m_stack.push_back({true, {}, 0});
    return true;
  }
  bool end_array() override { return end(); }
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& e) override {
    std::string what = e.what();
    if (const auto at = what.find("] "); at != std::string::npos) what.erase(0, at + 2);
    const std::string path = current_path();
    // Syntax errors already say "at line L, column C"; the others get the byte offset.
    // (position: bytes read, the token included).
    const std::size_t offset = position >= token.size() ? position - token.size() : 0;
    const std::string where =
        what.find(" at line ") != std::string::npos ? std::string() : " (byte offset " + std::to_string(offset) + ")";
    error = (path.empty() ? std::string() : "in field '" + path + "'" + where + ": ") + what;
    return false;
  }

 private:
  struct Level {
    bool array;
    std::string key;    // objects: the key of the value being read
    std::size_t index;  // arrays: the index of the value being read
  };
  std::vector<Level> m_stack;

  // A value was read: the next one in an array gets the next index.
  bool value() {
    if (!m_stack.empty() && m_stack.back().array) ++m_stack.back().index;
    return true;
  }
  bool end() {
    m_stack.pop_back();
    return value();
  }
  [[nodiscard]] std::string current_path() const {
    std::string p;
    for (const Level& l : m_stack) {
      if (l.array) {
        p += "[" + std::to_string(l.index) + "]";
      } else if (!l.key.empty()) {
        if (!p.empty()) p += '.';
        p += l.key;
      }
    }
    return p;
  }
};

}  // namespace

Json parse_json_text(const std::string& text, const std::string& source, const std::string& noun,
                     const std::function<void(const std::string&)>& fail) {
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // parse_error (bad syntax) and out_of_range (a number beyond double): say where.
    PathTracker tracker;
    (void)Json::sax_parse(text, &tracker);
    std::string what = tracker.error;
    if (what.empty()) {
      what = e.what();
      if (const auto at = what.find("] "); at != std::string::npos) what.erase(0, at + 2);
    }
    fail(source + ": not a valid JSON " + noun + ": " + what);
    throw;  // fail() throws; not reached
  }
}

}  // namespace gpuscope::store::detail
