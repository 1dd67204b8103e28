#include "store/kernel_names.hpp"

#include "core/utf8.hpp"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>

namespace gpuscope::store {
namespace {

[[nodiscard]] std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

[[nodiscard]] bool is_open(char c) { return c == '(' || c == '[' || c == '{' || c == '<'; }
[[nodiscard]] bool is_close(char c) { return c == ')' || c == ']' || c == '}' || c == '>'; }

// Index of the bracket opening the group that closes at s[close], scanning
// backwards over nested groups of any kind; npos if unbalanced. The '>' of
// "->" is not a bracket.
[[nodiscard]] std::size_t match_open(std::string_view s, std::size_t close) {
  int depth = 0;
  for (std::size_t i = close + 1; i-- > 0;) {
    const char c = s[i];
    if (c == '>' && i > 0 && s[i - 1] == '-') continue;
    if (is_close(c)) {
      ++depth;
    } else if (is_open(c)) {
      if (--depth == 0) return i;
    }
  }
  return std::string_view::npos;
}

[[nodiscard]] bool strip_suffix(std::string_view& s, std::string_view suffix) {
  if (s.size() < suffix.size() || s.substr(s.size() - suffix.size()) != suffix) return false;
  s.remove_suffix(suffix.size());
  s = trim(s);
  return true;
}

// Position of an "operator..." name (operator(), operator<<, operator new,
// conversion operators) at bracket depth 0 and a name boundary, else npos.
// Operators inside template arguments (lambdas' operator()) do not count.
[[nodiscard]] std::size_t operator_position(std::string_view s) {
  constexpr std::string_view kOp = "operator";
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (depth == 0 && s.compare(i, kOp.size(), kOp) == 0) {
      const bool boundary = i == 0 || s[i - 1] == ':' || s[i - 1] == ' ';
      const std::size_t after = i + kOp.size();
      // "operator_foo" or "operators" are identifiers, not operators.
      const bool ident_follows =
          after < s.size() && (std::isalnum(static_cast<unsigned char>(s[after])) || s[after] == '_');
      if (boundary && !ident_follows) return i;
    }
    if (c == '>' && i > 0 && s[i - 1] == '-') continue;
    if (is_open(c)) {
      ++depth;
    } else if (is_close(c) && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

}  // namespace

std::string demangle(std::string_view name) {
  if (name.size() < 2 || name.substr(0, 2) != "_Z") return std::string(name);
  const std::string mangled(name);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                             std::free);
  if (status != 0 || !out) return mangled;
  // A source name's length counts bytes: a damaged or foreign log's length can cut a
  // multi-byte character (U+FFFD from the import's repair), and the demangler then puts ')'
  // or '<' between its bytes. The result is repaired again so it stays UTF-8.
  return core::repair_utf8(out.get());
}

std::string base_name(std::string_view demangled) {
  const std::string_view original = trim(demangled);
  std::string_view s = original;

  // Trailing " [clone .constprop.0]" and cv/ref/noexcept qualifiers.
  for (bool changed = true; changed && !s.empty();) {
    changed = false;
    if (s.back() == ']') {
      const std::size_t open = match_open(s, s.size() - 1);
      if (open != std::string_view::npos && open > 0 && s[open - 1] == ' ') {
        s = trim(s.substr(0, open));
        changed = true;
      }
    }
    for (std::string_view q : {" const", " volatile", " &&", " &", " noexcept"}) {
      if (strip_suffix(s, q)) changed = true;
    }
  }

  // The parameter list.
  if (!s.empty() && s.back() == ')') {
    const std::size_t open = match_open(s, s.size() - 1);
    if (open != std::string_view::npos && open > 0) s = trim(s.substr(0, open));
  }

  // An operator name ends the search: its symbol may contain brackets.
  if (const std::size_t op = operator_position(s); op != std::string_view::npos) {
    std::string_view name = s.substr(op);
    // "operator< <int>": drop template arguments after the operator symbol.
    if (const std::size_t sp = name.find(" <"); sp != std::string_view::npos && name.back() == '>') {
      name = name.substr(0, sp);
    }
    return std::string(trim(name));
  }

  // Template arguments of the function itself.
  if (!s.empty() && s.back() == '>') {
    const std::size_t open = match_open(s, s.size() - 1);
    if (open != std::string_view::npos && open > 0) s = trim(s.substr(0, open));
  }

  // The last component: after the last "::" or space (return type) at depth 0.
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '>' && i > 0 && s[i - 1] == '-') continue;
    if (is_open(c)) {
      ++depth;
    } else if (is_close(c)) {
      if (depth > 0) --depth;
    } else if (depth == 0) {
      if (c == ' ') start = i + 1;
      if (c == ':' && i + 1 < s.size() && s[i + 1] == ':') start = i + 2;
    }
  }
  const std::string_view base = trim(s.substr(start));
  return base.empty() ? std::string(original) : std::string(base);
}

std::string_view api_function_name(std::string_view name) {
  const std::size_t v = name.rfind("_v");
  // Runtime names carry the CUDA version that introduced them (4+ digits); the
  // driver's _v2/_v3 are real symbol names (cuMemAlloc_v2) and stay.
  if (v == std::string_view::npos || v == 0 || v + 6 > name.size()) return name;
  for (std::size_t i = v + 2; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return name;
  return name.substr(0, v);
}

}  // namespace gpuscope::store
