// nvtx_attributes: decoding the nvtxEventAttributes_t a program passes to nvtxMarkEx,
// nvtxRangeStartEx, nvtxRangePushEx and their domain forms (NVTX v3, nvtx3/nvToolsExt.h).
// Pure: no CUPTI, no collector state, so it is unit-tested and fuzzed (fuzz/) on its own;
// nvtx_injection.cpp calls it on the program's thread.
//
// What is read: category; color when colorType is NVTX_COLOR_ARGB; the message for
// messageType ASCII (a NUL-terminated char string, taken as is: the importer repairs text
// that is not UTF-8), UNICODE (wchar_t, UTF-32 on Linux, converted by wide_to_utf8, at most
// 2^16 characters read) or REGISTERED (a handle that nvtxDomainRegisterString returned: an
// NvtxRegisteredString). The payload is not recorded (gpuscope stores no NVTX payloads).
// Decoding never fails: a null pointer, a `size` too small to hold the message field (an
// older or foreign layout), an unknown message type or a null message give an empty
// payload or an empty message. The pointers themselves must be valid, as the NVTX API
// requires of its caller.
#pragma once

#ifndef NVTX_NO_IMPL
#define NVTX_NO_IMPL  // the types only: the injection library implements NVTX
#endif
#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <string>

namespace gpuscope::collect {

/// What nvtxDomainRegisterString{A,W} returns to the program, as an nvtxStringHandle_t.
struct NvtxRegisteredString {
  std::string text;  // UTF-8 (wide strings converted when registered)
};

/// The fields of an event gpuscope records.
struct NvtxPayload {
  std::string message;
  std::uint32_t color = 0;  // ARGB, when has_color
  std::uint32_t category = 0;
  bool has_color = false;
};

/// Decodes `attributes` (see the file comment). Never throws but std::bad_alloc.
[[nodiscard]] NvtxPayload decode_nvtx_attributes(const nvtxEventAttributes_t* attributes);

}  // namespace gpuscope::collect
