// store/event_log_writer at a write error: a file size limit (`ulimit -f`, EFBIG and
// SIGXFSZ) stops the log, never the program, and leaves a log readable to its last flush.
#include "store/event_log_writer.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "log_builder.hpp"
#include "store/event_log_reader.hpp"

namespace gpuscope::store {
namespace {

constexpr rlim_t kLimit = 64 * 1024;

// Runs in a forked child under RLIMIT_FSIZE: flushes batches of kernel records until
// the limit stops the log; writes how many records the successful flushes held to
// RECORDS_FILE (small: under the limit). Exit 0 when the writer reported the failure
// and dropped what came after; the parent checks the child was not killed (SIGXFSZ).
[[noreturn]] void write_until_the_limit(const std::string& log, const std::string& records_file) {
  const rlimit lim{kLimit, kLimit};
  if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(10);
  EventLogWriter w;
  std::string err;
  if (!w.open(log, 42, &err)) ::_exit(11);
  std::uint64_t flushed_records = w.records_written();
  int failures = 0;
  for (int batch = 0; batch < 200; ++batch) {
    for (int i = 0; i < 20; ++i) {
      log::KernelRecord k{};
      k.start_ns = 1000 + static_cast<std::uint64_t>(batch * 20 + i);
      k.end_ns = k.start_ns + 10;
      w.add(log::RecordKind::kKernel, k);
    }
    if (w.flush()) {
      flushed_records = w.records_written();
    } else {
      ++failures;
    }
  }
  std::ofstream(records_file) << flushed_records;
  // Stopped for good: every flush after the first failure failed too, nothing was buffered.
  const bool stopped = w.failed() && failures > 0 && w.records_dropped() > 0 && w.pending_bytes() == 0;
  ::_exit(stopped ? 0 : 12);
}

TEST(EventLogWriter, FileSizeLimitStopsTheLogNotTheProgram) {
  test::TempDir dir;
  const std::string log = dir.file("limited.gslog");
  const std::string records_file = dir.file("records.txt");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) write_until_the_limit(log, records_file);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the writing process was killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);

  std::uint64_t flushed = 0;
  std::ifstream(records_file) >> flushed;
  EXPECT_GT(flushed, 100u);  // the batches before the limit were written
  EventLogReader reader;
  ASSERT_TRUE(reader.open(log).ok());
  EventLogVisitor ignore;
  const LogReadStats stats = reader.read(ignore);
  EXPECT_LE(stats.file_bytes, kLimit);
  EXPECT_EQ(stats.truncated_bytes, 0u);  // cut back to the last whole flush
  EXPECT_EQ(stats.records, flushed);     // every record of every successful flush, no more
}

}  // namespace
}  // namespace gpuscope::store
