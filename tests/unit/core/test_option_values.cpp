// core/option_values: every kind of option value, good and hostile (nan, inf, negative, 0,
// 1e308, 2^64, trailing garbage), and the wording of the refusals.
#include "core/option_values.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpuscope::core {
namespace {

// The inputs the issue lists, plus a few more every parser must refuse or range-check.
const char* const kHostile[] = {"nan", "NaN", "inf", "-inf", "infinity", "1e308", "18446744073709551616",
                                "-1",  "",    " ",   "abc",  "1e999",    "0x10",  "--5",
                                "+-1", "1 2"};

template <class T>
void expect_refused(const OptionValue<T>& r, std::string_view text) {
  EXPECT_FALSE(r.ok()) << "accepted '" << text << "' as " << *r.value;
  EXPECT_FALSE(r.error.empty());
  EXPECT_NE(r.error.find("'" + std::string(text) + "'"), std::string::npos) << r.error;  // quotes the text
  EXPECT_NE(r.error.find("e.g."), std::string::npos) << r.error;                         // gives an example
}

TEST(OptionValues, DurationsInEveryUnit) {
  EXPECT_EQ(parse_duration_ns("30s").value, 30'000'000'000);
  EXPECT_EQ(parse_duration_ns("250ms").value, 250'000'000);
  EXPECT_EQ(parse_duration_ns(" 250 ms ").value, 250'000'000);
  EXPECT_EQ(parse_duration_ns("10us").value, 10'000);
  EXPECT_EQ(parse_duration_ns("42ns").value, 42);
  EXPECT_EQ(parse_duration_ns("2.5").value, 2'500'000'000);  // bare number: seconds
  EXPECT_EQ(parse_duration_ns("1e-6").value, 1'000);
  EXPECT_EQ(parse_duration_ns("0").value, 0);
  EXPECT_EQ(parse_duration_ns("-0").value, 0);
  EXPECT_EQ(parse_duration_ns("+3s").value, 3'000'000'000);
  EXPECT_EQ(parse_duration_ns("0.1s").value, 100'000'000);  // rounded, not truncated to 99'999'999
  DurationLimits ms;
  ms.bare_unit_ns = 1'000'000;
  EXPECT_EQ(parse_duration_ns("200", ms).value, 200'000'000);
}

TEST(OptionValues, DurationRefusesHostileValues) {
  for (const char* bad : kHostile) expect_refused(parse_duration_ns(bad), bad);
  for (const char* bad : {"30x", "1h", "1.5 sec", "ms", "s", "1e30"}) expect_refused(parse_duration_ns(bad), bad);
  // The wording of the example, without the option name (the caller adds it).
  EXPECT_EQ(parse_duration_ns("nan").error, "'nan' is not a duration; give e.g. 30s or 250ms");
  EXPECT_EQ(option_error("--duration", parse_duration_ns("nan").error),
            "--duration: 'nan' is not a duration; give e.g. 30s or 250ms");
  EXPECT_NE(parse_duration_ns("-1").error.find("negative"), std::string::npos);
  EXPECT_NE(parse_duration_ns("1e308").error.find("64-bit nanoseconds"), std::string::npos);
  EXPECT_NE(parse_duration_ns("18446744073709551616").error.find("64-bit nanoseconds"), std::string::npos);
}

TEST(OptionValues, DurationLimitsAreInclusiveAndStated) {
  DurationLimits l;
  l.max_ns = 1'000'000'000'000'000;  // 10^6 s
  EXPECT_EQ(parse_duration_ns("1000000", l).value, l.max_ns);
  const auto over = parse_duration_ns("1000001", l);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error, "'1000001' is out of range: give 0s to 1000000s, e.g. 30s or 250ms");
  l.min_ns = 10'000'000;
  EXPECT_EQ(range_text(l), "10ms to 1000000s");
  EXPECT_FALSE(parse_duration_ns("9ms", l).ok());
  // The largest duration that fits; one more ns does not.
  EXPECT_EQ(parse_duration_ns("9223372036854775807ns").value, kMaxInt64);  // exact, not via a double
  EXPECT_FALSE(parse_duration_ns("9223372036854775808ns").ok());
  EXPECT_FALSE(parse_duration_ns("9223372036854775807us").ok());
}

TEST(OptionValues, Counts) {
  EXPECT_EQ(parse_count("10").value, 10);
  EXPECT_EQ(parse_count(" 7 ").value, 7);
  EXPECT_EQ(parse_count("+7").value, 7);
  EXPECT_EQ(parse_count("0").value, 0);
  EXPECT_EQ(parse_count("9223372036854775807").value, kMaxInt64);
  for (const char* bad : kHostile) expect_refused(parse_count(bad), bad);
  for (const char* bad : {"1.0", "1e3", "10k", "9223372036854775808", "-"}) expect_refused(parse_count(bad), bad);
  EXPECT_EQ(parse_count("nan").error, "'nan' is not a whole number; give e.g. 10");
  EXPECT_EQ(parse_count("-1").error, "'-1' is negative: give at least 0, e.g. 10");
  const CountLimits session{1, 4096, "64"};
  EXPECT_EQ(parse_count("4096", session).value, 4096);
  EXPECT_EQ(parse_count("0", session).error, "'0' is out of range: give 1 to 4096, e.g. 64");
  EXPECT_EQ(parse_count("18446744073709551616", session).error,
            "'18446744073709551616' is out of range: give 1 to 4096, e.g. 64");
  const CountLimits signed_range{-5, 5, "0"};
  EXPECT_EQ(parse_count("-5", signed_range).value, -5);
  EXPECT_FALSE(parse_count("-6", signed_range).ok());
}

TEST(OptionValues, Reals) {
  EXPECT_DOUBLE_EQ(*parse_real("0.005").value, 0.005);
  EXPECT_DOUBLE_EQ(*parse_real("6.1e14").value, 6.1e14);
  EXPECT_DOUBLE_EQ(*parse_real("-2").value, -2.0);
  EXPECT_DOUBLE_EQ(*parse_real("1e308").value, 1e308);  // finite: the limits decide
  for (const char* bad : {"nan", "inf", "-inf", "infinity", "1e999", "", "abc", "1.5x", "0x10", "+-1"})
    expect_refused(parse_real(bad), bad);
  EXPECT_EQ(parse_real("nan").error, "'nan' is not a finite number; give e.g. 1.5");

  const RealLimits fraction{0.0, 1.0, false, false, "0.005"};
  EXPECT_EQ(range_text(fraction), "above 0 and below 1");
  for (const char* bad : {"0", "1", "-1", "1e308", "18446744073709551616"})
    expect_refused(parse_real(bad, fraction), bad);
  EXPECT_EQ(parse_real("-1", fraction).error, "'-1' is negative: give above 0 and below 1, e.g. 0.005");
  EXPECT_DOUBLE_EQ(*parse_real("0.5", fraction).value, 0.5);

  RealLimits positive;
  positive.min = 0;
  positive.min_inclusive = false;
  EXPECT_EQ(range_text(positive), "above 0");
  EXPECT_FALSE(parse_real("0", positive).ok());
  EXPECT_TRUE(parse_real("1e308", positive).ok());
  EXPECT_EQ(range_text(RealLimits{}), "any finite number");
  EXPECT_EQ(range_text(RealLimits{0, 1, true, true, ""}), "0 to 1");
}

TEST(OptionValues, Sizes) {
  EXPECT_EQ(parse_size("4096").value, 4096);
  EXPECT_EQ(parse_size("2^20").value, 1 << 20);
  EXPECT_EQ(parse_size("64MiB").value, 64 << 20);
  EXPECT_EQ(parse_size("1k").value, 1024);
  EXPECT_EQ(parse_size("4K").value, 4096);
  EXPECT_EQ(parse_size("1G").value, 1 << 30);
  EXPECT_EQ(parse_size("2TiB").value, std::int64_t{2} << 40);
  EXPECT_EQ(parse_size("2^62").value, std::int64_t{1} << 62);
  EXPECT_EQ(parse_size("1^1000").value, 1);
  for (const char* bad : kHostile) expect_refused(parse_size(bad), bad);
  for (const char* bad : {"0", "2^63", "2^70", "2^", "2^-1", "1.5M", "64MB", "8PiB", "x5", "2^62k"})
    expect_refused(parse_size(bad), bad);
  EXPECT_NE(parse_size("64MB").error.find("MiB"), std::string::npos);  // says how to write it
  EXPECT_NE(parse_size("-1").error.find("negative"), std::string::npos);
  EXPECT_EQ(range_text(SizeLimits{}), "1 to 2^62");
}

}  // namespace
}  // namespace gpuscope::core
