// core/utf8: validation per RFC 3629 and repair by maximal subparts (Unicode 3.9).
#include "core/utf8.hpp"

#include <gtest/gtest.h>

namespace gpuscope::core {
namespace {

constexpr const char* kFffd = "\xEF\xBF\xBD";

TEST(Utf8, ValidTextIsKept) {
  for (const char* s : {"", "gemm", "void k<float>(int, char const*)", "µs", "日本", "\xF0\x9F\x9A\x80", "a\tb\nc"}) {
    EXPECT_TRUE(valid_utf8(s)) << s;
    EXPECT_EQ(repair_utf8(s), s);
  }
}

TEST(Utf8, IllFormedSequencesAreNamed) {
  for (const char* s : {"\x80", "\xC0\xAF", "\xC3", "\xE0\x80\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xFF",
                        "\xF8\x88\x80\x80\x80"}) {
    EXPECT_FALSE(valid_utf8(s)) << s;
  }
}

TEST(Utf8, RepairReplacesMaximalSubparts) {
  const std::string f = kFffd;
  EXPECT_EQ(repair_utf8("a\xC3(b"), "a" + f + "(b");  // truncated 2-byte sequence
  EXPECT_EQ(repair_utf8("\xE2\x82"), f);              // one subpart, one U+FFFD
  EXPECT_EQ(repair_utf8("\xE2\x82z"), f + "z");
  EXPECT_EQ(repair_utf8("\xC0\xAF"), f + f);          // C0 starts nothing; AF alone
  EXPECT_EQ(repair_utf8("\xED\xA0\x80"), f + f + f);  // a surrogate: three bytes, three
  EXPECT_EQ(repair_utf8("\xF0\x9F\x9A"), f);          // a 4-byte sequence cut short
  EXPECT_EQ(repair_utf8("x\xFF\xFEy"), "x" + f + f + "y");
  EXPECT_TRUE(valid_utf8(repair_utf8("\x80\xC3\xE2\x82\xF0\x9F\xFF")));
}

}  // namespace
}  // namespace gpuscope::core
