// Prints any Report (core/report.hpp) as table, csv, json or markdown.
//
// Output goes only to the std::ostream passed in. Cell conventions per format:
//
//   table     Title line "Title (name)", a blank line, then aligned columns. The
//             header is "Name (unit)" ("Total Time (ns)"; no parentheses for a
//             unit-less column), underlined with dashes. Text is left-aligned,
//             numbers right-aligned. Integers get thousands separators
//             ("1,234,567"), except in identifier columns (ColumnKind::kIdentifier:
//             pids, thread, correlation, device, context and stream ids print as
//             is); reals are fixed-point with a per-column precision chosen from
//             the column's largest magnitude (>= 1000: 1 decimal, >= 10: 2, >= 0.1
//             or all zero: 3, below 0.1: three significant digits of the largest,
//             at most 9 decimals), integer part grouped too. NULL and NaN print
//             "-", infinities "inf"/"-inf". Text longer than kMaxTableTextWidth
//             code points (TableOptions::name_width) is cut in the middle with "…";
//             newlines in text become spaces. After the table, one line per note:
//             "note: ", "WARNING: " or "DATA LOSS: " + text.
//   csv       RFC 4180 quoting (a field holding ',', '"' or a control character --
//             CR, LF, tab, ... kept as data -- is quoted, '"' doubled); lines end in "\n". ONE header row in "Name
//             (unit)" style, no unit row. Integers plain, reals in shortest round-trip form
//             ("0.1", "1234.5678"), NULL and NaN as an empty field, infinities
//             "inf"/"-inf". Title and notes are NOT written (they would break CSV
//             readers); callers that need them use another format.
//   json      {"name","title","columns":[{"name","unit","type"}],"rows":[[...]],
//             "notes":[{"level","text"}]}, type "integer"|"real"|"text"; an
//             identifier column also has "identifier": true; level
//             "info"|"warning"|"data_loss"; cells keep their type, NULL/NaN/inf →
//             null. Pretty-printed (indent 2), newline at the end.
//   markdown  "### Title", a GitHub table (header "Name (unit)", numeric columns
//             right-aligned; markdown punctuation \ | < > * _ [ ] ` ~ in
//             text backslash-escaped so kernel names print verbatim), numbers as in table format but
//             without thousands separators and without truncation; notes follow as
//             list items "- note: ...", "- **WARNING:** ...", "- **DATA LOSS:** ...".
//
// Documents: a command prints ONE document in the format asked for, however many reports it
// holds (render(span, ...)), so a script reads it with one parser call:
//   table, markdown  the reports one after another, a blank line between them (as above).
//   json      {"schema_version": 1, "command": "summary", "reports": {"NAME": REPORT, ...}}:
//             one key per report, in print order, REPORT the per-report object above. A
//             name printed twice gets "NAME#2", "NAME#3", ... Pretty-printed, newline at the end.
//   csv       ONE table. One report (and DocumentOptions::csv_section false): exactly the
//             report's csv above. Otherwise a leading "section" column holding the report's
//             name, then the union of the reports' headers in order of first appearance (a
//             header twice in one report gets two columns); a row leaves the columns of other
//             reports empty. One header row; no blank lines.
// Text is valid UTF-8 in every format, whatever bytes the trace holds (a trace edited after
// import, merged or written by another tool): bytes that are not UTF-8 become U+FFFD
// (core/utf8.hpp) where each format writes text -- one_line (table), markdown_text
// (markdown), the csv field writer, and json's serializer.
// docs/output-formats.md gives the reports of each command.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/report.hpp"

namespace gpuscope::render {

enum class Format { kTable, kCsv, kJson, kMarkdown };

/// Longest text cell, in code points, printed in table format.
inline constexpr std::size_t kMaxTableTextWidth = 80;

/// "table", "csv", "json" or "markdown" → Format. Anything else throws
/// std::invalid_argument: "unknown output format 'x' (valid: table, csv, json, markdown)".
[[nodiscard]] Format parse_format(std::string_view text);
/// The name parse_format() accepts for `format`.
[[nodiscard]] std::string_view format_name(Format format);

/// The shape of the json document below; raised when a key changes meaning or goes away
/// (a new key does not raise it).
inline constexpr int kDocumentSchemaVersion = 1;

/// How table and markdown lay numbers and names out (csv and json ignore it: they keep raw
/// base units, the original column names and whole text).
///   scale_times  time columns (ns, us, ms, s; quantities, not points in time) show in the unit
///                chosen from their values (core/units.hpp column_scale), the header saying it
///                ("Total Time (ms)"). Off when the user asked for one unit (--timeunit).
///   scale_sizes  the same for byte columns (bytes, KB, MB, GB: B, KB, MB, GB, TB).
///   name_width   table only: longest text cell in code points, 0 = no limit (--name-width
///                full). A longer text is cut in the middle (core/units.hpp cut_middle); when two
///                different texts of one column would read the same, each shows instead the
///                part around where it first differs from the other (cut_around).
/// A scaled column's decimals come from its largest displayed magnitude (>= 100: 1, >= 10: 2,
/// else 3; an integer column left in its own unit keeps whole numbers), and a small non-zero
/// value gets more, up to 2 significant digits (never "0.0000"). Columns whose name is
/// "Start", "End" or ends in " At" are points in time and keep their unit.
struct TableOptions {
  bool scale_times = true;
  bool scale_sizes = true;
  std::size_t name_width = kMaxTableTextWidth;
};

struct DocumentOptions {
  std::string_view command;  // the gpuscope command printing it, e.g. "summary"; json "command"
  bool csv_section = false;  // csv: the "section" column even for a single report (for a
                             // command whose number of reports depends on the data)
  TableOptions table;        // table and markdown layout
};

/// One report in `format`; in json the bare per-report object (no document around it).
void render(const Report& report, Format format, std::ostream& out, const TableOptions& table = {});
/// One report as the json object above (for a page that embeds reports: render/html_report.hpp).
[[nodiscard]] nlohmann::ordered_json report_json(const Report& report);
/// Several reports as ONE document of `format` (see "Documents" above).
void render(std::span<const Report> reports, Format format, std::ostream& out, const DocumentOptions& document = {});

/// 1234567 → "1,234,567"; -1000 → "-1,000".
[[nodiscard]] std::string group_thousands(std::int64_t value);

/// Text from the traced program (a kernel name, an NVTX message) on one line for the table
/// format: bytes that are not UTF-8 replaced by U+FFFD, control characters shown escaped
/// (\n, \r, \t, \xNN for the other C0 characters and DEL, \u00NN for the C1 characters
/// U+0080..U+009F), so a name can neither break the layout nor send terminal escape sequences.
[[nodiscard]] std::string one_line(std::string s);

/// The same for markdown: one_line, then the punctuation markdown would act on
/// (\ | < > * _ [ ] ` ~) backslash-escaped, so `vec<float>` prints verbatim.
[[nodiscard]] std::string markdown_text(std::string s);

}  // namespace gpuscope::render
