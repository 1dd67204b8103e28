// The launcher on real processes (no GPU needed): exit codes pass through,
// signals become 128+N, a missing command is 127.
#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "cli/launcher.hpp"

using gpuscope::cli::find_executable;
using gpuscope::cli::launch_and_wait;
using gpuscope::cli::LaunchSpec;

TEST(FindExecutable, FindsOnPathAndRejectsMissing) {
  bool ne = false;
  auto sh = find_executable("sh", &ne);
  ASSERT_TRUE(sh.has_value());
  EXPECT_EQ(sh->back(), 'h');
  EXPECT_FALSE(find_executable("gpuscope-no-such-command-xyz", &ne).has_value());
  EXPECT_FALSE(ne);
  char path[] = "/tmp/gpuscope-test-XXXXXX";
  const int fd = ::mkstemp(path);  // mode 0600: exists, not executable
  ASSERT_GE(fd, 0);
  ::close(fd);
  EXPECT_FALSE(find_executable(path, &ne).has_value());
  EXPECT_TRUE(ne);
  ::unlink(path);
}

TEST(Launch, PassesExitCodeThrough) {
  LaunchSpec spec;
  spec.argv = {"sh", "-c", "exit 3"};
  const auto r = launch_and_wait(spec);
  ASSERT_TRUE(r.started);
  ASSERT_TRUE(r.exit_status.has_value());
  EXPECT_EQ(*r.exit_status, 3);
  EXPECT_EQ(r.shell_exit_code(), 3);
  EXPECT_EQ(r.describe(), "exited with code 3");
}

TEST(Launch, SignalBecomes128PlusN) {
  LaunchSpec spec;
  spec.argv = {"sh", "-c", "kill -9 $$"};
  const auto r = launch_and_wait(spec);
  ASSERT_TRUE(r.started);
  ASSERT_TRUE(r.term_signal.has_value());
  EXPECT_EQ(*r.term_signal, SIGKILL);
  EXPECT_EQ(r.shell_exit_code(), 137);
  EXPECT_NE(r.describe().find("signal 9"), std::string::npos);
}

TEST(Launch, MissingCommandIs127) {
  LaunchSpec spec;
  spec.argv = {"/nonexistent/gpuscope-test-cmd"};
  const auto r = launch_and_wait(spec);
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.shell_exit_code(), 127);
}

TEST(Launch, EnvironmentIsAddedAndOverridden) {
  ::setenv("GPUSCOPE_TEST_VAR", "old", 1);
  LaunchSpec spec;
  spec.argv = {"sh", "-c", "test \"$GPUSCOPE_TEST_VAR\" = new && test \"$GPUSCOPE_OTHER\" = x"};
  spec.env = {{"GPUSCOPE_TEST_VAR", "new"}, {"GPUSCOPE_OTHER", "x"}};
  const auto r = launch_and_wait(spec);
  ASSERT_TRUE(r.exit_status.has_value());
  EXPECT_EQ(*r.exit_status, 0);
}

TEST(Launch, KillAfterDurationEndsTheTarget) {
  LaunchSpec spec;
  spec.argv = {"sleep", "30"};
  spec.kill_after = std::chrono::milliseconds(100);
  const auto r = launch_and_wait(spec);
  ASSERT_TRUE(r.term_signal.has_value());
  EXPECT_EQ(*r.term_signal, SIGTERM);
  EXPECT_TRUE(r.killed_by_us);
}
