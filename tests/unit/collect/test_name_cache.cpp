// The PyTorch observer's per-thread name cache (collect/python/name_cache.hpp), by hand: each
// distinct text interned once, and no text ever given another text's id, whether it comes back
// at the same address (an operator's name), at an address another text had (a backward node's
// std::string made per call), or is longer than the slots hold.
#include "collect/python/name_cache.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using gpuscope::torch_observer::NameCache;

// The collector's interning, as a fake: ids from 1 in order of first sight; calls counted.
std::map<std::string, std::uint32_t> g_ids;
int g_calls = 0;
std::uint32_t fake_intern(const char* text, std::size_t length) noexcept {
  ++g_calls;
  const auto [it, added] = g_ids.emplace(std::string(text, length), static_cast<std::uint32_t>(g_ids.size() + 1));
  return it->second;
}

class NameCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_ids.clear();
    g_calls = 0;
    cache = std::make_unique<NameCache>();  // 48 KiB: on the heap, as the observer keeps it
  }
  std::uint32_t id(const char* name) { return cache->id(name, fake_intern); }
  // The id the fake gave `text`; 0 when it never saw it. Call after id(): an assertion's two
  // sides are evaluated in no fixed order.
  static std::uint32_t expected(const std::string& text) {
    const auto it = g_ids.find(text);
    return it == g_ids.end() ? 0 : it->second;
  }
  // id(name), then that the fake gave this id to name's text.
  ::testing::AssertionResult right(const char* name) {
    const std::uint32_t got = id(name);
    if (got != 0 && got == expected(name)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "\"" << name << "\" got id " << got << ", its text has " << expected(name);
  }
  std::unique_ptr<NameCache> cache;
};

TEST_F(NameCacheTest, AnOperatorsNameIsInternedOnceAndFoundByItsAddress) {
  static const char kName[] = "aten::linear";
  const std::uint32_t first = id(kName);
  EXPECT_EQ(first, expected(kName));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(id(kName), first);
  EXPECT_EQ(g_calls, 1);
}

TEST_F(NameCacheTest, NullIsZeroAndTheEmptyNameIsAName) {
  EXPECT_EQ(id(nullptr), 0u);
  EXPECT_EQ(g_calls, 0);
  const std::uint32_t empty = id("");
  EXPECT_NE(empty, 0u);
  EXPECT_EQ(empty, expected(""));
  EXPECT_EQ(id(""), empty);
  EXPECT_EQ(g_calls, 1);
}

TEST_F(NameCacheTest, AnAddressThatComesBackWithAnotherTextGetsThatTextsId) {
  // One buffer, as a std::string made per call and freed, holding in turn the names of a
  // backward node and of the engine's range around it, then the first again.
  char buffer[128];
  const std::vector<std::string> texts = {"AddmmBackward0", "autograd::engine::evaluate_function: AddmmBackward0",
                                          "ReluBackward0"};
  for (int round = 0; round < 3; ++round)
    for (const std::string& text : texts) {
      std::memcpy(buffer, text.c_str(), text.size() + 1);
      EXPECT_TRUE(right(buffer)) << "round " << round;
    }
  EXPECT_EQ(g_calls, 3) << "each text interned once";
}

TEST_F(NameCacheTest, NamesLongerThanTheSlotsGoThroughTheMap) {
  const std::string long_name = "gpuscope.test." + std::string(300, 'x');
  const std::string other = "gpuscope.test." + std::string(299, 'x') + "y";  // same length, last byte differs
  std::string a = long_name, b = other;
  EXPECT_TRUE(right(a.c_str()));
  EXPECT_TRUE(right(b.c_str()));
  EXPECT_NE(expected(long_name), expected(other));
  std::string again = long_name;  // another address, the same text
  EXPECT_TRUE(right(again.c_str()));
  EXPECT_EQ(g_calls, 2);
}

TEST_F(NameCacheTest, ManyNamesSharingSlotsKeepTheirIds) {
  // Four times as many names as slots: slots are shared and overwritten; every answer stays right.
  std::vector<std::string> names;
  for (int i = 0; i < 4 * static_cast<int>(NameCache::kSlots); ++i)
    names.push_back("aten::op_" + std::to_string(i) + (i % 3 == 0 ? std::string(60, '_') : std::string()));
  for (int pass = 0; pass < 2; ++pass)
    for (const std::string& n : names) ASSERT_TRUE(right(n.c_str())) << "pass " << pass;
  EXPECT_EQ(g_calls, static_cast<int>(names.size())) << "each text interned once, whatever its slot";
}

TEST_F(NameCacheTest, TheTextHashTakesEveryByte) {
  const char a[] = "autograd::engine::evaluate_function: MulBackward0";
  char b[sizeof a];
  std::memcpy(b, a, sizeof a);
  for (std::size_t i = 0; i + 1 < sizeof a; ++i) {
    b[i] ^= 1;
    EXPECT_NE(NameCache::text_hash(a, sizeof a - 1), NameCache::text_hash(b, sizeof a - 1)) << "byte " << i;
    b[i] ^= 1;
  }
  EXPECT_EQ(NameCache::text_hash(a, sizeof a - 1), NameCache::text_hash(b, sizeof a - 1));
}

}  // namespace
