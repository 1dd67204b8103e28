#include "store/trace_merge.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "core/nccl.hpp"
#include "store/row_writer.hpp"
#include "store/trace.hpp"

namespace gpuscope::store {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kPidStride = 4194304;  // PID_MAX_LIMIT on 64-bit Linux: no real pid reaches it
constexpr std::int64_t kGpuMetricDeviceStride = 1000;

// Tables merged by hand (not by merge_role's rules).
[[nodiscard]] bool merged_by_hand(std::string_view table) {
  return table == "meta" || table == "strings" || table == "gpu_metric_names" || table == "merged_traces" ||
         table == "merged_pids";
}

struct Ref {
  std::string_view table, column, target;
};
// Columns holding another row's id (the id columns of their own table are found by rule).
constexpr Ref kRowRefs[] = {
    {"kernel_metrics", "profile_id", "kernel_profiles"},
    {"memory_events", "alloc_id", "memory_events"},
    {"nvtx_events", "parent_id", "nvtx_events"},
    {"torch_ops", "nvtx_id", "nvtx_events"},
    {"torch_ops", "parent_op", "nvtx_events"},
    {"torch_ops", "forward_op", "nvtx_events"},
    {"torch_ops", "module_id", "nvtx_events"},
    {"torch_modules", "nvtx_id", "nvtx_events"},
    {"torch_modules", "parent_module", "nvtx_events"},
    {"torch_op_activities", "op_nvtx_id", "nvtx_events"},
    {"api_calls", "py_stack_id", "py_stacks"},
    {"py_stacks", "parent_id", "py_stacks"},
    {"py_stacks", "frame_id", "py_frames"},
    {"py_samples", "py_stack_id", "py_stacks"},
};
constexpr std::pair<std::string_view, std::string_view> kStringRefs[] = {
    {"kernels", "name_id"},
    {"kernels", "short_name_id"},
    {"kernels", "mangled_name_id"},
    {"kernel_profiles", "name_id"},
    {"kernel_profiles", "short_name_id"},
    {"kernel_profiles", "mangled_name_id"},
    {"kernel_metrics", "metric_id"},
    {"api_calls", "name_id"},
    {"py_frames", "file_id"},
    {"py_frames", "function_id"},
    {"nvtx_events", "domain_id"},
    {"nvtx_events", "text_id"},
    {"torch_ops", "name_id"},
    {"torch_modules", "path_id"},
    {"torch_modules", "class_id"},
};
// Columns in ns that are lengths, not moments.
constexpr std::string_view kNsLengths[] = {"interval_ns", "clock_offset_ns"};

[[nodiscard]] std::string quote_sql(std::string_view s) {
  std::string q = "'";
  for (char c : s) {
    q.push_back(c);
    if (c == '\'') q.push_back('\'');
  }
  return q + "'";
}

[[nodiscard]] std::set<std::string> source_columns(Database& out, std::string_view table) {
  std::set<std::string> cols;
  Statement st = out.prepare("SELECT name FROM pragma_table_info(" + quote_sql(table) + ", 'src')");
  while (st.step()) cols.insert(st.column_text(0));
  return cols;
}

// The ends of every rank's NCCL kernels (a rank = a GPU of a process), by start. Names are
// recognised by core::parse_nccl_kernel (both generations, "void " or not), each once.
[[nodiscard]] RankEnds nccl_kernel_ends(Database& trace) {
  std::map<std::int64_t, bool> is_nccl;  // by strings.id
  {
    Statement st =
        trace.prepare("SELECT DISTINCT k.name_id, s.value FROM kernels k JOIN strings s ON s.id = k.name_id");
    while (st.step()) is_nccl[st.column_int(0)] = core::parse_nccl_kernel(st.column_text(1)).has_value();
  }
  Statement st = trace.prepare(
      "SELECT pid, device_id, end_ns, name_id FROM kernels WHERE name_id IS NOT NULL "
      "ORDER BY pid, device_id, start_ns, id");
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::int64_t>> by_rank;
  while (st.step()) {
    const auto it = is_nccl.find(st.column_int(3));
    if (it != is_nccl.end() && it->second) by_rank[{st.column_int(0), st.column_int(1)}].push_back(st.column_int(2));
  }
  RankEnds ends;
  for (auto& [rank, e] : by_rank) ends.push_back(std::move(e));
  return ends;
}

struct Input {
  std::string path;
  Database db;
};

// Opens every input, or throws MergeInputError naming the one that cannot be merged.
[[nodiscard]] std::vector<Input> open_inputs(const std::vector<std::string>& paths, const std::string& output) {
  std::vector<Input> inputs;
  std::set<fs::path> seen;
  std::error_code ec;
  const fs::path out_abs = fs::weakly_canonical(output, ec);
  for (const std::string& path : paths) {
    if (!fs::exists(path, ec)) throw MergeInputError(path + ": no such file; give the .sqlite traces to merge");
    const fs::path abs = fs::weakly_canonical(path, ec);
    if (!seen.insert(abs).second) throw MergeInputError(path + " is given twice; give each trace once");
    if (abs == out_abs)
      throw MergeInputError(path + " is both an input and the output; write the merge elsewhere (-o)");
    try {
      Database db = open_trace(path);
      if (db.has_table("merged_traces") && db.query_int("SELECT COUNT(*) FROM merged_traces").value_or(0) > 0) {
        throw MergeInputError(path +
                              " is itself a merged trace; merge the traces it was made from (its merged_traces table "
                              "lists them)");
      }
      inputs.push_back({path, std::move(db)});
    } catch (const MergeInputError&) {
      throw;
    } catch (const SchemaVersionError& e) {
      throw MergeInputError("cannot merge " + path + ": " + e.what() +
                            " (all inputs must have this gpuscope's schema version)");
    } catch (const DatabaseError& e) {
      throw MergeInputError("cannot merge " + path + ": " + e.what());
    }
  }
  return inputs;
}

class Merger {
 public:
  explicit Merger(Database& out) : m_out(out) {}

  void add(std::size_t index, Input& in, const RankEnds& reference_ends, MergedInput& info);
  void finish(std::size_t inputs);

 private:
  void map_pids(std::size_t index, MergedInput& info);
  void map_strings();
  void copy_table(const TableDef& t, std::size_t index, std::int64_t offset);
  [[nodiscard]] std::string expression(const TableDef& t, const ColumnDef& c, std::size_t index,
                                       std::int64_t offset) const;

  Database& m_out;
  std::set<std::int64_t> m_used_pids;
  std::map<std::string, std::int64_t, std::less<>> m_row_shift;  // by table, for the input being added
  std::vector<std::string> m_hosts;
};

void Merger::map_pids(std::size_t index, MergedInput& info) {
  std::set<std::int64_t> pids;
  for (const TableDef& t : tables()) {
    if (merged_by_hand(t.name) || !source_columns(m_out, t.name).contains("pid")) continue;
    Statement st = m_out.prepare("SELECT DISTINCT pid FROM src." + std::string(t.name) + " WHERE pid IS NOT NULL");
    while (st.step()) pids.insert(st.column_int(0));
  }
  m_out.exec("DELETE FROM temp.merge_pid_map");
  Statement ins = m_out.prepare("INSERT INTO temp.merge_pid_map(old, new) VALUES (?1, ?2)");
  RowWriter<rows::MergedPid> rows(m_out);
  for (std::int64_t pid : pids) {
    std::int64_t mapped = pid;
    for (std::int64_t k = 1; m_used_pids.contains(mapped); ++k) mapped = pid + k * kPidStride;
    if (mapped != pid) ++info.renumbered_pids;
    m_used_pids.insert(mapped);
    ins.bind(1, pid).bind(2, mapped);
    ins.step();
    ins.reset();
    rows.insert({.trace = static_cast<std::int64_t>(index), .original_pid = pid, .pid = mapped});
  }
}

void Merger::map_strings() {
  // One strings row per distinct (value, raw); merge_strings_value makes the lookups cheap.
  m_out.exec(
      "INSERT INTO main.strings(value, raw) SELECT DISTINCT s.value, s.raw FROM src.strings s WHERE NOT EXISTS "
      "(SELECT 1 FROM main.strings m WHERE m.value = s.value AND m.raw IS s.raw)");
  m_out.exec("DELETE FROM temp.merge_str_map");
  m_out.exec(
      "INSERT INTO temp.merge_str_map(old, new) SELECT s.id, (SELECT m.id FROM main.strings m WHERE m.value = "
      "s.value AND m.raw IS s.raw) FROM src.strings s");
  m_out.exec("DELETE FROM temp.merge_metric_map");
  if (!source_columns(m_out, "gpu_metric_names").empty()) {
    m_out.exec(
        "INSERT OR IGNORE INTO main.gpu_metric_names(name, label, unit) SELECT name, label, unit FROM "
        "src.gpu_metric_names");
    m_out.exec(
        "INSERT INTO temp.merge_metric_map(old, new) SELECT s.id, m.id FROM src.gpu_metric_names s JOIN "
        "main.gpu_metric_names m ON m.name = s.name");
  }
}

std::string Merger::expression(const TableDef& t, const ColumnDef& c, std::size_t index, std::int64_t offset) const {
  const std::string col = "s." + std::string(c.name);
  const ColumnMerge m = merge_role(t.name, c);
  switch (m.role) {
    case MergeRole::kCopy:
      return col;
    case MergeRole::kPid:
      return "(SELECT new FROM temp.merge_pid_map WHERE old = " + col + ")";
    case MergeRole::kParentPid:
      return "COALESCE((SELECT new FROM temp.merge_pid_map WHERE old = " + col + "), " + col + ")";
    case MergeRole::kString:
      return "(SELECT new FROM temp.merge_str_map WHERE old = " + col + ")";
    case MergeRole::kGpuMetricNameId:
      return "(SELECT new FROM temp.merge_metric_map WHERE old = " + col + ")";
    case MergeRole::kRowId: {
      const auto it = m_row_shift.find(m.target);
      const std::int64_t shift = it == m_row_shift.end() ? 0 : it->second;
      return col + " + " + std::to_string(shift);
    }
    case MergeRole::kTime:
      return "CASE WHEN " + col + " = 0 THEN 0 ELSE " + col + " + " + std::to_string(offset) + " END";
    case MergeRole::kGpuMetricDevice:
      return col + " + " + std::to_string(static_cast<std::int64_t>(index) * kGpuMetricDeviceStride);
  }
  return col;
}

void Merger::copy_table(const TableDef& t, std::size_t index, std::int64_t offset) {
  const std::set<std::string> have = source_columns(m_out, t.name);
  if (have.empty()) return;  // an older trace without this table
  std::string cols, exprs;
  for (const ColumnDef& c : t.columns) {
    if (!have.contains(std::string(c.name))) continue;  // an older trace without this column: NULL
    if (!cols.empty()) {
      cols += ", ";
      exprs += ", ";
    }
    cols += c.name;
    exprs += expression(t, c, index, offset);
  }
  m_out.exec("INSERT INTO main." + std::string(t.name) + " (" + cols + ") SELECT " + exprs + " FROM src." +
             std::string(t.name) + " AS s");
}

void Merger::add(std::size_t index, Input& in, const RankEnds& reference_ends, MergedInput& info) {
  info.path = in.path;
  info.host = in.db.query_text("SELECT value FROM meta WHERE key = 'host'").value_or("");
  info.processes = in.db.query_int("SELECT COUNT(*) FROM processes").value_or(0);
  if (index == 0) {
    info.method = "reference";
  } else {
    info.offset = estimate_clock_offset(reference_ends, nccl_kernel_ends(in.db));
    info.method = info.offset.matched > 0 ? "nccl_kernel_ends" : "none";
  }
  if (!info.host.empty() && std::find(m_hosts.begin(), m_hosts.end(), info.host) == m_hosts.end())
    m_hosts.push_back(info.host);

  m_out.attach(in.db, "src");
  m_out.exec("BEGIN");
  // Row ids of this input go after those of the inputs before it.
  m_row_shift.clear();
  for (const TableDef& t : tables()) {
    for (const ColumnDef& c : t.columns) {
      if (c.sql_type == "INTEGER PRIMARY KEY" && merge_role(t.name, c).role == MergeRole::kRowId &&
          merge_role(t.name, c).target == t.name) {
        m_row_shift[std::string(t.name)] =
            m_out.query_int("SELECT MAX(" + std::string(c.name) + ") FROM main." + std::string(t.name)).value_or(0);
      }
    }
  }
  map_pids(index, info);
  map_strings();
  if (index == 0) m_out.exec("INSERT INTO main.meta(key, value) SELECT key, value FROM src.meta");
  for (const TableDef& t : tables()) {
    if (!merged_by_hand(t.name)) copy_table(t, index, info.offset.offset_ns);
  }
  insert(m_out, rows::MergedTrace{
                    .trace = static_cast<std::int64_t>(index),
                    .path = info.path,
                    .host = rows::text_or_null(info.host),
                    .processes = info.processes,
                    .clock_offset_ns = info.offset.offset_ns,
                    .offset_method = info.method,
                    .matched_collectives = static_cast<std::int64_t>(info.offset.matched),
                    .residual_median_ns = info.offset.residual_median_ns,
                    .residual_max_ns = info.offset.residual_max_ns,
                    .gpu_metrics_device_base = static_cast<std::int64_t>(index) * kGpuMetricDeviceStride,
                });
  m_out.exec("COMMIT");
  m_out.exec("DETACH DATABASE src");
}

void Merger::finish(std::size_t inputs) {
  m_out.exec("BEGIN");
  std::string hosts;
  for (const std::string& h : m_hosts) hosts += (hosts.empty() ? "" : ",") + h;
  const auto duration = m_out.query_int("SELECT MAX(end_ns) - MIN(start_ns) FROM capture_windows");
  const auto process_span = m_out.query_int("SELECT MAX(end_ns) - MIN(start_ns) FROM processes");
  Statement put = m_out.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)");
  auto set = [&](std::string_view key, const std::string& value) {
    put.bind(1, key).bind(2, std::string_view(value));
    put.step();
    put.reset();
  };
  set("process_count", std::to_string(m_out.query_int("SELECT COUNT(*) FROM processes").value_or(0)));
  set("host", hosts);
  set("duration_ns", std::to_string(duration.value_or(process_span.value_or(0))));
  set("merged_traces", std::to_string(inputs));
  set("clock", "CLOCK_REALTIME ns, CUPTI; hosts aligned by gpuscope merge (merged_traces)");
  m_out.exec("DROP INDEX IF EXISTS merge_strings_value");
  m_out.exec(create_indexes_sql());
  m_out.exec("COMMIT");
}

}  // namespace

ColumnMerge merge_role(std::string_view table, const ColumnDef& column) {
  const std::string_view name = column.name;
  if (name == "pid") return {MergeRole::kPid, {}};
  if (table == "processes" && name == "ppid") return {MergeRole::kParentPid, {}};
  for (const auto& [t, c] : kStringRefs)
    if (t == table && c == name) return {MergeRole::kString, {}};
  for (const Ref& r : kRowRefs)
    if (r.table == table && r.column == name) return {MergeRole::kRowId, r.target};
  if (name == "id" && column.sql_type == "INTEGER PRIMARY KEY") return {MergeRole::kRowId, table};
  if (table == "gpu_metrics" && name == "metric_id") return {MergeRole::kGpuMetricNameId, {}};
  if ((table == "gpu_metrics" || table == "gpu_metrics_sessions") && name == "device_id")
    return {MergeRole::kGpuMetricDevice, {}};
  if (column.unit == "ns" && std::find(std::begin(kNsLengths), std::end(kNsLengths), name) == std::end(kNsLengths))
    return {MergeRole::kTime, {}};
  return {MergeRole::kCopy, {}};
}

MergeResult merge_traces(const std::vector<std::string>& paths, const std::string& output, Overwrite overwrite) {
  if (paths.size() < 2) throw MergeInputError("give two or more traces to merge");
  std::vector<Input> inputs = open_inputs(paths, output);
  std::optional<AtomicFile> file;
  try {
    file.emplace(output, overwrite);
  } catch (const FileWriteError& e) {
    throw DatabaseError(std::string("cannot write the merged trace: ") + e.what());
  }
  MergeResult result;
  result.inputs.resize(inputs.size());
  {
    Database out(file->temp_path().string(), Database::Mode::kReadWriteCreate);
    out.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-262144; PRAGMA temp_store=MEMORY");
    out.exec(create_tables_sql());
    out.exec(
        "CREATE INDEX merge_strings_value ON strings(value); "
        "CREATE TEMP TABLE merge_pid_map(old INTEGER PRIMARY KEY, new INTEGER); "
        "CREATE TEMP TABLE merge_str_map(old INTEGER PRIMARY KEY, new INTEGER); "
        "CREATE TEMP TABLE merge_metric_map(old INTEGER PRIMARY KEY, new INTEGER)");
    const RankEnds reference = nccl_kernel_ends(inputs.front().db);
    Merger merger(out);
    for (std::size_t i = 0; i < inputs.size(); ++i) merger.add(i, inputs[i], reference, result.inputs[i]);
    merger.finish(inputs.size());
  }  // closed before the rename
  inputs.clear();
  try {
    file->commit();
  } catch (const FileWriteError& e) {
    throw DatabaseError(std::string("cannot write the merged trace: ") + e.what());
  }
  return result;
}

}  // namespace gpuscope::store
