#include "collect/nvtx_support.hpp"

#include <gtest/gtest.h>

namespace gpuscope::collect {
namespace {

TEST(NvtxSupport, WideToUtf8) {
  EXPECT_EQ(wide_to_utf8(L"step"), "step");
  EXPECT_EQ(wide_to_utf8(nullptr), "");
  EXPECT_EQ(wide_to_utf8(L"\u00e9\u20ac\U0001F600"), "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  const wchar_t bad[] = {static_cast<wchar_t>(0xD800), L'x', 0};
  EXPECT_EQ(wide_to_utf8(bad), "\xEF\xBF\xBDx");
  EXPECT_EQ(wide_to_utf8(L"abcdef", 3), "abc");
}

TEST(NvtxSupport, CaptureMatchIsExactAndDomainAware) {
  NvtxCaptureSpec spec{"train", ""};
  EXPECT_TRUE(spec.matches("train", ""));
  EXPECT_FALSE(spec.matches("train_step", ""));
  EXPECT_FALSE(spec.matches("train", "mylib"));
  EXPECT_EQ(spec.reason(), "nvtx:train");
  NvtxCaptureSpec dom{"train", "mylib"};
  EXPECT_TRUE(dom.matches("train", "mylib"));
  EXPECT_FALSE(dom.matches("train", ""));
  EXPECT_EQ(dom.reason(), "nvtx:train@mylib");
}

TEST(NvtxSupport, DepthsFollowNvtxSemantics) {
  NvtxDepths d;
  EXPECT_EQ(d.pop(0), -1);  // nothing open
  EXPECT_EQ(d.push(0), 0);
  EXPECT_EQ(d.push(0), 1);
  EXPECT_EQ(d.push(5), 0);  // domains nest independently
  EXPECT_EQ(d.depth(0), 2);
  EXPECT_EQ(d.pop(0), 1);
  EXPECT_EQ(d.pop(0), 0);
  EXPECT_EQ(d.pop(0), -1);
  EXPECT_EQ(d.pop(5), 0);
}

}  // namespace
}  // namespace gpuscope::collect

namespace gpuscope::collect {
namespace {

// --nvtx-include: nested ranges, other domains, and pops that are not the matching range's.
TEST(NvtxIncludeStack, OpenWhileTheMatchingRangeIsOpen) {
  NvtxDepths depths;
  NvtxIncludeStack inc;
  inc.push(false, 0, depths.push(0));  // "outer"
  EXPECT_FALSE(inc.inside());
  inc.push(true, 0, depths.push(0));  // "step"
  EXPECT_TRUE(inc.inside());
  inc.push(false, 7, depths.push(7));  // another domain's range inside
  inc.pop(7, depths.pop(7));
  EXPECT_TRUE(inc.inside()) << "closing another domain's range keeps the match open";
  inc.pop(0, depths.pop(0));  // closes "step"
  EXPECT_FALSE(inc.inside());
  inc.pop(0, depths.pop(0));  // closes "outer"
  EXPECT_FALSE(inc.inside());
}

}  // namespace
}  // namespace gpuscope::collect
