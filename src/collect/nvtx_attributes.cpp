#include "collect/nvtx_attributes.hpp"

#include <cstddef>

#include "collect/nvtx_support.hpp"

namespace gpuscope::collect {

NvtxPayload decode_nvtx_attributes(const nvtxEventAttributes_t* a) {
  NvtxPayload p;
  if (a == nullptr) return p;
  constexpr std::size_t kMessageEnd = offsetof(nvtxEventAttributes_t, message) + sizeof(nvtxMessageValue_t);
  if (a->size < kMessageEnd) return p;  // older/foreign layout: ignore the fields
  p.category = a->category;
  if (a->colorType == NVTX_COLOR_ARGB) {
    p.has_color = true;
    p.color = a->color;
  }
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      if (a->message.ascii != nullptr) p.message = a->message.ascii;
      break;
    case NVTX_MESSAGE_TYPE_UNICODE:
      p.message = wide_to_utf8(a->message.unicode);
      break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      if (a->message.registered != nullptr) {
        p.message = reinterpret_cast<const NvtxRegisteredString*>(a->message.registered)->text;
      }
      break;
    default:
      break;
  }
  return p;
}

}  // namespace gpuscope::collect
