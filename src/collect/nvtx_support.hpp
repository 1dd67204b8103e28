// Pure helpers of the NVTX injection (nvtx_injection.cpp): wide-string
// conversion, capture-range matching, per-thread push/pop depth.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuscope::collect {

/// wchar_t text (UTF-32 on Linux) to UTF-8; invalid code points become U+FFFD.
/// `max_chars` bounds the input read (a missing terminator cannot run away).
[[nodiscard]] std::string wide_to_utf8(const wchar_t* text, std::size_t max_chars = 1u << 16);

/// GPUSCOPE_NVTX_CAPTURE: exact message, in the named domain ("" = default domain).
struct NvtxCaptureSpec {
  std::string message;
  std::string domain;

  [[nodiscard]] bool matches(std::string_view msg, std::string_view domain_name) const {
    return msg == message && domain_name == domain;
  }
  /// "nvtx:NAME" or "nvtx:NAME@DOMAIN": the CaptureRecord reason.
  [[nodiscard]] std::string reason() const {
    return domain.empty() ? "nvtx:" + message : "nvtx:" + message + "@" + domain;
  }
};

/// One thread's push/pop nesting per NVTX domain. NVTX semantics: push returns
/// the 0-based level of the range it opens; pop returns the level of the range
/// it closes, or -1 when the domain has no open range.
class NvtxDepths {
 public:
  int push(std::uint64_t domain_id);
  int pop(std::uint64_t domain_id);
  [[nodiscard]] int depth(std::uint64_t domain_id) const;

 private:
  std::vector<std::pair<std::uint64_t, int>> m_depths;  // few domains: a flat vector
};

/// gpuscope kernels --nvtx-include: which NVTX ranges are open on one thread that match
/// the spec. push/pop carry the level NvtxDepths returned, so an unbalanced or foreign
/// pop cannot close a matching range it did not open.
class NvtxIncludeStack {
 public:
  void push(bool matches, std::uint64_t domain_id, int level) {
    if (matches) m_open.emplace_back(domain_id, level);
  }
  void pop(std::uint64_t domain_id, int level) {
    if (!m_open.empty() && m_open.back() == std::pair<std::uint64_t, int>{domain_id, level}) m_open.pop_back();
  }
  [[nodiscard]] bool inside() const { return !m_open.empty(); }

 private:
  std::vector<std::pair<std::uint64_t, int>> m_open;
};

}  // namespace gpuscope::collect
