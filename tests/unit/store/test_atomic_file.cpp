// store/atomic_file and store/output_lock: a failed write keeps the old file byte for byte
// and leaves no temporary file; an existing file is replaced only with Overwrite::kReplace;
// one writer per trace name, a crashed writer's lock taken over.
#include "store/atomic_file.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/output_lock.hpp"

namespace fs = std::filesystem;

namespace gpuscope::store {
namespace {

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "gpuscope_atomic_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    m_dir = tmpl;
    fs::permissions(m_dir, fs::perms(0755));  // an unprivileged child can enter it
    m_old = std::string("old content\n") + std::string(1000, 'x') + '\0' + "\xff\xfe tail";
  }
  void TearDown() override {
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(m_dir, ec)) fs::permissions(e.path(), fs::perms::all, ec);
    fs::remove_all(m_dir, ec);
  }

  [[nodiscard]] fs::path file(const std::string& name) const { return m_dir / name; }

  static void put(const fs::path& p, const std::string& bytes) {
    std::ofstream out(p, std::ios::binary);
    out << bytes;
  }
  static std::string bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // Every name in `dir` (temporary files are hidden: ".NAME.tmp.XXXXXX").
  static std::vector<std::string> names(const fs::path& dir) {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(dir)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
  }
  // Runs `body` in a forked child (as an unprivileged user when we are root, so that folder
  // permissions apply); returns its exit code, or 128 + the signal that ended it.
  static int in_child(const std::function<int()>& body, bool drop_root = false) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (drop_root && ::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(90);
      int code = 91;
      try {
        code = body();
      } catch (...) {
        code = 92;
      }
      ::_exit(code);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  fs::path m_dir;
  std::string m_old;
};

TEST_F(AtomicFileTest, WritesANewFileWithTheUsualMode) {
  const mode_t mask = ::umask(022);
  write_file_atomically(file("out.json"), Overwrite::kRefuse, std::string_view("{\"a\": 1}\n"));
  ::umask(mask);
  EXPECT_EQ(bytes(file("out.json")), "{\"a\": 1}\n");
  EXPECT_EQ(fs::status(file("out.json")).permissions() & fs::perms::all, fs::perms(0644));  // not mkstemp's 0600
  EXPECT_EQ(names(m_dir), std::vector<std::string>{"out.json"});
}

TEST_F(AtomicFileTest, RefusesAnExistingFileWithoutForce) {
  put(file("out.csv"), m_old);
  try {
    write_file_atomically(file("out.csv"), Overwrite::kRefuse, std::string_view("new"));
    FAIL() << "an existing file was replaced without force";
  } catch (const OutputExistsError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(file("out.csv").string() + " already exists"), std::string::npos) << what;
    EXPECT_NE(what.find("--force-overwrite (-f)"), std::string::npos) << what;
    EXPECT_EQ(e.path(), file("out.csv"));
  }
  EXPECT_EQ(bytes(file("out.csv")), m_old);
  EXPECT_EQ(names(m_dir), std::vector<std::string>{"out.csv"});
  EXPECT_THROW(check_output(file("out.csv"), Overwrite::kRefuse), OutputExistsError);
  EXPECT_NO_THROW(check_output(file("out.csv"), Overwrite::kReplace));
  EXPECT_NO_THROW(check_output(file("absent.csv"), Overwrite::kRefuse));
}

TEST_F(AtomicFileTest, ReplacesWithForceKeepingTheFilesMode) {
  put(file("out.svg"), m_old);
  fs::permissions(file("out.svg"), fs::perms(0640));
  write_file_atomically(file("out.svg"), Overwrite::kReplace, [](std::ostream& out) { out << "<svg/>\n"; });
  EXPECT_EQ(bytes(file("out.svg")), "<svg/>\n");
  EXPECT_EQ(fs::status(file("out.svg")).permissions() & fs::perms::all, fs::perms(0640));
  EXPECT_EQ(names(m_dir), std::vector<std::string>{"out.svg"});
}

TEST_F(AtomicFileTest, AWriterThatThrowsKeepsTheOldFileAndRemovesTheTemporary) {
  put(file("t.json"), m_old);
  struct Damaged : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  EXPECT_THROW(write_file_atomically(file("t.json"), Overwrite::kReplace,
                                     [](std::ostream& out) {
                                       out << std::string(200000, 'y');  // past the stream's buffer: on disk
                                       throw Damaged("table kernels is damaged");
                                     }),
               Damaged);  // the writer's own exception, unchanged
  EXPECT_EQ(bytes(file("t.json")), m_old);
  EXPECT_EQ(names(m_dir), std::vector<std::string>{"t.json"});
}

TEST_F(AtomicFileTest, AnAtomicFileDroppedWithoutCommitIsRemoved) {
  fs::path temp;
  {
    AtomicFile f(file("run.sqlite"), Overwrite::kRefuse);
    temp = f.temp_path();
    EXPECT_EQ(temp.parent_path(), m_dir);
    EXPECT_EQ(temp.filename().string().rfind(".run.sqlite.tmp.", 0), 0u) << temp;
    ASSERT_EQ(::write(f.fd(), "abc", 3), 3);
    EXPECT_TRUE(fs::exists(temp));
    EXPECT_FALSE(fs::exists(file("run.sqlite")));
  }
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_TRUE(names(m_dir).empty());
}

TEST_F(AtomicFileTest, AFileThatAppearsMeanwhileIsNotReplacedWithoutForce) {
  AtomicFile f(file("run.sqlite"), Overwrite::kRefuse);
  ASSERT_EQ(::write(f.fd(), "new", 3), 3);
  put(file("run.sqlite"), m_old);  // another writer got there first
  EXPECT_THROW(f.commit(), OutputExistsError);
  EXPECT_EQ(bytes(file("run.sqlite")), m_old);
  EXPECT_EQ(names(m_dir), std::vector<std::string>{"run.sqlite"});
}

TEST_F(AtomicFileTest, CommitPublishesTheWholeFile) {
  AtomicFile f(file("run.sqlite"), Overwrite::kReplace);
  const std::string content(300000, 'z');
  ASSERT_EQ(::write(f.fd(), content.data(), content.size()), static_cast<ssize_t>(content.size()));
  f.commit();
  EXPECT_EQ(bytes(file("run.sqlite")), content);
  EXPECT_EQ(names(m_dir), std::vector<std::string>{"run.sqlite"});
  EXPECT_THROW(f.commit(), FileWriteError);  // once
}

// A full disk for this process: RLIMIT_FSIZE of 64 KiB, SIGXFSZ ignored (as gpuscope's main
// does), so write(2) fails with EFBIG half-way through a 1 MiB file.
TEST_F(AtomicFileTest, AFileSizeLimitHalfWayKeepsTheOldFileByteForByte) {
  put(file("big.json"), m_old);
  const fs::path target = file("big.json");
  const int code = in_child([&] {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit lim{64 * 1024, 64 * 1024};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return 10;
    try {
      write_file_atomically(target, Overwrite::kReplace, [](std::ostream& out) {
        for (int i = 0; i < 1024; ++i) out << std::string(1023, 'q') << '\n';
      });
    } catch (const FileWriteError& e) {
      const std::string what = e.what();
      return what.find(std::strerror(EFBIG)) != std::string::npos &&
                     what.find("the file that was there is unchanged") != std::string::npos
                 ? 0
                 : 11;
    }
    return 12;  // no error: the limit did not bite
  });
  EXPECT_EQ(code, 0) << "10: setrlimit failed, 11: the message does not name EFBIG and the kept file, 12: no error";
  EXPECT_EQ(bytes(target), m_old);
  EXPECT_EQ(names(m_dir), std::vector<std::string>{"big.json"});
}

TEST_F(AtomicFileTest, AnUnwritableFolderIsAnErrorThatKeepsTheOldFile) {
  const fs::path ro = file("ro");
  fs::create_directory(ro);
  put(ro / "kept.csv", m_old);
  fs::permissions(ro, fs::perms(0555));
  const int code = in_child(
      [&] {
        int failures = 0;
        for (const auto& [name, overwrite] :
             {std::pair{"kept.csv", Overwrite::kReplace}, {"new.csv", Overwrite::kRefuse}}) {
          try {
            write_file_atomically(ro / name, overwrite, std::string_view("new"));
          } catch (const FileWriteError& e) {
            const std::string what = e.what();
            const bool named = what.find(std::strerror(EACCES)) != std::string::npos;
            const bool kept_said =
                what.find(std::string(name) == "kept.csv" ? "the file that was there is unchanged"
                                                          : "nothing was written") != std::string::npos;
            failures += named && kept_said;
          }
        }
        return failures == 2 ? 0 : 20 + failures;
      },
      /*drop_root=*/true);
  EXPECT_EQ(code, 0) << "90: could not drop root; 20+N: N of 2 writes failed with the expected message";
  fs::permissions(ro, fs::perms(0755));
  EXPECT_EQ(bytes(ro / "kept.csv"), m_old);
  EXPECT_EQ(names(ro), std::vector<std::string>{"kept.csv"});
}

TEST_F(AtomicFileTest, FoldersAndEmptyNamesAreRefused) {
  fs::create_directory(file("d"));
  EXPECT_THROW(write_file_atomically(file("d"), Overwrite::kReplace, std::string_view("x")), FileWriteError);
  EXPECT_THROW(check_output("", Overwrite::kReplace), FileWriteError);
  EXPECT_THROW(write_file_atomically(file("no/such/dir/x.json"), Overwrite::kReplace, std::string_view("x")),
               FileWriteError);
}

TEST_F(AtomicFileTest, ASpecialFileIsWrittenDirectlyWithoutForce) {
  EXPECT_NO_THROW(write_file_atomically("/dev/null", Overwrite::kRefuse, std::string_view("discarded")));
  EXPECT_THROW(AtomicFile("/dev/null", Overwrite::kReplace), FileWriteError);  // no file to rename over
  // -o /dev/stdout when stdout is a pipe: /proc/self/fd/N names "pipe:[ino]", no real path.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  write_file_atomically("/proc/self/fd/" + std::to_string(fds[1]), Overwrite::kRefuse, std::string_view("through"));
  ::close(fds[1]);
  char got[16] = {};
  EXPECT_EQ(::read(fds[0], got, sizeof got), 7);
  EXPECT_EQ(std::string(got), "through");
  ::close(fds[0]);
}

TEST_F(AtomicFileTest, ASymbolicLinkIsFollowedAndKept) {
  put(file("real.json"), m_old);
  fs::create_symlink("real.json", file("link.json"));
  EXPECT_THROW(write_file_atomically(file("link.json"), Overwrite::kRefuse, std::string_view("new")),
               OutputExistsError);
  write_file_atomically(file("link.json"), Overwrite::kReplace, std::string_view("new"));
  EXPECT_TRUE(fs::is_symlink(file("link.json")));
  EXPECT_EQ(bytes(file("real.json")), "new");
}

TEST_F(AtomicFileTest, SigintRemovesTheTemporaryFile) {
  put(file("out.json"), m_old);
  const fs::path target = file("out.json");
  const int code = in_child([&] {
    // A Ctrl-C at a terminal: SIGINT at its default. A test run in the background of a
    // shell without job control inherits SIGINT ignored, which gpuscope keeps ignored.
    ::signal(SIGINT, SIG_DFL);
    remove_temporary_files_on_signals();
    write_file_atomically(target, Overwrite::kReplace, [](std::ostream& out) {
      out << std::string(100000, 'p');
      out.flush();
      ::raise(SIGINT);
    });
    return 0;
  });
  EXPECT_EQ(code, 128 + SIGINT);
  EXPECT_EQ(bytes(target), m_old);
  EXPECT_EQ(names(m_dir), std::vector<std::string>{"out.json"});
}

TEST_F(AtomicFileTest, ALongNameStillGetsATemporaryFile) {
  const std::string name(250, 'n');
  write_file_atomically(file(name), Overwrite::kRefuse, std::string_view("x"));
  EXPECT_EQ(bytes(file(name)), "x");
}

// ---- OutputLock ----

TEST_F(AtomicFileTest, ASecondWriterOfTheSameTraceIsRefusedNamingTheFirst) {
  const fs::path db = file("run.sqlite");
  {
    OutputLock first(db);
    EXPECT_EQ(first.path(), file("run.sqlite.lock"));
    try {
      OutputLock second(db);
      FAIL() << "two locks on one trace";
    } catch (const OutputBusyError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("is being written by another gpuscope (pid " + std::to_string(::getpid())), std::string::npos)
          << what;
      EXPECT_NE(what.find("run.sqlite.lock"), std::string::npos) << what;
    }
    OutputLock other(file("other.sqlite"));  // another name is free
  }
  EXPECT_FALSE(fs::exists(file("run.sqlite.lock")));  // removed by its holder
  OutputLock again(db);                               // and free again
}

TEST_F(AtomicFileTest, TheLockOfAKilledWriterIsTakenOver) {
  const fs::path db = file("run.sqlite");
  const int code = in_child([&] {
    OutputLock held(db);
    ::raise(SIGKILL);  // no destructor: the file stays, the kernel drops the flock
    return 0;
  });
  EXPECT_EQ(code, 128 + SIGKILL);
  EXPECT_TRUE(fs::exists(file("run.sqlite.lock")));
  EXPECT_NO_THROW(OutputLock taken(db));
}

TEST_F(AtomicFileTest, StaleTemporariesAreRemovedUnderTheLock) {
  put(file(".run.sqlite.tmp.Ab12Cd"), "half a trace");
  put(file(".run.sqlite.tmp.keep"), "not ours: other length");
  put(file(".other.sqlite.tmp.Ab12Cd"), "another trace's");
  put(file("run.sqlite"), m_old);
  const OutputLock lock(file("run.sqlite"));
  EXPECT_EQ(lock.remove_stale_temporaries(), 1);
  EXPECT_FALSE(fs::exists(file(".run.sqlite.tmp.Ab12Cd")));
  EXPECT_TRUE(fs::exists(file(".run.sqlite.tmp.keep")));
  EXPECT_TRUE(fs::exists(file(".other.sqlite.tmp.Ab12Cd")));
  EXPECT_EQ(bytes(file("run.sqlite")), m_old);
}

}  // namespace
}  // namespace gpuscope::store
