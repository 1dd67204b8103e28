#include "cli/output_name.hpp"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

namespace gpuscope::cli {
namespace {

const std::map<std::string, std::string> kEnv = {{"SLURM_PROCID", "3"}, {"EMPTY", ""}, {"ODD", "a/b c"}};

[[nodiscard]] std::string expand(std::string_view pattern, std::string_view host = "node01") {
  return expand_output_name(pattern, {host, 4242, [](const char* name) -> const char* {
                                        const auto it = kEnv.find(name);
                                        return it == kEnv.end() ? nullptr : it->second.c_str();
                                      }});
}

[[nodiscard]] std::string error_of(std::string_view pattern) {
  try {
    (void)expand(pattern);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(OutputName, Patterns) {
  EXPECT_EQ(expand("run"), "run");
  EXPECT_EQ(expand("run.%h.%q{SLURM_PROCID}"), "run.node01.3");
  EXPECT_EQ(expand("run-%p"), "run-4242");
  EXPECT_EQ(expand("100%%"), "100%");
  EXPECT_EQ(expand("dir/run.%h", "a/b"), "dir/run.a_b");  // a host name cannot add folders
  EXPECT_EQ(expand("%q{ODD}"), "a_b_c");
  EXPECT_EQ(expand("%h", ""), "host");
}

TEST(OutputName, ErrorsSayWhatToWrite) {
  EXPECT_NE(error_of("run.%q{NOPE}").find("%q{NOPE} names an environment variable that is not set"), std::string::npos);
  EXPECT_NE(error_of("run.%q{EMPTY}").find("not set"), std::string::npos);
  EXPECT_NE(error_of("run.%q").find("%q needs a variable name in braces"), std::string::npos);
  EXPECT_NE(error_of("run.%q{}").find("braces"), std::string::npos);
  EXPECT_NE(error_of("run.%q{OPEN").find("braces"), std::string::npos);
  EXPECT_NE(error_of("run.%x").find("'%x' is not a pattern; use %h"), std::string::npos);
  EXPECT_NE(error_of("run%").find("is not a pattern"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::cli
