// Report: the one shape every analysis returns and every renderer prints.
//
// A Report is a named table: typed columns (each with a unit) and rows of cells,
// plus plain-language notes (verdicts, warnings). analyze/ builds Reports from a
// trace; render/ prints any Report as table, csv, json or markdown, so adding a
// report needs no printer code. Pure C++, no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace gpuscope::core {

enum class ColumnType { kInteger, kReal, kText };

/// What a numeric column holds. A quantity (a time, a count, a size) is measured: it
/// gets thousands separators in tables, `--timeunit` converts it and `--sort` orders
/// it descending. An identifier (a pid, thread id, correlation id, device, context or
/// stream id, a return code) only names something: printed as is ("4012345", not
/// "4,012,345"), never converted, sorted ascending.
enum class ColumnKind { kQuantity, kIdentifier };

struct Column {
  std::string name;  // e.g. "Total Time", as nsys names it where it has one
  std::string unit;  // "ns", "%", "bytes", "MB", "GB/s", "" for none
  ColumnType type = ColumnType::kText;
  ColumnKind kind = ColumnKind::kQuantity;
};

/// One cell: empty (NULL), integer, real or text.
using Cell = std::variant<std::monostate, std::int64_t, double, std::string>;
using Row = std::vector<Cell>;

enum class NoteLevel { kInfo, kWarning, kDataLoss };

struct Note {
  NoteLevel level = NoteLevel::kInfo;
  std::string text;
};

struct Report {
  std::string name;   // machine name, e.g. "cuda_gpu_kern_sum"
  std::string title;  // human title, e.g. "CUDA GPU Kernel Summary"
  std::vector<Column> columns;
  std::vector<Row> rows;
  std::vector<Note> notes;  // printed after the table

  /// Adds a column; returns *this for chaining.
  Report& add_column(std::string col_name, std::string unit, ColumnType type, ColumnKind kind = ColumnKind::kQuantity) {
    columns.push_back(Column{std::move(col_name), std::move(unit), type, kind});
    return *this;
  }
  void add_note(NoteLevel level, std::string text) { notes.push_back(Note{level, std::move(text)}); }
};

}  // namespace gpuscope::core

// Declared in gpuscope::core (this folder); the other layers name them gpuscope::NAME.
namespace gpuscope {
using namespace core;  // NOLINT(google-build-using-namespace)
}  // namespace gpuscope
