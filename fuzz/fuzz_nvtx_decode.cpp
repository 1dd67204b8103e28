// Fuzzes the NVTX decoding of the collector (collect/nvtx_attributes.hpp,
// collect/nvtx_support.hpp), which runs inside the traced program on whatever it passes to
// nvtxMarkEx / nvtxRangeStartEx / nvtxRangePushEx and to the wide-string NVTX calls
// (nvtxNameOsThreadW, nvtxDomainCreateW, nvtxDomainRegisterStringW).
//
// Input: the first kHeader bytes fill the fields of an nvtxEventAttributes_t (version,
// size, category, colorType, color, payloadType, payload, messageType; any values); the
// rest is the message. The pointers cannot be fuzzed (NVTX requires valid ones), so the
// message points at the rest of the input: as a NUL-terminated char string (ASCII), as
// wchar_t code units (UNICODE; any 32-bit values, surrogates and values above U+10FFFF
// included), or through a registered-string handle (REGISTERED), and a flag bit makes it
// null. wide_to_utf8 is also fed the code units without a terminator, bounded by their
// count. Checked: no crash, and text from wide strings is valid UTF-8 (it is converted,
// never copied as bytes).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "collect/nvtx_attributes.hpp"
#include "collect/nvtx_support.hpp"
#include "core/utf8.hpp"
#include "fuzz_support.hpp"

namespace {

constexpr std::size_t kHeader = 2 + 2 + 4 + 4 + 4 + 4 + 4 + 8 + 4 + 1;  // the fields read below

template <class T>
T take(const std::uint8_t*& p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  p += sizeof v;
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  if (size < kHeader) return 0;
  const std::uint8_t* p = data;
  nvtxEventAttributes_t a{};
  a.version = take<std::uint16_t>(p);
  a.size = take<std::uint16_t>(p);
  a.category = take<std::uint32_t>(p);
  a.colorType = take<std::int32_t>(p);
  a.color = take<std::uint32_t>(p);
  a.payloadType = take<std::int32_t>(p);
  a.reserved0 = take<std::int32_t>(p);
  a.payload.ullValue = take<std::uint64_t>(p);
  a.messageType = take<std::int32_t>(p);
  const std::uint8_t flags = take<std::uint8_t>(p);
  const bool null_message = (flags & 1u) != 0;

  const std::size_t rest = size - kHeader;
  const std::string ascii(reinterpret_cast<const char*>(p), rest);  // NUL-terminated by c_str()
  std::vector<wchar_t> wide(rest / sizeof(wchar_t) + 1, L'\0');     // the last stays NUL
  std::memcpy(wide.data(), p, (wide.size() - 1) * sizeof(wchar_t));
  collect::NvtxRegisteredString registered{ascii};

  switch (a.messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      a.message.ascii = null_message ? nullptr : ascii.c_str();
      break;
    case NVTX_MESSAGE_TYPE_UNICODE:
      a.message.unicode = null_message ? nullptr : wide.data();
      break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      a.message.registered = null_message ? nullptr : reinterpret_cast<nvtxStringHandle_t>(&registered);
      break;
    default:
      a.message.ascii = ascii.c_str();
      break;  // must be ignored
  }
  const collect::NvtxPayload payload = collect::decode_nvtx_attributes((flags & 2u) != 0 ? nullptr : &a);
  if (a.messageType == NVTX_MESSAGE_TYPE_UNICODE && !core::valid_utf8(payload.message)) {
    fuzz::finding("decode_nvtx_attributes", "a UNICODE message gave text that is not UTF-8");
  }

  // The wide string without its terminator: max_chars must bound the read.
  const std::vector<wchar_t> unterminated(wide.begin(), wide.end() - 1);  // ASan sees a read past it
  const std::string bounded = collect::wide_to_utf8(unterminated.data(), unterminated.size());
  if (!core::valid_utf8(bounded)) fuzz::finding("wide_to_utf8", "output is not valid UTF-8");
  return 0;
}
