// store/private_dir: a private folder is created 0700 and refused when it is a link, a file,
// another user's, or has group/other bits; files are created 0600 without following a link
// planted under any name, and read only when they are regular files of the effective uid.
// Other owners are made with chown(2), which needs root: those cases skip otherwise (the
// second-user test, tests/unit/cli/test_session_security.py, runs the real attacks).
#include "store/private_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace fs = std::filesystem;

namespace gpuscope::store {
namespace {

constexpr uid_t kOtherUid = 65534;  // nobody

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

class PrivateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "gpuscope_private_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    m_base = tmpl;
    m_dir = m_base / "state";
    m_victim = m_base / "victim.txt";
    std::ofstream(m_victim) << "the victim's file\n";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(m_base, ec);
  }
  fs::path m_base, m_dir, m_victim;
};

TEST_F(PrivateDirTest, MakesTheFolder0700AndAcceptsIt) {
  const PrivateStatus st = make_private_dir(m_dir, "remove it");
  ASSERT_TRUE(st.ok()) << st.message;
  EXPECT_EQ(mode_of(m_dir), 0700u);
  EXPECT_TRUE(check_private_dir(m_dir, "remove it").ok());
  EXPECT_TRUE(make_private_dir(m_dir, "remove it").ok());  // existing and right: fine
}

TEST_F(PrivateDirTest, CreateDirectories0700MakesEachNewFolder0700AndLeavesOthers) {
  fs::create_directory(m_base / "cache");
  fs::permissions(m_base / "cache", fs::perms(0755));
  std::error_code ec;
  ASSERT_TRUE(create_directories_0700(m_base / "cache" / "gpuscope" / "profiles", ec)) << ec.message();
  EXPECT_EQ(mode_of(m_base / "cache"), 0755u);  // existed: unchanged
  EXPECT_EQ(mode_of(m_base / "cache" / "gpuscope"), 0700u);
  EXPECT_EQ(mode_of(m_base / "cache" / "gpuscope" / "profiles"), 0700u);
  EXPECT_TRUE(create_directories_0700(m_base / "cache" / "gpuscope", ec));  // all there: fine
  // A file in the way: the error, not a success.
  std::ofstream(m_base / "file") << "x";
  EXPECT_FALSE(create_directories_0700(m_base / "file" / "sub", ec));
  EXPECT_TRUE(ec);
}

TEST_F(PrivateDirTest, AMissingFolderIsMissing) {
  const PrivateStatus st = check_private_dir(m_dir, "remove it");
  EXPECT_EQ(st.problem, PrivateProblem::kMissing);
  EXPECT_NE(st.message.find(m_dir.string()), std::string::npos) << st.message;
}

TEST_F(PrivateDirTest, RefusesGroupOrOtherBits) {
  for (const mode_t mode : {0777u, 0755u, 0770u, 0701u, 01700u}) {
    ASSERT_EQ(::mkdir(m_dir.c_str(), 0700), 0);
    ASSERT_EQ(::chmod(m_dir.c_str(), mode), 0);
    const PrivateStatus st = make_private_dir(m_dir, "remove it, or set XDG_RUNTIME_DIR");
    EXPECT_EQ(st.problem, PrivateProblem::kUnsafe) << std::oct << mode;
    char want[128];
    std::snprintf(want, sizeof want, "has unsafe permissions (owner %u, mode 0%o)", ::geteuid(), mode);
    EXPECT_EQ(st.message, "directory " + m_dir.string() + " " + want);
    EXPECT_EQ(st.fix, "remove it, or set XDG_RUNTIME_DIR");
    EXPECT_EQ(mode_of(m_dir), mode) << "a refused folder is left as it is";
    // Nothing is written into it, nothing read from it.
    EXPECT_FALSE(write_private_file(m_dir, "control", "1 start\n", "remove it").ok());
    EXPECT_FALSE(fs::exists(m_dir / "control"));
    std::ofstream(m_dir / "info") << "launcher_pid=1\n";
    EXPECT_EQ(read_private_file(m_dir, "info", 100, "remove it").status.problem, PrivateProblem::kUnsafe);
    fs::remove_all(m_dir);
  }
}

TEST_F(PrivateDirTest, RefusesASymlinkedFolder) {
  const fs::path real = m_base / "real";
  ASSERT_TRUE(make_private_dir(real, "x").ok());
  fs::create_directory_symlink(real, m_dir);
  const PrivateStatus st = make_private_dir(m_dir, "remove it");
  EXPECT_EQ(st.problem, PrivateProblem::kUnsafe);
  EXPECT_NE(st.message.find("directory " + m_dir.string() + " is a symbolic link"), std::string::npos) << st.message;
  EXPECT_FALSE(write_private_file(m_dir, "control", "1 start\n", "remove it").ok());
  EXPECT_FALSE(fs::exists(real / "control"));
}

TEST_F(PrivateDirTest, RefusesAFile) {
  std::ofstream(m_dir) << "not a folder";
  const PrivateStatus st = make_private_dir(m_dir, "remove it");
  EXPECT_EQ(st.problem, PrivateProblem::kUnsafe);
  EXPECT_NE(st.message.find("is not a directory"), std::string::npos) << st.message;
}

TEST_F(PrivateDirTest, AnotherUsersFolder) {
  if (::geteuid() != 0) GTEST_SKIP() << "chown to another user needs root (CI runs as root)";
  ASSERT_EQ(::mkdir(m_dir.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(m_dir.c_str(), 0777), 0);
  ASSERT_EQ(::chown(m_dir.c_str(), kOtherUid, kOtherUid), 0);
  PrivateStatus st = make_private_dir(m_dir, "remove it");
  EXPECT_EQ(st.problem, PrivateProblem::kUnsafe);
  EXPECT_EQ(st.message, "directory " + m_dir.string() + " has unsafe permissions (owner 65534, mode 0777)");
  // Closed to others (0700): someone else's state, "permission denied".
  ASSERT_EQ(::chmod(m_dir.c_str(), 0700), 0);
  st = check_private_dir(m_dir, "remove it");
  EXPECT_EQ(st.problem, PrivateProblem::kDenied);
  EXPECT_NE(st.message.find("permission denied: directory " + m_dir.string() + " belongs to another user"),
            std::string::npos)
      << st.message;
  EXPECT_FALSE(write_private_file(m_dir, "control", "1 start\n", "remove it").ok());
  EXPECT_FALSE(fs::exists(m_dir / "control"));
}

TEST_F(PrivateDirTest, WritesA0600FileAndReplacesTheOldOne) {
  ASSERT_TRUE(make_private_dir(m_dir, "x").ok());
  ASSERT_TRUE(write_private_file(m_dir, "control", "1 start\n", "x").ok());
  EXPECT_EQ(slurp(m_dir / "control"), "1 start\n");
  EXPECT_EQ(mode_of(m_dir / "control"), 0600u);
  ASSERT_TRUE(write_private_file(m_dir, "control", "2 stop\n", "x").ok());
  EXPECT_EQ(slurp(m_dir / "control"), "2 stop\n");
  const PrivateRead r = read_private_file(m_dir, "control", 64, "x");
  ASSERT_TRUE(r.status.ok()) << r.status.message;
  EXPECT_EQ(r.content, "2 stop\n");
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(m_dir)) {
    ++files;
    EXPECT_EQ(e.path().filename(), "control") << "no temporary file is left";
  }
  EXPECT_EQ(files, 1u);
  EXPECT_FALSE(write_private_file(m_dir, "a/b", "x", "x").ok());
  EXPECT_FALSE(write_private_file(m_dir, "..", "x", "x").ok());
}

TEST_F(PrivateDirTest, APlantedLinkIsReplacedNeverFollowed) {
  ASSERT_TRUE(make_private_dir(m_dir, "x").ok());
  // Under the final name and under the temporary names gpuscope used before (NAME.tmp.PID).
  fs::create_symlink(m_victim, m_dir / "control");
  for (int pid = 1; pid < 4096; pid += 1) fs::create_symlink(m_victim, m_dir / ("control.tmp." + std::to_string(pid)));
  if (::getpid() >= 4096) fs::create_symlink(m_victim, m_dir / ("control.tmp." + std::to_string(::getpid())));
  const PrivateRead before = read_private_file(m_dir, "control", 64, "x");
  EXPECT_EQ(before.status.problem, PrivateProblem::kUnsafe);
  EXPECT_NE(before.status.message.find("is a symbolic link"), std::string::npos) << before.status.message;
  EXPECT_TRUE(before.content.empty());
  ASSERT_TRUE(write_private_file(m_dir, "control", "3 start\n", "x").ok());
  EXPECT_EQ(slurp(m_victim), "the victim's file\n");
  EXPECT_FALSE(fs::is_symlink(m_dir / "control"));
  EXPECT_EQ(slurp(m_dir / "control"), "3 start\n");
}

TEST_F(PrivateDirTest, ReadsOnlyRegularFilesOfItsOwnUser) {
  ASSERT_TRUE(make_private_dir(m_dir, "x").ok());
  ASSERT_EQ(::mkfifo((m_dir / "fifo").c_str(), 0600), 0);
  const PrivateRead fifo = read_private_file(m_dir, "fifo", 64, "x");  // does not block
  EXPECT_EQ(fifo.status.problem, PrivateProblem::kUnsafe);
  EXPECT_NE(fifo.status.message.find("is not a regular file"), std::string::npos) << fifo.status.message;
  EXPECT_EQ(read_private_file(m_dir, "none", 64, "x").status.problem, PrivateProblem::kMissing);
  std::ofstream(m_dir / "big") << std::string(100, 'x');
  const PrivateRead big = read_private_file(m_dir, "big", 64, "x");
  EXPECT_EQ(big.status.problem, PrivateProblem::kFailed);
  EXPECT_TRUE(big.content.empty());
  EXPECT_TRUE(read_private_file(m_dir, "big", 100, "x").status.ok());
  if (::geteuid() != 0) GTEST_SKIP() << "a file of another user needs chown (root)";
  ASSERT_TRUE(write_private_file(m_dir, "control", "5 start\n", "x").ok());
  ASSERT_EQ(::chown((m_dir / "control").c_str(), kOtherUid, kOtherUid), 0);
  const PrivateRead foreign = read_private_file(m_dir, "control", 64, "x");
  EXPECT_EQ(foreign.status.problem, PrivateProblem::kUnsafe);
  EXPECT_NE(foreign.status.message.find("belongs to another user (owner 65534"), std::string::npos)
      << foreign.status.message;
  EXPECT_TRUE(foreign.content.empty());
}

TEST_F(PrivateDirTest, NewFileInASharedFolder) {
  ASSERT_EQ(::mkdir(m_dir.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(m_dir.c_str(), 01777), 0);  // like /tmp: others may plant links
  fs::create_symlink(m_victim, m_dir / "requests-42.jsonl");
  ASSERT_TRUE(write_new_file(m_dir, "requests-42.jsonl", "{}\n").ok());
  EXPECT_EQ(slurp(m_victim), "the victim's file\n");
  EXPECT_FALSE(fs::is_symlink(m_dir / "requests-42.jsonl"));
  EXPECT_EQ(slurp(m_dir / "requests-42.jsonl"), "{}\n");
  EXPECT_EQ(mode_of(m_dir / "requests-42.jsonl"), 0600u);
  // The folder itself may not be a link either.
  const fs::path link = m_base / "logs-link";
  fs::create_directory_symlink(m_dir, link);
  EXPECT_EQ(write_new_file(link, "requests-43.jsonl", "{}\n").problem, PrivateProblem::kUnsafe);
  EXPECT_FALSE(fs::exists(m_dir / "requests-43.jsonl"));
}

}  // namespace
}  // namespace gpuscope::store
