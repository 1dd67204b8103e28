#include "collect/nvtx_support.hpp"

namespace gpuscope::collect {

std::string wide_to_utf8(const wchar_t* text, std::size_t max_chars) {
  std::string out;
  if (text == nullptr) return out;
  for (std::size_t i = 0; i < max_chars && text[i] != L'\0'; ++i) {
    auto cp = static_cast<std::uint32_t>(text[i]);
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  return out;
}

int NvtxDepths::push(std::uint64_t domain_id) {
  for (auto& [id, d] : m_depths) {
    if (id == domain_id) return d++;
  }
  m_depths.emplace_back(domain_id, 1);
  return 0;
}

int NvtxDepths::pop(std::uint64_t domain_id) {
  for (auto& [id, d] : m_depths) {
    if (id == domain_id) return d > 0 ? --d : -1;
  }
  return -1;
}

int NvtxDepths::depth(std::uint64_t domain_id) const {
  for (const auto& [id, d] : m_depths) {
    if (id == domain_id) return d;
  }
  return 0;
}

}  // namespace gpuscope::collect
