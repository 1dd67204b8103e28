#include "collect/log_path.hpp"

#include <gtest/gtest.h>

namespace gpuscope::collect {
namespace {

TEST(LogPath, HostPidAndSuffix) {
  EXPECT_EQ(log_file_path("/tmp/run", "node01", 4242, 0), "/tmp/run/node01-4242.gslog");
  EXPECT_EQ(log_file_path("/tmp/run/", "node01", 4242, 2), "/tmp/run/node01-4242-2.gslog");
  EXPECT_EQ(log_file_path("/", "a/b c", 1, 0), "/a_b_c-1.gslog");
  EXPECT_EQ(log_file_path("/d", "", 1, 0), "/d/host-1.gslog");
}

}  // namespace
}  // namespace gpuscope::collect
