// collect/session_control: the control and ack lines of gpuscope launch --session, the
// atomic private write, session names, the ack listing, and the sessions root's checks.
#include "collect/session_control.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
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
  // Exactly the written form: no sign, no leading zero, no wrap-around, one space, one newline.
  EXPECT_TRUE(parse_session_command("1 start").has_value());
  EXPECT_EQ(parse_session_command("1000000000000000000 stop")->generation, 1'000'000'000'000'000'000u);
  for (const char* bad :
       {"-1 start", "+1 start", "01 start", "18446744073709551615 start", "99999999999999999999 start", "1  start",
        " 1 start", "1 start\n\n", "1 start ", "1 starts", "1\tstart", "1000000000000000001 stop"})
    EXPECT_FALSE(parse_session_command(bad).has_value()) << bad;
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
  ASSERT_TRUE(store::make_private_dir(dir, "remove it").ok());
  EXPECT_FALSE(read_session_file(dir / "control").has_value());  // none yet
  ASSERT_TRUE(write_session_file(dir / "control", format_session_command({1, true})).ok());
  const auto c = read_session_file(dir / "control");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->generation, 1u);
  EXPECT_TRUE(c->start);
  ASSERT_TRUE(write_session_file(dir / "ack.4242", format_session_command({1, true})).ok());
  ASSERT_TRUE(write_session_file(dir / "ack.77", format_session_command({2, false})).ok());
  std::filesystem::create_symlink(dir / "ack.77", dir / "ack.78");  // a link: left out
  std::ofstream(dir / "ack.99") << "garbage";                       // malformed: left out
  std::ofstream(dir / "ack.x1") << "1 start";                       // not a pid: left out
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
  EXPECT_FALSE(write_session_file(dir / "missing-folder" / "control", "1 start\n").ok());
  // A control file that is a link is refused with the reason, never followed.
  std::filesystem::remove(dir / "control");
  std::filesystem::create_symlink(dir / "ack.4242", dir / "control");
  store::PrivateStatus st;
  EXPECT_FALSE(read_session_file(dir / "control", &st).has_value());
  EXPECT_EQ(st.problem, store::PrivateProblem::kUnsafe);
  EXPECT_NE(st.message.find((dir / "control").string() + " is a symbolic link"), std::string::npos) << st.message;
  // A session folder others can write is refused whole: nothing read, nothing written.
  std::filesystem::permissions(dir, std::filesystem::perms::all);
  EXPECT_TRUE(read_session_acks(dir).empty());
  const store::PrivateStatus w = write_session_file(dir / "control", "9 start\n");
  EXPECT_EQ(w.problem, store::PrivateProblem::kUnsafe);
  EXPECT_NE(w.message.find("has unsafe permissions"), std::string::npos) << w.message;
  EXPECT_EQ(w.fix, "remove it (rm -r " + dir.string() + ")");
  std::filesystem::remove_all(dir);
}

TEST(SessionControl, ControlOfAnotherUserIsIgnored) {
  if (::geteuid() != 0) GTEST_SKIP() << "a file of another user needs chown (root; CI runs as root)";
  const auto dir = std::filesystem::temp_directory_path() / ("gpuscope-session-owner-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(store::make_private_dir(dir, "remove it").ok());
  ASSERT_TRUE(write_session_file(dir / "control", "9 start\n").ok());
  ASSERT_EQ(::chown((dir / "control").c_str(), 65534, 65534), 0);
  store::PrivateStatus st;
  EXPECT_FALSE(read_session_file(dir / "control", &st).has_value());
  EXPECT_EQ(st.problem, store::PrivateProblem::kUnsafe);
  EXPECT_NE(st.message.find("belongs to another user (owner 65534"), std::string::npos) << st.message;
  std::filesystem::remove_all(dir);
}

TEST(SessionControl, SessionsRootFollowsTheEnvironment) {
  ::setenv("GPUSCOPE_SESSIONS_DIR", "/some/where", 1);
  EXPECT_EQ(session_dir("s1"), std::filesystem::path("/some/where/s1"));
  EXPECT_EQ(unsafe_folder_fix("/some/where"), "remove it, or set GPUSCOPE_SESSIONS_DIR to a folder of your own");
  EXPECT_EQ(unsafe_folder_fix("/some/where/s1"), "remove it (rm -r /some/where/s1)");
  ::unsetenv("GPUSCOPE_SESSIONS_DIR");
  const char* old_runtime = std::getenv("XDG_RUNTIME_DIR");
  const std::string saved = old_runtime != nullptr ? old_runtime : "";
  ::setenv("XDG_RUNTIME_DIR", "/run/user/7", 1);
  EXPECT_EQ(sessions_root(), std::filesystem::path("/run/user/7/gpuscope-sessions-" + std::to_string(::geteuid())));
  EXPECT_EQ(unsafe_folder_fix(sessions_root()), "remove it, or set XDG_RUNTIME_DIR to a folder of your own");
  ::unsetenv("XDG_RUNTIME_DIR");
  EXPECT_EQ(sessions_root(), std::filesystem::path("/tmp/gpuscope-sessions-" + std::to_string(::geteuid())));
  if (old_runtime != nullptr) ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
}

TEST(SessionControl, TheRootIsMadePrivateOrRefused) {
  const auto base = std::filesystem::temp_directory_path() / ("gpuscope-session-root-" + std::to_string(::getpid()));
  std::filesystem::remove_all(base);
  const auto root = base / "new" / "sessions";
  ::setenv("GPUSCOPE_SESSIONS_DIR", root.c_str(), 1);
  EXPECT_EQ(check_sessions_root().problem, store::PrivateProblem::kMissing);
  ASSERT_TRUE(prepare_sessions_root().ok());
  EXPECT_EQ(std::filesystem::status(root).permissions(), std::filesystem::perms::owner_all);
  EXPECT_TRUE(check_sessions_root().ok());
  std::filesystem::permissions(root, std::filesystem::perms::all);  // 0777: refused, not repaired
  const store::PrivateStatus st = prepare_sessions_root();
  EXPECT_EQ(st.problem, store::PrivateProblem::kUnsafe);
  EXPECT_NE(st.message.find("directory " + root.string() + " has unsafe permissions (owner " +
                            std::to_string(::geteuid()) + ", mode 0777)"),
            std::string::npos)
      << st.message;
  EXPECT_EQ(st.fix, "remove it, or set GPUSCOPE_SESSIONS_DIR to a folder of your own");
  EXPECT_EQ(std::filesystem::status(root).permissions(), std::filesystem::perms::all);
  ::unsetenv("GPUSCOPE_SESSIONS_DIR");
  std::filesystem::remove_all(base);
}

}  // namespace
}  // namespace gpuscope::collect
