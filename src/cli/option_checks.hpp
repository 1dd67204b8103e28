// option_checks: the numeric options of every gpuscope command, checked by
// core/option_values.hpp while CLI11 parses the command line — before any file is opened
// or the GPU driver is touched, so a typo is reported the same on any machine.
//
// Each helper attaches a CLI11 validator to `option` and writes the accepted range into the
// option's type column of --help ("N [1 to 4096]", "DURATION [0s to 1000000s]"). A refused
// value ends parsing with CLI11's ValidationError, printed as "--duration: 'nan' is not a
// duration; give e.g. 30s or 250ms" (exit code 2, as every parse error: cli/main.cpp).
//
// The validators that convert rewrite the text to the canonical value before CLI11 stores
// it: duration_ns_option() to whole nanoseconds (the option must hold an std::int64_t of
// ns), size_option() to the plain number; the others only check, and CLI11 converts the
// original text into the option's type (the limits must fit that type).
#pragma once

#include <CLI/CLI.hpp>

#include <string_view>

#include "core/option_values.hpp"

namespace gpuscope::cli {

/// A duration stored as whole ns in an std::int64_t ("250ms" → 250000000).
CLI::Option* duration_ns_option(CLI::Option* option, const core::DurationLimits& limits);
/// A duration checked but kept as typed (a std::string option parsed again later, e.g. a
/// time quoted back in a note).
CLI::Option* duration_text_option(CLI::Option* option, const core::DurationLimits& limits);
/// A whole number in the limits (an integer option; the limits must fit its type).
CLI::Option* count_option(CLI::Option* option, const core::CountLimits& limits, std::string_view type = "N");
/// A finite real number in the limits (a double option).
CLI::Option* real_option(CLI::Option* option, const core::RealLimits& limits, std::string_view type = "X");
/// A size ("64MiB", "2^20"), rewritten to the plain number (an integer option).
CLI::Option* size_option(CLI::Option* option, const core::SizeLimits& limits, std::string_view type = "SIZE");

/// The largest value of `int`, for count limits of int options.
inline constexpr std::int64_t kMaxInt = 2147483647;

}  // namespace gpuscope::cli
