// cli/session_info: the 'info' file of a session folder — written and read back, parsed
// strictly (a pid that is not a decimal 1..2^31-1 names no session), read only from a private
// folder under a private root.
#include "cli/session_info.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace gpuscope::cli {
namespace {

TEST(SessionInfo, RoundTrips) {
  SessionInfo info;
  info.name = "srv";
  info.launcher_pid = 4242;
  info.output = "/data/srv.sqlite";
  info.log_dir = "/data/srv.logs";
  info.command = "python3 serve.py\n--port 80";  // a line break becomes a space
  info.started = "2026-12-05T09:00:00Z";
  const std::string text = format_session_info(info);
  EXPECT_EQ(text,
            "name=srv\nlauncher_pid=4242\noutput=/data/srv.sqlite\nlog_dir=/data/srv.logs\n"
            "command=python3 serve.py --port 80\nstarted=2026-12-05T09:00:00Z\n");
  const auto back = parse_session_info(text);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->launcher_pid, 4242);
  EXPECT_EQ(back->output, "/data/srv.sqlite");
  EXPECT_EQ(back->command, "python3 serve.py --port 80");
}

TEST(SessionInfo, PidsAreStrict) {
  EXPECT_TRUE(parse_session_info("launcher_pid=1").has_value());
  EXPECT_EQ(parse_session_info("launcher_pid=2147483647\r\n")->launcher_pid, 2147483647L);
  for (const char* bad :
       {"", "launcher_pid=", "launcher_pid=0", "launcher_pid=-5", "launcher_pid=+5", "launcher_pid=12x",
        "launcher_pid=2147483648", "launcher_pid=99999999999999999999", "name=x\noutput=y", "launcher_pid 5"})
    EXPECT_FALSE(parse_session_info(bad).has_value()) << bad;
  // The last of a repeated key wins; unknown keys are skipped.
  EXPECT_EQ(parse_session_info("launcher_pid=5\nfoo=bar\nlauncher_pid=6\n")->launcher_pid, 6);
}

TEST(SessionInfo, ReadOnlyFromAPrivateRootAndFolder) {
  const fs::path root = fs::temp_directory_path() / ("gpuscope-info-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  ::setenv("GPUSCOPE_SESSIONS_DIR", root.c_str(), 1);
  ASSERT_TRUE(store::make_private_dir(root, "x").ok());
  const fs::path dir = root / "s";
  ASSERT_TRUE(store::make_private_dir(dir, "x").ok());
  store::PrivateStatus st;
  EXPECT_FALSE(read_session_info(dir, &st).has_value());
  EXPECT_EQ(st.problem, store::PrivateProblem::kMissing);
  SessionInfo info;
  info.launcher_pid = 7;
  info.output = "/o.sqlite";
  ASSERT_TRUE(write_session_info(dir, info).ok());
  EXPECT_EQ(fs::status(dir / "info").permissions(), fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_TRUE(read_session_info(dir, &st).has_value()) << st.message;
  // A root others can write: the session folder in it is not trusted.
  fs::permissions(root, fs::perms::all);
  EXPECT_FALSE(read_session_info(dir, &st).has_value());
  EXPECT_EQ(st.problem, store::PrivateProblem::kUnsafe);
  EXPECT_NE(st.message.find("directory " + root.string() + " has unsafe permissions"), std::string::npos) << st.message;
  fs::permissions(root, fs::perms::owner_all);
  // An info file that is a link: refused.
  fs::remove(dir / "info");
  std::ofstream(root / "elsewhere") << "launcher_pid=9\n";
  fs::create_symlink(root / "elsewhere", dir / "info");
  EXPECT_FALSE(read_session_info(dir, &st).has_value());
  EXPECT_EQ(st.problem, store::PrivateProblem::kUnsafe);
  ::unsetenv("GPUSCOPE_SESSIONS_DIR");
  fs::remove_all(root);
}

}  // namespace
}  // namespace gpuscope::cli
