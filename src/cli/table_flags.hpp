// table_flags: the two layout options of every gpuscope command that prints tables,
// defined once so each command spells, checks and documents them the same way.
//
//   --timeunit ns|us|ms|s   every time column of the printed reports in that unit (also
//                           "usec", "msec", "sec", "nsec" and "µs": core/report_transform.hpp
//                           parse_time_unit), in every format, as `gpuscope stats` always did.
//                           Without it, csv and json keep each report's own unit and table and
//                           markdown choose a unit per column (render::TableOptions).
//   --name-width N|full     longest name (any text cell) in table format, in characters;
//                           default 80; "full" prints names whole; at least 10. A longer
//                           name is cut in the middle with "…" (render/report_render.hpp).
// A bad value ends parsing with CLI11's ValidationError naming the valid values (exit 105).
#pragma once

#include <CLI/CLI.hpp>

#include <span>
#include <string>

#include "core/report.hpp"
#include "render/report_render.hpp"

namespace gpuscope::cli {

struct TableFlags {
  std::string timeunit;           // ns | us | ms | s; empty: each column's own (csv/json), scaled (table)
  std::string name_width = "80";  // N (>= 10) or "full"
};

/// Adds --timeunit (to `timeunit`) to `sub`.
CLI::Option* add_timeunit_option(CLI::App& sub, std::string& timeunit);
/// Adds --timeunit and --name-width to `sub`.
void add_table_flags(CLI::App& sub, TableFlags& flags);

/// The render layout the flags ask for: times scaled unless --timeunit is given; the name width.
[[nodiscard]] render::TableOptions table_options(const TableFlags& flags);
/// Converts the time columns of `reports` to --timeunit, when given (core::convert_time_unit).
void apply_timeunit(const TableFlags& flags, std::span<Report> reports);

}  // namespace gpuscope::cli
