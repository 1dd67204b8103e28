// --sizes parsing (core/bench_sizes.hpp): ranges, shapes, suffixes and bad input.
#include "core/bench_sizes.hpp"

#include <stdexcept>

#include <gtest/gtest.h>

namespace gpuscope::core {
namespace {

using Shapes = std::vector<std::vector<std::int64_t>>;

TEST(BenchSizes, DoublingRange) {
  const Shapes s = parse_sizes("2^10:2^13");
  EXPECT_EQ(s, (Shapes{{1024}, {2048}, {4096}, {8192}}));
}

TEST(BenchSizes, RangeWithFactorIncludesTheEnd) {
  EXPECT_EQ(parse_sizes("2^12:2^16:4"), (Shapes{{4096}, {16384}, {65536}}));
  EXPECT_EQ(parse_sizes("1000:3000"), (Shapes{{1000}, {2000}, {3000}}));  // 3000 added though 4000 > 3000
  EXPECT_EQ(parse_sizes("5:5"), (Shapes{{5}}));
}

TEST(BenchSizes, ListsShapesAndSuffixes) {
  EXPECT_EQ(parse_sizes("1000,4k,1M,1G"), (Shapes{{1000}, {4096}, {1 << 20}, {1 << 30}}));
  EXPECT_EQ(parse_sizes("64x4096x2^12,8192"), (Shapes{{64, 4096, 4096}, {8192}}));
}

TEST(BenchSizes, BadInputNamesTheItem) {
  for (const char* bad : {"", "0", "2^10:", "2^20:2^10", "1:8:1", "12a", ",5", "1:2:3:4", "2^70", "x5"}) {
    try {
      (void)parse_sizes(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--sizes"), std::string::npos) << e.what();
    }
  }
}

TEST(BenchSizes, TooManySizes) {
  std::string text = "1";
  for (std::size_t i = 1; i < kMaxSizes; ++i) text += ",1";
  EXPECT_EQ(parse_sizes(text).size(), kMaxSizes);
  EXPECT_THROW((void)parse_sizes(text + ",1"), std::invalid_argument);
}

}  // namespace
}  // namespace gpuscope::core
