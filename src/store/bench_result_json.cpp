#include "store/bench_result_json.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <istream>
#include <map>
#include <ostream>
#include <sstream>
#include <system_error>
#include <tuple>

#include <nlohmann/json.hpp>

#include "store/json_fields.hpp"
#include "store/machine_profile_json.hpp"

namespace gpuscope::store {
namespace {

namespace fs = std::filesystem;
using detail::Json;
using detail::json_type_name;
using detail::number_or_null;
using Fields = detail::JsonFields<BenchResultError>;

// Where a field lives in BenchCase: exactly one of the four is set.
struct Access {
  std::string& (*text)(BenchCase&) = nullptr;
  double& (*real)(BenchCase&) = nullptr;
  int& (*integer)(BenchCase&) = nullptr;
  bool& (*flag)(BenchCase&) = nullptr;
};

struct FieldDef {
  BenchCaseField info;
  Access access;
};

#define GPUSCOPE_TEXT(expr)                                      \
  Access {                                                       \
    .text = +[](BenchCase& c) -> std::string& { return c.expr; } \
  }
#define GPUSCOPE_REAL(expr)                                 \
  Access {                                                  \
    .real = +[](BenchCase& c) -> double& { return c.expr; } \
  }
#define GPUSCOPE_INT(expr)                                  \
  Access {                                                  \
    .integer = +[](BenchCase& c) -> int& { return c.expr; } \
  }
#define GPUSCOPE_BOOL(expr)                               \
  Access {                                                \
    .flag = +[](BenchCase& c) -> bool& { return c.expr; } \
  }

using T = FieldType;

// The schema: one row per field, in JSON and CSV order (see the header).
const FieldDef kFields[] = {
    {{"", "op", T::kText, "", true, false, "", "operator: copy, vector_add, gemm, ... (`gpuscope bench list`)"},
     GPUSCOPE_TEXT(op)},
    {{"", "variant", T::kText, "", true, false, "", "implementation of the operator: grid_stride_vec4, cublaslt, ..."},
     GPUSCOPE_TEXT(variant)},
    {{"", "dtype", T::kText, "", true, false, "", "element type: f32, f16, bf16, tf32, ..."}, GPUSCOPE_TEXT(dtype)},
    {{"", "params", T::kText, "", true, false, "",
      "problem parameters as a stable key: \"n=1048576\" or \"m=8192,n=8192,k=8192\""},
     GPUSCOPE_TEXT(params)},
    {{"", "size", T::kReal, "", false, true, "", "the sweep's x value: elements (or M for GEMM-like operators)"},
     GPUSCOPE_REAL(size)},
    {{"work", "bytes_read", T::kReal, "B", false, true, "", "bytes per call that must come from memory"},
     GPUSCOPE_REAL(work.bytes_read)},
    {{"work", "bytes_written", T::kReal, "B", false, true, "", "bytes per call that must go to memory"},
     GPUSCOPE_REAL(work.bytes_written)},
    {{"work", "flops", T::kReal, "FLOP", false, true, "", "FLOP (OP for integer types) per call; an FMA counts 2"},
     GPUSCOPE_REAL(work.flops)},
    {{"work", "compute_ceiling", T::kText, "", false, false, "",
      "the machine-profile ceiling its arithmetic runs on (fp32_fma, tensor_bf16, ...)"},
     GPUSCOPE_TEXT(work.compute_ceiling)},
    {{"timing", "mode", T::kText, "", true, false, "cold|hot|graph|serve",
      "cold: L2 flushed, one call per sample; hot: back-to-back calls; graph: calls replayed from a CUDA graph; "
      "serve: one request (or token) to an HTTP endpoint per sample (`bench serve`)"},
     GPUSCOPE_TEXT(timing.mode)},
    {{"timing", "batch", T::kInteger, "", false, true, "", "calls per sample"}, GPUSCOPE_INT(timing.batch)},
    {{"timing", "samples", T::kInteger, "", false, true, "", "samples taken"}, GPUSCOPE_INT(timing.samples)},
    {{"timing", "min_s", T::kReal, "s", false, true, "", "fastest sample, per call"}, GPUSCOPE_REAL(timing.min_s)},
    {{"timing", "median_s", T::kReal, "s", true, true, "", "median sample, per call: the time every rate uses"},
     GPUSCOPE_REAL(timing.median_s)},
    {{"timing", "mean_s", T::kReal, "s", false, true, "", "mean sample, per call"}, GPUSCOPE_REAL(timing.mean_s)},
    {{"timing", "stddev_s", T::kReal, "s", false, true, "", "unbiased standard deviation of the samples"},
     GPUSCOPE_REAL(timing.stddev_s)},
    {{"timing", "rel_stderr", T::kReal, "", false, true, "",
      "standard error of the median / median, a fraction (McKean-Schrader)"},
     GPUSCOPE_REAL(timing.rel_stderr)},
    {{"timing", "stop", T::kText, "", false, false, "converged|budget|max_samples",
      "why sampling stopped (\"\" when not recorded)"},
     GPUSCOPE_TEXT(timing.stop)},
    {{"timing", "sm_clock_mhz_before", T::kReal, "MHz", false, true, "", "SM clock read before the first sample"},
     GPUSCOPE_REAL(timing.sm_clock_mhz_before)},
    {{"timing", "sm_clock_mhz_after", T::kReal, "MHz", false, true, "", "SM clock read after the last sample"},
     GPUSCOPE_REAL(timing.sm_clock_mhz_after)},
    {{"timing", "throttled_samples", T::kInteger, "", false, true, "",
      "samples during which the SM clock fell below 97 % of its value before the run"},
     GPUSCOPE_INT(timing.throttled_samples)},
    {{"timing", "p90_s", T::kReal, "s", false, true, "", "90th percentile sample (`bench serve`; null for kernels)"},
     GPUSCOPE_REAL(timing.p90_s)},
    {{"timing", "p99_s", T::kReal, "s", false, true, "", "99th percentile sample (`bench serve`; null for kernels)"},
     GPUSCOPE_REAL(timing.p99_s)},
    {{"derived", "bandwidth", T::kReal, "B/s", false, true, "", "(bytes_read + bytes_written) / median_s"},
     GPUSCOPE_REAL(derived.bandwidth)},
    {{"derived", "flop_rate", T::kReal, "FLOP/s", false, true, "", "flops / median_s"},
     GPUSCOPE_REAL(derived.flop_rate)},
    {{"derived", "intensity", T::kReal, "FLOP/B", false, true, "", "flops / (bytes_read + bytes_written)"},
     GPUSCOPE_REAL(derived.intensity)},
    {{"derived", "bound", T::kText, "", false, false, "memory|compute|latency",
      "what limits the case (docs/bench.md, \"Bound\"); \"\" when unknown"},
     GPUSCOPE_TEXT(derived.bound)},
    {{"derived", "ceiling", T::kText, "", false, false, "", "the machine-profile ceiling that bounds it"},
     GPUSCOPE_TEXT(derived.ceiling)},
    {{"derived", "ceiling_value", T::kReal, "", false, true, "",
      "that ceiling's value, in its catalog unit (B/s, FLOP/s or OP/s)"},
     GPUSCOPE_REAL(derived.ceiling_value)},
    {{"derived", "pct_of_ceiling", T::kReal, "%", false, true, "", "achieved rate / ceiling_value x 100"},
     GPUSCOPE_REAL(derived.pct_of_ceiling)},
    {{"derived", "ceiling_source", T::kText, "", false, false, "measured|theoretical",
      "measured: a `gpuscope peak` profile; theoretical: device units x clock"},
     GPUSCOPE_TEXT(derived.ceiling_source)},
    {{"", "verified", T::kBool, "", false, false, "", "the output matched the CPU / cuBLAS / CUB reference"},
     GPUSCOPE_BOOL(verified)},
    {{"", "max_abs_error", T::kReal, "", false, true, "", "largest absolute difference from the reference"},
     GPUSCOPE_REAL(max_abs_error)},
    {{"", "note", T::kText, "", false, false, "", "free text, e.g. why the reference check was skipped"},
     GPUSCOPE_TEXT(note)},
};

#undef GPUSCOPE_TEXT
#undef GPUSCOPE_REAL
#undef GPUSCOPE_INT
#undef GPUSCOPE_BOOL

constexpr const char* kGroups[] = {"work", "timing", "derived"};

bool allowed(std::string_view list, std::string_view value) {
  if (list.empty() || value.empty()) return true;  // "" = not recorded
  while (!list.empty()) {
    const auto bar = list.find('|');
    if (list.substr(0, bar) == value) return true;
    if (bar == std::string_view::npos) break;
    list.remove_prefix(bar + 1);
  }
  return false;
}

// "cold|hot|graph" → "cold, hot, graph" (or "`cold`, `hot`, `graph`" with quote = "`").
std::string allowed_text(std::string_view list, std::string_view quote = "") {
  std::string out(quote);
  for (char ch : list) out += ch == '|' ? std::string(quote) + ", " + std::string(quote) : std::string(1, ch);
  return out + std::string(quote);
}

Json field_to_json(const FieldDef& f, const BenchCase& c) {
  auto& m = const_cast<BenchCase&>(c);  // the accessors only read here
  if (f.access.text) return f.access.text(m);
  if (f.access.real) return number_or_null(f.access.real(m));
  if (f.access.integer) return f.access.integer(m);
  return f.access.flag(m);
}

Json case_to_json(const BenchCase& c) {
  Json j = Json::object();
  for (const FieldDef& f : kFields) {
    if (f.info.group.empty()) {
      j[std::string(f.info.name)] = field_to_json(f, c);
    } else {
      j[std::string(f.info.group)][std::string(f.info.name)] = field_to_json(f, c);
    }
  }
  return j;
}

// Checks a value read into `c` by field `f` (`where` is its path, for the message).
void check_value(const FieldDef& f, BenchCase& c, const std::string& source, const std::string& where) {
  const bool empty_required = f.info.required && !f.info.allowed.empty() && f.access.text && f.access.text(c).empty();
  if (f.access.text && (empty_required || !allowed(f.info.allowed, f.access.text(c)))) {
    throw BenchResultError(source + ": field '" + where + "' is '" + f.access.text(c) + "', expected one of " +
                           allowed_text(f.info.allowed));
  }
  if (!f.info.non_negative) return;
  const double v = f.access.real ? f.access.real(c) : f.access.integer ? f.access.integer(c) : 0.0;
  if (v < 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    throw BenchResultError(source + ": field '" + where + "' is " + buf + ", must be >= 0");
  }
}

BenchCase case_from_json(const Json& j, const std::string& source, const std::string& path) {
  BenchCase c;
  const Fields top(j, source, path);
  for (const char* group : kGroups) {
    if (!top.has(group)) {
      for (const FieldDef& f : kFields)
        if (f.info.group == group && f.info.required)
          top.fail("missing required field '" + top.field(group) + "." + std::string(f.info.name) + "'");
      continue;
    }
    if (!j.at(group).is_object()) top.wrong(group, "an object", j.at(group));
  }
  for (const FieldDef& f : kFields) {
    const bool nested = !f.info.group.empty();
    if (nested && !top.has(std::string(f.info.group).c_str())) continue;
    const Json& obj = nested ? j.at(std::string(f.info.group)) : j;
    const Fields in(obj, source, nested ? top.field(std::string(f.info.group).c_str()) : path);
    const std::string key(f.info.name);
    if (f.access.text) f.access.text(c) = in.text(key.c_str(), f.info.required);
    if (f.access.real) f.access.real(c) = in.number(key.c_str(), f.info.required);
    if (f.access.integer) {
      const int fallback = f.access.integer(c);  // BenchCase's default (batch = 1)
      f.access.integer(c) = in.int32(key.c_str(), fallback, f.info.required);
    }
    if (f.access.flag) f.access.flag(c) = in.flag(key.c_str());
    check_value(f, c, source, in.field(key.c_str()));
  }
  return c;
}

// Two cases with the same key would make compare ambiguous. `name(i)` names case i.
template <class Name>
void check_unique(const std::vector<BenchCase>& cases, const std::string& source, Name name) {
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string>, std::size_t> seen;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const BenchCase& c = cases[i];
    const auto [it, fresh] = seen.emplace(std::tuple{c.op, c.variant, c.dtype, c.params, c.timing.mode}, i);
    if (!fresh) {
      throw BenchResultError(source + ": " + name(i) + " repeats " + name(it->second) + " (" + c.op + " " + c.variant +
                             " " + c.dtype + " " + c.params + " " + c.timing.mode +
                             "): each op, variant, dtype, params and mode may appear once");
    }
  }
}

Json device_to_json(const DeviceFacts& device) {
  MachineProfile p;
  p.device = device;
  return profile_to_json(p)["device"];  // one definition of the device's fields
}

DeviceFacts device_from_json(const Json& device, const std::string& source) {
  const Json wrapper{
      {"format_version", MachineProfile::kFormatVersion}, {"device", device}, {"ceilings", Json::array()}};
  try {
    return profile_from_json(wrapper, source).device;
  } catch (const ProfileError& e) {
    throw BenchResultError(e.what());  // names the source and "device.<field>"
  }
}

// --- CSV -------------------------------------------------------------------------------

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string csv_cell(const FieldDef& f, const BenchCase& c) {
  auto& m = const_cast<BenchCase&>(c);  // the accessors only read here
  if (f.access.text) return csv_quote(f.access.text(m));
  if (f.access.integer) return std::to_string(f.access.integer(m));
  if (f.access.flag) return f.access.flag(m) ? "true" : "false";
  const double v = f.access.real(m);
  if (!std::isfinite(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// One CSV record (RFC 4180); false at the end of input. `line` is advanced past it.
bool read_csv_record(std::istream& in, std::vector<std::string>& cells, int& line, const std::string& source) {
  cells.clear();
  if (in.peek() == std::char_traits<char>::eof()) return false;
  const int start = line;
  std::string cell;
  bool quoted = false;
  for (;;) {
    const int ch = in.get();
    if (ch == std::char_traits<char>::eof()) {
      if (quoted) throw BenchResultError(source + ": line " + std::to_string(start) + ": unterminated quoted field");
      cells.push_back(std::move(cell));
      return true;
    }
    if (quoted) {
      if (ch == '"') {
        if (in.peek() == '"') {
          cell += static_cast<char>(in.get());
        } else {
          quoted = false;
        }
      } else {
        if (ch == '\n') ++line;
        cell += static_cast<char>(ch);
      }
      continue;
    }
    if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      cells.push_back(std::move(cell));
      cell.clear();
    } else if (ch == '\r' && in.peek() == '\n') {
      // CRLF: the '\n' ends the record next.
    } else if (ch == '\n') {
      ++line;
      cells.push_back(std::move(cell));
      return true;
    } else {
      cell += static_cast<char>(ch);
    }
  }
}

}  // namespace

std::span<const BenchCaseField> bench_case_fields() {
  static const std::vector<BenchCaseField> fields = [] {
    std::vector<BenchCaseField> v;
    for (const FieldDef& f : kFields) v.push_back(f.info);
    return v;
  }();
  return fields;
}

std::string bench_schema_markdown() {
  static constexpr const char* kTypeNames[] = {"text", "number", "integer", "boolean"};
  std::string md;
  for (const char* group : {"", "work", "timing", "derived"}) {
    md += std::string("#### `cases[]") + (*group ? std::string(".") + group : std::string()) + "`\n\n";
    md += "| Field | Type | Unit | Required | Values | Meaning |\n|---|---|---|---|---|---|\n";
    for (const FieldDef& f : kFields) {
      if (f.info.group != group) continue;
      const std::string values = !f.info.allowed.empty() ? allowed_text(f.info.allowed, "`")
                                 : f.info.non_negative   ? ">= 0"
                                                         : "";
      md += "| `" + std::string(f.info.name) + "` | " + kTypeNames[static_cast<int>(f.info.type)] + " | " +
            std::string(f.info.unit) + " | " + (f.info.required ? "yes" : "") + " | " + values + " | " +
            std::string(f.info.doc) + " |\n";
    }
    md += "\n";
  }
  return md;
}

nlohmann::ordered_json bench_run_to_json(const BenchRun& run) {
  Json cases = Json::array();
  for (const BenchCase& c : run.cases) cases.push_back(case_to_json(c));
  return Json{{"format_version", run.format_version},
              {"gpuscope_version", run.gpuscope_version},
              {"measured_at", run.measured_at},
              {"device", device_to_json(run.device)},
              {"profile_path", run.profile_path},
              {"cases", std::move(cases)},
              {"warnings", run.warnings}};
}

BenchRun bench_run_from_json(const nlohmann::ordered_json& j, const std::string& source) {
  if (!j.is_object())
    throw BenchResultError(source + ": not a gpuscope bench result (a JSON object expected, found " +
                           json_type_name(j) + ")");
  const Fields top(j, source, "");
  if (!top.has("format_version"))
    top.fail("missing required field 'format_version' (is this a result written by `gpuscope bench --json`?)");
  BenchRun run;
  run.format_version = top.int32("format_version", 0, true);
  if (run.format_version != BenchRun::kFormatVersion)
    throw BenchResultVersionError(source + ": bench result format version " + std::to_string(run.format_version) +
                                      ", but this gpuscope reads version " + std::to_string(BenchRun::kFormatVersion) +
                                      "; run the benchmark again, or read it with the gpuscope that wrote it",
                                  run.format_version, BenchRun::kFormatVersion);
  run.gpuscope_version = top.text("gpuscope_version");
  run.measured_at = top.text("measured_at");
  const Json& device = top.required("device");
  if (!device.is_object()) top.wrong("device", "an object", device);
  run.device = device_from_json(device, source);
  run.profile_path = top.text("profile_path");

  const Json& cases = top.required("cases");
  if (!cases.is_array()) top.wrong("cases", "an array", cases);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string where = "cases[" + std::to_string(i) + "]";
    if (!cases[i].is_object()) top.fail("field '" + where + "' must be an object, found " + json_type_name(cases[i]));
    run.cases.push_back(case_from_json(cases[i], source, where));
  }
  check_unique(run.cases, source, [](std::size_t i) { return "cases[" + std::to_string(i) + "]"; });

  if (top.has("warnings")) {
    const Json& w = j.at("warnings");
    if (!w.is_array()) top.wrong("warnings", "an array of strings", w);
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (!w[i].is_string())
        top.fail("field 'warnings[" + std::to_string(i) + "]' must be a string, found " + json_type_name(w[i]));
      run.warnings.push_back(w[i].get<std::string>());
    }
  }
  return run;
}

BenchRun read_bench_run(const fs::path& path) {
  const Json j = detail::read_json_file<BenchResultError>(path, "bench result", "no such bench result file");
  const std::string source = path.string();
  return bench_run_from_json(j, source);
}

void write_bench_run(const BenchRun& run, const fs::path& path, Overwrite overwrite) {
  detail::write_json_file<BenchResultError>(bench_run_to_json(run), path, "the bench result", overwrite);
}

void write_bench_csv(const BenchRun& run, std::ostream& out) {
  bool first = true;
  for (const FieldDef& f : kFields) {
    out << (first ? "" : ",") << f.info.name;
    first = false;
  }
  out << '\n';
  for (const BenchCase& c : run.cases) {
    first = true;
    for (const FieldDef& f : kFields) {
      out << (first ? "" : ",") << csv_cell(f, c);
      first = false;
    }
    out << '\n';
  }
}

std::vector<BenchCase> read_bench_csv(std::istream& in, const std::string& source) {
  int line = 1;
  std::vector<std::string> header;
  if (!read_csv_record(in, header, line, source))
    throw BenchResultError(source + ": empty file, expected a bench result CSV header");
  // Column index of each field, or -1.
  std::vector<int> column(std::size(kFields), -1);
  for (std::size_t f = 0; f < std::size(kFields); ++f) {
    for (std::size_t h = 0; h < header.size(); ++h)
      if (header[h] == kFields[f].info.name) column[f] = static_cast<int>(h);
    if (column[f] < 0 && kFields[f].info.required)
      throw BenchResultError(source + ": line 1: missing required column '" + std::string(kFields[f].info.name) +
                             "' (is this a CSV written by `gpuscope bench --csv`?)");
  }
  std::vector<BenchCase> cases;
  std::vector<int> lines;  // the line each case starts on
  std::vector<std::string> cells;
  for (int start = line; read_csv_record(in, cells, line, source); start = line) {
    if (cells.size() == 1 && cells[0].empty()) continue;  // blank line
    const std::string at = source + ": line " + std::to_string(start);
    if (cells.size() != header.size())
      throw BenchResultError(at + ": " + std::to_string(cells.size()) + " fields, the header has " +
                             std::to_string(header.size()));
    BenchCase c;
    for (std::size_t f = 0; f < std::size(kFields); ++f) {
      if (column[f] < 0) continue;
      const FieldDef& def = kFields[f];
      const std::string& cell = cells[static_cast<std::size_t>(column[f])];
      const std::string where = "line " + std::to_string(start) + ", column '" + std::string(def.info.name) + "'";
      auto bad = [&](const char* expected) {
        throw BenchResultError(source + ": " + where + ": '" + cell + "' is not " + expected);
      };
      if (def.access.text) {
        def.access.text(c) = cell;
      } else if (def.access.flag) {
        if (cell != "true" && cell != "false" && !cell.empty()) bad("true or false");
        def.access.flag(c) = cell == "true";
      } else if (def.access.integer) {
        if (!cell.empty()) {
          char* end = nullptr;
          const long v = std::strtol(cell.c_str(), &end, 10);
          if (*end != '\0' || v < INT32_MIN || v > INT32_MAX) bad("an integer");
          def.access.integer(c) = static_cast<int>(v);
        }
      } else {
        double v = std::nan("");
        if (!cell.empty()) {
          char* end = nullptr;
          v = std::strtod(cell.c_str(), &end);
          if (*end != '\0') bad("a number");
        }
        def.access.real(c) = v;
      }
      check_value(def, c, source, where);
    }
    cases.push_back(std::move(c));
    lines.push_back(start);
  }
  check_unique(cases, source, [&](std::size_t i) { return "the row at line " + std::to_string(lines[i]); });
  return cases;
}

}  // namespace gpuscope::store
