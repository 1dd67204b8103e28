// cli/option_checks: the parsed value reaches the option (CLI11 check() validators see a copy
// of the text, so a rewriting one must be a transform: "--budget 0.5" once parsed to 0 ns
// and "--delay 30" to 30 ns instead of 30 s).
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <cstdint>

#include "cli/option_checks.hpp"

namespace gpuscope::cli {
namespace {

std::int64_t parse_duration(const char* text) {
  CLI::App app;
  std::int64_t ns = -1;
  duration_ns_option(app.add_option("--d", ns), core::DurationLimits{0, 3'600'000'000'000, 1'000'000'000, "1s"});
  const char* argv[] = {"app", "--d", text};
  app.parse(3, const_cast<char**>(argv));
  return ns;
}

TEST(OptionChecks, DurationReachesTheOptionInNanoseconds) {
  EXPECT_EQ(parse_duration("30"), 30'000'000'000);  // a bare number is in the default unit (s)
  EXPECT_EQ(parse_duration("0.5"), 500'000'000);
  EXPECT_EQ(parse_duration("250ms"), 250'000'000);
  EXPECT_EQ(parse_duration("2s"), 2'000'000'000);
  EXPECT_EQ(parse_duration("0"), 0);
}

TEST(OptionChecks, CountReachesTheOption) {
  CLI::App app;
  int n = -1;
  count_option(app.add_option("--n", n), core::CountLimits{0, 1000, "10"});
  const char* argv[] = {"app", "--n", "100"};
  app.parse(3, const_cast<char**>(argv));
  EXPECT_EQ(n, 100);
}

}  // namespace
}  // namespace gpuscope::cli
