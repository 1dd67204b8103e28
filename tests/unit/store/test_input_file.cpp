// store/input_file.hpp: readers never block. A FIFO where a reader expects a file (run.json,
// a machine profile, a bench result, a trace, an event log) is refused at once with a message
// naming it; a regular file reads as before.
#include "store/input_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <string>

#include "log_builder.hpp"
#include "store/bench_result_json.hpp"
#include "store/database.hpp"
#include "store/event_log_reader.hpp"
#include "store/machine_profile_json.hpp"
#include "store/run_description.hpp"
#include "store/trace.hpp"

namespace gpuscope::store {
namespace {

using test::TempDir;

// Runs `read`, which must throw quickly (a blocking open would never return) with a message
// naming `path` and saying it is a FIFO.
void expect_refused_fast(const std::string& path, const std::function<void()>& read) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    read();
    ADD_FAILURE() << "reading the FIFO " << path << " must fail";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("is a FIFO, not a regular file"), std::string::npos) << what;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST(InputFile, ARegularFileOpensAndReads) {
  TempDir dir;
  std::ofstream(dir.file("a.json")) << "{\"x\": 1}\n";
  InputFile f = InputFile::open(dir.file("a.json"), "machine profile");
  ASSERT_TRUE(f.ok()) << f.error();
  EXPECT_EQ(f.size(), 9u);
  std::string text;
  ASSERT_TRUE(f.read_all(text));
  EXPECT_EQ(text, "{\"x\": 1}\n");
  std::string error;
  EXPECT_EQ(read_input_file(dir.file("a.json"), "machine profile", error).value_or(""), "{\"x\": 1}\n");
  EXPECT_TRUE(error.empty());
}

TEST(InputFile, SpecialFilesAndMissingOnesAreRefusedWithTheirName) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("p").c_str(), 0600), 0);
  InputFile fifo = InputFile::open(dir.file("p"), "event log");
  EXPECT_FALSE(fifo.ok());
  EXPECT_TRUE(fifo.not_regular());
  EXPECT_EQ(fifo.error(), dir.file("p") +
                              " is a FIFO, not a regular file: gpuscope reads an event log only from a regular "
                              "file (nothing was read)");
  InputFile folder = InputFile::open(dir.file(""), "run description");
  EXPECT_TRUE(folder.not_regular());
  EXPECT_NE(folder.error().find("is a folder, not a regular file"), std::string::npos) << folder.error();
  InputFile device = InputFile::open("/dev/null", "trace");
  EXPECT_NE(device.error().find("is a device, not a regular file"), std::string::npos) << device.error();
  InputFile missing = InputFile::open(dir.file("none"), "trace");
  EXPECT_FALSE(missing.ok());
  EXPECT_FALSE(missing.not_regular());
  EXPECT_EQ(missing.error(), "cannot open the trace " + dir.file("none") + ": No such file or directory");
}

// Every reader of input files goes through it: none waits on a FIFO.
TEST(InputFile, EveryReaderRefusesAFifo) {
  TempDir dir;
  const std::string fifo = dir.file("run.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_refused_fast(fifo, [&] { (void)read_run_description(dir.file("")); });
  expect_refused_fast(fifo, [&] { (void)read_profile(fifo); });
  expect_refused_fast(fifo, [&] { (void)read_bench_run(fifo); });
  expect_refused_fast(fifo, [&] { (void)open_trace(fifo); });
  expect_refused_fast(fifo, [&] {
    EventLogReader reader;
    const LogStatus s = reader.open(fifo);
    EXPECT_EQ(s.kind, LogErrorKind::kNotALog);
    throw std::runtime_error(s.message);
  });
}

}  // namespace
}  // namespace gpuscope::store
