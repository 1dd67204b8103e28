// LaunchSelector: ncu's -k regex:, --launch-skip and --launch-count semantics.
#include <gtest/gtest.h>

#include <regex>

#include "collect/launch_selector.hpp"

namespace gpuscope::collect {
namespace {

// _Z4copyPfPKfl = copy(float*, const float*, long); the template is scale<float>(float*, int).
constexpr const char* kCopy = "_Z4copyPfPKfl";
constexpr const char* kScale = "_Z5scaleIfEvPT_i";
constexpr const char* kTriton = "triton_poi_fused_add_0";

TEST(LaunchSelector, EmptyRegexProfilesEveryLaunchAndCountsIndices) {
  LaunchSelector s("", 0, 0);
  for (std::uint64_t i = 0; i < 5; ++i) {
    const auto d = s.next(i % 2 ? kCopy : kScale);
    EXPECT_EQ(d.launch_index, i);
    EXPECT_TRUE(d.profile);
  }
  EXPECT_EQ(s.profiled(), 5u);
  EXPECT_FALSE(s.done());
}

TEST(LaunchSelector, RegexMatchesDemangledOrBaseNameAndSkipCountApplyToMatchesOnly) {
  LaunchSelector s("^copy$", 1, 2);  // the base name is "copy"
  std::vector<std::uint64_t> profiled;
  const char* order[] = {kScale, kCopy, kScale, kCopy, kCopy, kTriton, kCopy, kCopy};
  for (const char* name : order) {
    const auto d = s.next(name);
    if (d.profile) profiled.push_back(d.launch_index);
  }
  // copy launches are at 1, 3, 4, 6, 7: skip the first (1), profile the next two.
  EXPECT_EQ(profiled, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_TRUE(s.done());
  EXPECT_EQ(s.launches(), 8u);
  EXPECT_EQ(s.matched(), 3u);  // counting stops once done
}

TEST(LaunchSelector, SearchesTheDemangledSignature) {
  LaunchSelector s("scale<float>", 0, 0);
  EXPECT_TRUE(s.next(kScale).profile);
  EXPECT_FALSE(s.next(kCopy).profile);
  LaunchSelector t("fused_add", 0, 0);
  EXPECT_TRUE(t.next(kTriton).profile);
}

TEST(LaunchSelector, NamesSeenForTheNothingMatchedWarning) {
  LaunchSelector s("gemm", 0, 0);
  s.next(kCopy);
  s.next(kCopy);
  s.next(kTriton);
  EXPECT_EQ(s.profiled(), 0u);
  EXPECT_EQ(s.names_seen(), (std::vector<std::string>{"copy", "triton_poi_fused_add_0"}));
}

TEST(LaunchSelector, InvalidRegexThrows) { EXPECT_THROW(LaunchSelector("(", 0, 0), std::regex_error); }

}  // namespace
}  // namespace gpuscope::collect

namespace gpuscope::collect {
namespace {

TEST(LaunchSelector, OutsideTheNvtxRangeIsNoMatchAndDoesNotCountForSkip) {
  LaunchSelector s("", 1, 1);
  EXPECT_FALSE(s.next(kCopy, false).profile);  // launch 0: outside the range
  EXPECT_FALSE(s.next(kCopy, true).profile);   // launch 1: first inside, skipped
  const auto d = s.next(kCopy, true);          // launch 2: profiled
  EXPECT_TRUE(d.profile);
  EXPECT_EQ(d.launch_index, 2u);
  EXPECT_TRUE(s.done());
}

}  // namespace
}  // namespace gpuscope::collect
