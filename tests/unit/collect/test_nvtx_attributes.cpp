#include "collect/nvtx_attributes.hpp"

#include <gtest/gtest.h>

#include <cstddef>

namespace gpuscope::collect {
namespace {

nvtxEventAttributes_t attributes() {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  return a;
}

TEST(NvtxAttributes, AsciiMessageColorAndCategory) {
  nvtxEventAttributes_t a = attributes();
  a.category = 7;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xFF00FF00u;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "forward";
  const NvtxPayload p = decode_nvtx_attributes(&a);
  EXPECT_EQ(p.message, "forward");
  EXPECT_EQ(p.category, 7u);
  EXPECT_TRUE(p.has_color);
  EXPECT_EQ(p.color, 0xFF00FF00u);
}

TEST(NvtxAttributes, UnicodeAndRegisteredMessages) {
  nvtxEventAttributes_t a = attributes();
  a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  a.message.unicode = L"\u00e9tape";
  EXPECT_EQ(decode_nvtx_attributes(&a).message, "\xC3\xA9tape");

  NvtxRegisteredString registered{"backward"};
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = reinterpret_cast<nvtxStringHandle_t>(&registered);
  EXPECT_EQ(decode_nvtx_attributes(&a).message, "backward");
}

TEST(NvtxAttributes, WhatCannotBeReadGivesAnEmptyPayload) {
  EXPECT_EQ(decode_nvtx_attributes(nullptr).message, "");

  nvtxEventAttributes_t a = attributes();
  a.category = 3;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = "step";
  a.size = offsetof(nvtxEventAttributes_t, message);  // an older layout without the message
  NvtxPayload p = decode_nvtx_attributes(&a);
  EXPECT_EQ(p.message, "");
  EXPECT_EQ(p.category, 0u);

  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.message.ascii = nullptr;
  EXPECT_EQ(decode_nvtx_attributes(&a).message, "");
  a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  a.message.unicode = nullptr;
  EXPECT_EQ(decode_nvtx_attributes(&a).message, "");
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = nullptr;
  EXPECT_EQ(decode_nvtx_attributes(&a).message, "");
  a.messageType = 99;  // unknown
  a.message.ascii = "x";
  p = decode_nvtx_attributes(&a);
  EXPECT_EQ(p.message, "");
  EXPECT_EQ(p.category, 3u);  // the other fields of a full-size layout are still read
  EXPECT_FALSE(p.has_color);  // colorType unset: no color
}

}  // namespace
}  // namespace gpuscope::collect
