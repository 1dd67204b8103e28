// collect/session_control: the control and ack lines of gpuscope launch --session, the
// atomic write, session names, and the ack listing.
#include "collect/session_control.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace gpuscope::collect {
namespace {

TEST(SessionControl, CommandLineRoundTrips) {
  EXPECT_EQ(format_session_command({3, true}), "3 start\n");
  EXPECT_EQ(format_session_command({4, false}), "4 stop\n");
  const auto c = parse_session_command("17 stop\n");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->generation, 17u);
  EXPECT_FALSE(c->start);
  EXPECT_FALSE(parse_session_command("").has_value());
  EXPECT_FALSE(parse_session_command("0 start").has_value());  // generations start at 1
  EXPECT_FALSE(parse_session_command("2 pause").has_value());
  EXPECT_FALSE(parse_session_command("start 2").has_value());
}

TEST(SessionControl, NamesAreChecked) {
  EXPECT_EQ(session_name_problem("server-1.a_b"), "");
  EXPECT_NE(session_name_problem(""), "");
  EXPECT_NE(session_name_problem(".hidden"), "");
  EXPECT_NE(session_name_problem("a/b"), "");
  EXPECT_NE(session_name_problem("../x"), "");
  EXPECT_NE(session_name_problem(std::string(65, 'a')), "");
}

TEST(SessionControl, FilesAndAcks) {
  const auto dir = std::filesystem::temp_directory_path() / ("gpuscope-session-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  EXPECT_FALSE(read_session_file(dir / "control").has_value());  // none yet
  ASSERT_TRUE(write_line_atomically(dir / "control", format_session_command({1, true})));
  const auto c = read_session_file(dir / "control");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->generation, 1u);
  EXPECT_TRUE(c->start);
  ASSERT_TRUE(write_line_atomically(dir / "ack.4242", format_session_command({1, true})));
  ASSERT_TRUE(write_line_atomically(dir / "ack.77", format_session_command({2, false})));
  std::ofstream(dir / "ack.99") << "garbage";  // malformed: left out
  std::ofstream(dir / "ack.x1") << "1 start";  // not a pid: left out
  auto acks = read_session_acks(dir);
  std::sort(acks.begin(), acks.end(), [](const SessionAck& a, const SessionAck& b) { return a.pid < b.pid; });
  ASSERT_EQ(acks.size(), 2u);
  EXPECT_EQ(acks[0].pid, 77u);
  EXPECT_FALSE(acks[0].command.start);
  EXPECT_EQ(acks[1].pid, 4242u);
  EXPECT_EQ(acks[1].command.generation, 1u);
  // No temporary file is left behind.
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  EXPECT_FALSE(write_line_atomically(dir / "missing-folder" / "control", "1 start\n"));
  std::filesystem::remove_all(dir);
}

TEST(SessionControl, SessionsRootFollowsTheEnvironment) {
  ::setenv("GPUSCOPE_SESSIONS_DIR", "/some/where", 1);
  EXPECT_EQ(session_dir("s1"), std::filesystem::path("/some/where/s1"));
  ::unsetenv("GPUSCOPE_SESSIONS_DIR");
  EXPECT_NE(sessions_root().string().find("gpuscope-sessions-"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::collect
