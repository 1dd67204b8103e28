// store/run_description: NAME.logs/run.json round trip and its errors.
#include "store/run_description.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "log_builder.hpp"
#include "store/database.hpp"

namespace gpuscope::store {
namespace {

std::filesystem::path dir_of(const test::TempDir& d) { return std::filesystem::path(d.file("x")).parent_path(); }

TEST(RunDescription, RoundTripsEveryField) {
  test::TempDir d;
  ImportOptions run;
  run.command = "python3 'train loop.py' --steps 15";
  run.launched_pid = 4242;
  run.exit_status = 3;
  run.start_time = "2026-11-25T08:09:00+0000";
  run.gpuscope_version = "0.1.0";
  run.trace_sources = "cuda,nvtx";
  run.capture_range = "nvtx:step";
  run.extra_meta = {{"tracer_launch_cost_ns", "2301.5"}, {"cuda_api_calls", "gpu-work"}};
  write_run_description(dir_of(d), run);
  const auto back = read_run_description(dir_of(d));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->command, run.command);
  EXPECT_EQ(back->launched_pid, 4242u);
  EXPECT_EQ(back->exit_status, std::optional<int>(3));
  EXPECT_FALSE(back->term_signal.has_value());
  EXPECT_EQ(back->start_time, run.start_time);
  EXPECT_EQ(back->gpuscope_version, "0.1.0");
  EXPECT_EQ(back->trace_sources, "cuda,nvtx");
  EXPECT_EQ(back->capture_range, "nvtx:step");
  EXPECT_EQ(back->extra_meta, run.extra_meta);  // order kept
  EXPECT_FALSE(std::filesystem::exists(dir_of(d) / "run.json.tmp"));
}

TEST(RunDescription, AbsentFileIsUnknownNotAnError) {
  test::TempDir d;
  EXPECT_FALSE(read_run_description(dir_of(d)).has_value());
}

TEST(RunDescription, BadFilesNameTheProblem) {
  test::TempDir d;
  const auto write = [&](const std::string& text) { std::ofstream(d.file("run.json")) << text; };
  const auto error_of = [&]() -> std::string {
    try {
      (void)read_run_description(dir_of(d));
    } catch (const DatabaseError& e) {
      return e.what();
    }
    return "no error";
  };
  write("{\"format\": \"gpuscope-run/1\", \"launched_pid\": \"12\"}");
  EXPECT_NE(error_of().find("field 'launched_pid' must be an integer, found string"), std::string::npos) << error_of();
  write("{\"format\": \"gpuscope-run/9\"}");
  EXPECT_NE(error_of().find("format 'gpuscope-run/9' is not gpuscope-run/1"), std::string::npos) << error_of();
  write("{\"format\": \"gpuscope-run/1\", \"launched_pid\": -1}");
  EXPECT_NE(error_of().find("'launched_pid' is out of range: -1"), std::string::npos) << error_of();
  write("{\"format\": \"gpuscope-run/1\", \"meta\": {\"k\": 1}}");
  EXPECT_NE(error_of().find("field 'meta.k' must be a string"), std::string::npos) << error_of();
  write("[1, 2");
  EXPECT_NE(error_of().find("not a valid JSON run description"), std::string::npos) << error_of();
  // A number beyond double's range (the DOM parser says only "number overflow"): the field.
  write("{\"format\": \"gpuscope-run/1\", \"meta\": {\"a\": \"x\"}, \"extra\": [0, {\"t\": 1e999}]}");
  EXPECT_NE(error_of().find("in field 'extra[1].t' (byte offset 68): number overflow parsing '1e999'"),
            std::string::npos)
      << error_of();
  write("{\"format\": \"gpuscope-run/1\", \"launched_pid\": 44444444444E444444444}");
  EXPECT_NE(error_of().find("in field 'launched_pid'"), std::string::npos) << error_of();
}

}  // namespace
}  // namespace gpuscope::store
