#include "cli/table_flags.hpp"

#include <stdexcept>

#include "core/report_transform.hpp"

namespace gpuscope::cli {
namespace {

constexpr std::size_t kMinNameWidth = 10;

// "full" → 0 (no limit), else N >= kMinNameWidth; anything else throws std::invalid_argument.
std::size_t parse_name_width(const std::string& text) {
  if (text == "full") return 0;
  std::size_t used = 0;
  unsigned long long n = 0;
  try {
    n = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || text[0] == '-' || n < kMinNameWidth || n > 1'000'000)
    throw std::invalid_argument("'" + text + "' is not a name width; give a number of characters from " +
                                std::to_string(kMinNameWidth) + " to 1000000, or full");
  return static_cast<std::size_t>(n);
}

}  // namespace

CLI::Option* add_timeunit_option(CLI::App& sub, std::string& timeunit) {
  return sub
      .add_option("--timeunit", timeunit,
                  "Time columns in ns, us, ms or s, in every format (default: csv/json as each report gives "
                  "them, tables in a unit chosen per column)")
      ->type_name("ns|us|ms|s")
      ->check(CLI::Validator(
          [](std::string& v) {
            try {
              (void)core::parse_time_unit(v);
              return std::string();
            } catch (const std::invalid_argument& e) {
              return std::string(e.what());
            }
          },
          "", "timeunit"));
}

void add_table_flags(CLI::App& sub, TableFlags& flags) {
  add_timeunit_option(sub, flags.timeunit);
  sub.add_option("--name-width", flags.name_width,
                 "Longest name in table format, in characters (cut in the middle with …), or full")
      ->type_name("N|full")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& v) {
            try {
              (void)parse_name_width(v);
              return std::string();
            } catch (const std::invalid_argument& e) {
              return std::string(e.what());
            }
          },
          "", "name width"));
}

render::TableOptions table_options(const TableFlags& flags) {
  render::TableOptions t;
  t.scale_times = flags.timeunit.empty();
  t.name_width = parse_name_width(flags.name_width);
  return t;
}

void apply_timeunit(const TableFlags& flags, std::span<Report> reports) {
  if (flags.timeunit.empty()) return;
  const TimeUnit unit = parse_time_unit(flags.timeunit);
  for (Report& r : reports) convert_time_unit(r, unit);
}

}  // namespace gpuscope::cli
