#include "cli/option_checks.hpp"

#include <string>

namespace gpuscope::cli {
namespace {

// A validator with no description: the range goes into the type name instead, so --help
// reads "N [1 to 4096]" rather than CLI11's "INT:..." join.
template <class Parse>
CLI::Option* attach(CLI::Option* option, Parse parse, bool rewrite, const std::string& type) {
  CLI::Validator v(
      [parse, rewrite](std::string& text) -> std::string {
        const auto r = parse(text);
        if (!r.ok()) return r.error;
        if (rewrite) text = std::to_string(*r.value);
        return {};
      },
      "");
  // transform, not check: CLI11 hands check() validators a copy of the text, so the
  // rewritten value (e.g. "0.5" seconds -> "500000000" ns) would never reach the option.
  return option->transform(v)->type_name(type);
}

}  // namespace

CLI::Option* duration_ns_option(CLI::Option* option, const core::DurationLimits& limits) {
  return attach(
      option, [limits](const std::string& t) { return core::parse_duration_ns(t, limits); }, true,
      "DURATION [" + core::range_text(limits) + "]");
}

CLI::Option* duration_text_option(CLI::Option* option, const core::DurationLimits& limits) {
  return attach(
      option, [limits](const std::string& t) { return core::parse_duration_ns(t, limits); }, false,
      "DURATION [" + core::range_text(limits) + "]");
}

CLI::Option* count_option(CLI::Option* option, const core::CountLimits& limits, std::string_view type) {
  return attach(
      option, [limits](const std::string& t) { return core::parse_count(t, limits); }, true,
      std::string(type) + " [" + core::range_text(limits) + "]");
}

CLI::Option* real_option(CLI::Option* option, const core::RealLimits& limits, std::string_view type) {
  return attach(
      option, [limits](const std::string& t) { return core::parse_real(t, limits); }, false,
      std::string(type) + " [" + core::range_text(limits) + "]");
}

CLI::Option* size_option(CLI::Option* option, const core::SizeLimits& limits, std::string_view type) {
  return attach(
      option, [limits](const std::string& t) { return core::parse_size(t, limits); }, true,
      std::string(type) + " [" + core::range_text(limits) + "]");
}

}  // namespace gpuscope::cli
