#include "store/importer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "core/event_log_format.hpp"
#include "core/version.hpp"
#include "store/database.hpp"
#include "store/event_log_reader.hpp"
#include "store/kernel_names.hpp"
#include "store/schema.hpp"

namespace gpuscope::store {
namespace {

using log::RecordKind;

constexpr std::uint32_t kNotApplicable = 0xffffffffu;  // SyncRecord stream/event
constexpr std::uint64_t kOpenEnd = std::numeric_limits<std::uint64_t>::max();

[[nodiscard]] std::int64_t i64(std::uint64_t v) { return static_cast<std::int64_t>(v); }

// ---- enum -> text, as documented in schema.cpp ----

[[nodiscard]] std::string_view memcpy_kind_text(std::uint8_t k) {
  using K = log::MemcpyKind;
  switch (static_cast<K>(k)) {
    case K::kHtoD: return "HtoD";
    case K::kDtoH: return "DtoH";
    case K::kHtoA: return "HtoA";
    case K::kAtoH: return "AtoH";
    case K::kAtoA: return "AtoA";
    case K::kAtoD: return "AtoD";
    case K::kDtoA: return "DtoA";
    case K::kDtoD: return "DtoD";
    case K::kHtoH: return "HtoH";
    case K::kPtoP: return "PtoP";
    default: return "unknown";
  }
}

[[nodiscard]] std::string_view memory_kind_text(std::uint8_t k) {
  using K = log::MemoryKind;
  switch (static_cast<K>(k)) {
    case K::kPageable: return "pageable";
    case K::kPinned: return "pinned";
    case K::kDevice: return "device";
    case K::kArray: return "array";
    case K::kManaged: return "managed";
    case K::kDeviceStatic: return "device_static";
    case K::kManagedStatic: return "managed_static";
    default: return "unknown";
  }
}

[[nodiscard]] std::string_view sync_type_text(std::uint8_t t) {
  using S = log::SyncType;
  switch (static_cast<S>(t)) {
    case S::kEventSynchronize: return "event_synchronize";
    case S::kStreamWaitEvent: return "stream_wait_event";
    case S::kStreamSynchronize: return "stream_synchronize";
    case S::kContextSynchronize: return "context_synchronize";
    default: return "unknown";
  }
}

// CUpti_ActivityOverheadKind values (cupti_activity.h).
[[nodiscard]] std::string_view overhead_kind_text(std::uint32_t k) {
  switch (k) {
    case 1: return "driver_compiler";
    case 1u << 16: return "cupti_buffer_flush";
    case 2u << 16: return "cupti_instrumentation";
    case 3u << 16: return "cupti_resource";
    case 4u << 16: return "runtime_triggered_module_loading";
    case 5u << 16: return "lazy_function_loading";
    case 6u << 16: return "command_buffer_full";
    case 7u << 16: return "activity_buffer_request";
    default: return "unknown";
  }
}

[[nodiscard]] std::string_view api_domain_text(std::uint8_t d) {
  switch (static_cast<log::ApiDomain>(d)) {
    case log::ApiDomain::kRuntime: return "runtime";
    case log::ApiDomain::kDriver: return "driver";
    default: return "unknown";
  }
}

[[nodiscard]] std::string_view message_severity_text(std::uint8_t s) {
  switch (static_cast<log::Severity>(s)) {
    case log::Severity::kWarning: return "warning";
    case log::Severity::kError: return "error";
    default: return "info";
  }
}

// API calls that launch kernels: a window holding these but no kernel records
// means the kernel activity went elsewhere. Names may carry a "_v7000" suffix.
[[nodiscard]] bool is_kernel_launch(std::string_view name) {
  if (name.find("HostFunc") != std::string_view::npos) return false;
  return name.starts_with("cudaLaunch") || name.starts_with("cuLaunch") ||
         name.find("LaunchKernel") != std::string_view::npos ||
         name.find("GraphLaunch") != std::string_view::npos;
}

[[nodiscard]] std::string uuid_text(const std::uint8_t (&u)[16]) {
  bool all_zero = true;
  for (std::uint8_t b : u) all_zero = all_zero && b == 0;
  if (all_zero) return {};
  char buf[64];
  std::snprintf(buf, sizeof buf,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                u[14], u[15]);
  return buf;
}

// /proc/self/cmdline joins argv with NULs (and may end with one).
[[nodiscard]] std::string cmdline_text(std::string_view raw) {
  while (!raw.empty() && raw.back() == '\0') raw.remove_suffix(1);
  std::string s(raw);
  std::replace(s.begin(), s.end(), '\0', ' ');
  return s;
}

void bind_text_or_null(Statement& st, int i, std::string_view s) {
  if (s.empty()) {
    st.bind_null(i);
  } else {
    st.bind(i, s);
  }
}

void bind_id_or_null(Statement& st, int i, std::int64_t id) {
  if (id == 0) {
    st.bind_null(i);
  } else {
    st.bind(i, id);
  }
}

template <class T>
void bind_opt(Statement& st, int i, const std::optional<T>& v) {
  if (v) {
    st.bind(i, static_cast<std::int64_t>(*v));
  } else {
    st.bind_null(i);
  }
}

// Every insert binds all its parameters, so the bindings need no clearing.
void run(Statement& st) {
  (void)st.step();
  st.rewind();
}

// ---- per-process facts, merged when one pid has several logs (exec) ----

struct ProcessInfo {
  std::uint32_t pid = 0;
  std::optional<log::ProcessRecord> record;
  std::string host, cmdline, exe, collector_version;
  std::uint64_t start_ns = kOpenEnd;
  std::uint64_t end_ns = 0;
  bool ended_cleanly = true;
  std::uint64_t log_bytes = 0;
};

// Capture windows of one process; [start, end), end = kOpenEnd when never stopped.
struct Window {
  std::uint64_t start = 0;
  std::uint64_t end = kOpenEnd;
  std::string reason;
};

struct CaptureEdge {
  std::uint64_t ts = 0;
  bool start = false;
  std::string reason;
};

struct ApiInfo {
  std::uint64_t start_ns = 0;
  std::uint32_t tid = 0;
};

// Pass 1 over a log: what pass 2 must know before it can filter or join.
class ScanVisitor final : public EventLogVisitor {
 public:
  explicit ScanVisitor(const EventLogReader& reader) : m_reader(reader) {}

  void on_process(const log::ProcessRecord& r) override {
    if (!process) process = r;
    see(r.start_ns);
  }
  void on_kernel(const log::KernelRecord& r) override {
    ++kernel_records;
    see(r.start_ns, r.end_ns);
  }
  void on_memcpy(const log::MemcpyRecord& r) override { see(r.start_ns, r.end_ns); }
  void on_memset(const log::MemsetRecord& r) override { see(r.start_ns, r.end_ns); }
  void on_api(const log::ApiRecord& r) override {
    apis[r.correlation_id] = {r.start_ns, r.thread_id};
    see(r.start_ns, r.end_ns);
  }
  void on_sync(const log::SyncRecord& r) override { see(r.start_ns, r.end_ns); }
  void on_nvtx(const log::NvtxRecord& r) override { see(r.ts_ns); }
  void on_overhead(const log::OverheadRecord& r) override { see(r.start_ns, r.end_ns); }
  void on_capture(const log::CaptureRecord& r) override {
    captures.push_back({r.ts_ns, r.state == static_cast<std::uint8_t>(log::CaptureState::kStart),
                        std::string(m_reader.string(r.reason_string))});
    see(r.ts_ns);
  }
  void on_process_end(const log::ProcessEndRecord& r) override {
    has_end = true;
    see(r.ts_ns);
  }

  std::optional<log::ProcessRecord> process;
  bool has_end = false;
  std::uint64_t kernel_records = 0;
  std::uint64_t min_ts = kOpenEnd;
  std::uint64_t max_ts = 0;
  std::vector<CaptureEdge> captures;
  std::unordered_map<std::uint32_t, ApiInfo> apis;  // by correlation_id

 private:
  void see(std::uint64_t t) {
    if (t == 0) return;  // 0 = not recorded
    min_ts = std::min(min_ts, t);
    max_ts = std::max(max_ts, t);
  }
  void see(std::uint64_t a, std::uint64_t b) {
    see(a);
    see(b);
  }
  const EventLogReader& m_reader;
};

class Importer;

// Pass 2 over a log: writes rows, clipped to the capture windows.
class InsertVisitor final : public EventLogVisitor {
 public:
  InsertVisitor(Importer& imp, const EventLogReader& reader, const ScanVisitor& scan,
                std::vector<Window> windows, bool clip)
      : m_imp(imp), m_reader(reader), m_scan(scan), m_windows(std::move(windows)), m_clip(clip),
        m_pid(reader.pid()) {}

  void on_device(const log::DeviceRecord& r) override;
  void on_kernel(const log::KernelRecord& r) override;
  void on_memcpy(const log::MemcpyRecord& r) override;
  void on_memset(const log::MemsetRecord& r) override;
  void on_api(const log::ApiRecord& r) override;
  void on_sync(const log::SyncRecord& r) override;
  void on_nvtx(const log::NvtxRecord& r) override { m_nvtx.push_back(r); }
  void on_nvtx_domain(const log::NvtxDomainRecord& r) override {
    m_domains[r.domain_id] = r.name_string;
  }
  void on_thread_name(const log::ThreadNameRecord& r) override;
  void on_overhead(const log::OverheadRecord& r) override;
  void on_data_loss(const log::DataLossRecord& r) override;
  void on_message(const log::MessageRecord& r) override;
  void on_kernel_profile(const log::KernelProfileRecord& r) override;
  void on_kernel_metric(const log::KernelMetricRecord& r) override;

  /// After the pass: NVTX matching and per-log data_loss rows.
  void finish(bool ended_cleanly);

 private:
  [[nodiscard]] bool in_window(std::uint64_t t) const {
    if (!m_clip) return true;
    for (const Window& w : m_windows) {
      if (t >= w.start && t < w.end) return true;
    }
    return false;
  }
  // GPU work stays if launched by a kept API call or started inside a window.
  [[nodiscard]] bool keep_gpu(std::uint32_t correlation_id, std::uint64_t start) const {
    if (!m_clip || in_window(start)) return true;
    const auto it = m_scan.apis.find(correlation_id);
    return it != m_scan.apis.end() && in_window(it->second.start_ns);
  }
  [[nodiscard]] std::int64_t str(std::uint64_t log_id);
  void seen(std::uint64_t start, std::uint64_t end);
  void insert_nvtx(std::int64_t id, const log::NvtxRecord& open, std::uint32_t end_tid,
                   std::optional<std::uint64_t> end_ns, std::string_view style,
                   std::optional<std::uint32_t> depth, std::int64_t parent_id);

  Importer& m_imp;
  const EventLogReader& m_reader;
  const ScanVisitor& m_scan;
  std::vector<Window> m_windows;
  bool m_clip;
  std::uint32_t m_pid;
  std::vector<std::int64_t> m_string_ids;  // log string id -> strings.id (0 = not yet)
  std::vector<log::NvtxRecord> m_nvtx;
  std::unordered_map<std::uint64_t, std::uint64_t> m_domains;  // NVTX domain -> log string
  std::unordered_map<std::uint64_t, bool> m_launch_names;  // API name string -> launches
  std::unordered_map<std::uint64_t, std::int64_t> m_api_names;  // log string -> strings.id, suffix dropped
  std::map<std::string, std::uint64_t> m_collector_losses;  // what -> count
  std::uint64_t m_launches_kept = 0;
  std::unordered_map<std::uint64_t, std::int64_t> m_profile_ids;  // log profile_id -> kernel_profiles.id

 public:
  std::int64_t clipped = 0;

 private:
  // (demangled, base) strings.id of a kernel's mangled name, demangled once per trace.
  std::pair<std::int64_t, std::int64_t> kernel_names(std::uint64_t log_name, std::int64_t mangled_id);
};

class Importer {
 public:
  Importer(Database& db, const ImportOptions& opts)
      : m_db(db),
        m_opts(opts),
        m_ins_string(db.prepare("INSERT INTO strings(id, value) VALUES (?1, ?2)")),
        m_ins_kernel(db.prepare(
            "INSERT INTO kernels(pid, device_id, context_id, stream_id, correlation_id, start_ns, "
            "end_ns, name_id, short_name_id, mangled_name_id, grid_x, grid_y, grid_z, block_x, "
            "block_y, block_z, cluster_x, cluster_y, cluster_z, registers_per_thread, "
            "static_shared_memory, dynamic_shared_memory, local_memory_per_thread, graph_id, "
            "graph_node_id, launch_type) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
            "?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26)")),
        m_ins_memcpy(db.prepare(
            "INSERT INTO memcpys(pid, device_id, context_id, stream_id, correlation_id, start_ns, "
            "end_ns, bytes, copy_kind, src_kind, dst_kind, src_device_id, dst_device_id, "
            "is_async, graph_id, graph_node_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
            "?11, ?12, ?13, ?14, ?15, ?16)")),
        m_ins_memset(db.prepare(
            "INSERT INTO memsets(pid, device_id, context_id, stream_id, correlation_id, start_ns, "
            "end_ns, bytes, value, memory_kind, graph_id, graph_node_id) VALUES (?1, ?2, ?3, ?4, "
            "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)")),
        m_ins_api(db.prepare(
            "INSERT INTO api_calls(pid, tid, domain, cbid, name_id, start_ns, end_ns, "
            "correlation_id, return_value) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")),
        m_ins_sync(db.prepare(
            "INSERT INTO syncs(pid, tid, context_id, stream_id, event_id, sync_type, start_ns, "
            "end_ns, correlation_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")),
        m_ins_nvtx(db.prepare(
            "INSERT INTO nvtx_events(id, pid, tid, end_tid, domain_id, style, text_id, start_ns, "
            "end_ns, depth, parent_id, color, category) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
            "?9, ?10, ?11, ?12, ?13)")),
        m_ins_overhead(db.prepare(
            "INSERT INTO overheads(pid, overhead_kind, object_id, start_ns, end_ns) VALUES (?1, "
            "?2, ?3, ?4, ?5)")),
        m_ins_message(db.prepare(
            "INSERT INTO messages(pid, ts_ns, severity, text) VALUES (?1, ?2, ?3, ?4)")),
        m_ins_profile(db.prepare(
            "INSERT INTO kernel_profiles(pid, device_id, context_id, stream_id, correlation_id, "
            "launch_index, launch_ns, name_id, short_name_id, mangled_name_id, grid_x, grid_y, grid_z, "
            "block_x, block_y, block_z, registers_per_thread, static_shared_memory, "
            "dynamic_shared_memory, local_memory_per_thread, metric_set, passes) VALUES (?1, ?2, ?3, "
            "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)")),
        m_ins_metric(db.prepare("INSERT INTO kernel_metrics(profile_id, metric_id, value) VALUES (?1, ?2, ?3)")) {}

  void import_log(const std::string& path);
  void finish();

  [[nodiscard]] std::int64_t intern(std::string_view s) {
    if (s.empty()) return 0;
    const auto it = m_strings.find(s);
    if (it != m_strings.end()) return it->second;
    const std::int64_t id = static_cast<std::int64_t>(m_strings.size()) + 1;
    m_strings.emplace(std::string(s), id);
    m_ins_string.bind(1, id).bind(2, s);
    run(m_ins_string);
    ++m_result.rows.strings;
    return id;
  }

  void add_data_loss(std::optional<std::uint32_t> pid, std::string what, std::uint64_t count,
                     std::string severity, std::string detail) {
    if (severity != "info") {
      m_result.warnings.push_back((pid ? "process " + std::to_string(*pid) + ": " : std::string()) +
                                  detail);
    }
    m_result.data_loss.push_back(
        {pid, std::move(what), count, std::move(severity), std::move(detail)});
  }

  void seen(std::uint64_t start, std::uint64_t end) {
    m_first_ns = std::min(m_first_ns, start);
    m_last_ns = std::max(m_last_ns, std::max(start, end));
  }

  void add_thread(std::uint32_t pid, std::uint32_t tid) { m_threads.emplace(pid, tid); }
  void name_thread(std::uint32_t pid, std::uint32_t tid, std::string name) {
    m_threads.emplace(pid, tid);
    m_thread_names[{pid, tid}] = std::move(name);
  }
  void add_device(std::uint32_t pid, const log::DeviceRecord& r, std::string name) {
    if (m_devices.emplace(pid, r.device_id).second) m_device_rows.push_back({pid, r, std::move(name)});
  }

  [[nodiscard]] ImportResult take_result() { return std::move(m_result); }

  ImportResult m_result;
  std::int64_t m_next_nvtx_id = 1;

 private:
  friend class InsertVisitor;
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct DeviceRow {
    std::uint32_t pid;
    log::DeviceRecord record;
    std::string name;
  };

  Database& m_db;
  const ImportOptions& m_opts;
  std::unordered_map<std::string, std::int64_t, Hash, std::equal_to<>> m_strings;
  std::map<std::uint32_t, ProcessInfo> m_processes;
  std::set<std::pair<std::uint32_t, std::uint32_t>> m_threads;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> m_thread_names;
  std::set<std::pair<std::uint32_t, std::uint32_t>> m_devices;
  std::vector<DeviceRow> m_device_rows;
  std::vector<std::pair<std::uint32_t, Window>> m_windows;  // end already resolved
  // strings.id of a mangled name -> (demangled id, base name id): demangle once.
  std::unordered_map<std::int64_t, std::pair<std::int64_t, std::int64_t>> m_kernel_names;
  std::uint64_t m_first_ns = kOpenEnd;
  std::uint64_t m_last_ns = 0;

  Statement m_ins_string, m_ins_kernel, m_ins_memcpy, m_ins_memset, m_ins_api, m_ins_sync,
      m_ins_nvtx, m_ins_overhead, m_ins_message, m_ins_profile, m_ins_metric;
};

// ---- InsertVisitor ----

std::int64_t InsertVisitor::str(std::uint64_t log_id) {
  if (log_id == 0) return 0;
  if (log_id < m_string_ids.size() && m_string_ids[log_id] != 0) return m_string_ids[log_id];
  const std::int64_t id = m_imp.intern(m_reader.string(log_id));
  if (log_id < (1u << 24)) {
    if (log_id >= m_string_ids.size()) m_string_ids.resize(log_id + 1, 0);
    m_string_ids[log_id] = id;
  }
  return id;
}

void InsertVisitor::seen(std::uint64_t start, std::uint64_t end) { m_imp.seen(start, end); }

void InsertVisitor::on_device(const log::DeviceRecord& r) {
  m_imp.add_device(m_pid, r, std::string(m_reader.string(r.name_string)));
}

void InsertVisitor::on_kernel(const log::KernelRecord& r) {
  if (!keep_gpu(r.correlation_id, r.start_ns)) {
    ++clipped;
    return;
  }
  const std::int64_t mangled_id = str(r.name_string);
  const auto names = kernel_names(r.name_string, mangled_id);
  Statement& st = m_imp.m_ins_kernel;
  st.bind(1, i64(m_pid)).bind(2, i64(r.device_id)).bind(3, i64(r.context_id));
  st.bind(4, i64(r.stream_id)).bind(5, i64(r.correlation_id));
  st.bind(6, i64(r.start_ns)).bind(7, i64(r.end_ns));
  bind_id_or_null(st, 8, names.first);
  bind_id_or_null(st, 9, names.second);
  bind_id_or_null(st, 10, mangled_id);
  for (int i = 0; i < 3; ++i) {
    st.bind(11 + i, std::int64_t{r.grid[i]});
    st.bind(14 + i, std::int64_t{r.block[i]});
    st.bind(17 + i, i64(r.cluster[i]));
  }
  st.bind(20, i64(r.registers_per_thread)).bind(21, std::int64_t{r.static_shared_memory});
  st.bind(22, std::int64_t{r.dynamic_shared_memory}).bind(23, i64(r.local_memory_per_thread));
  bind_id_or_null(st, 24, i64(r.graph_id));
  bind_id_or_null(st, 25, i64(r.graph_node_id));
  st.bind(26, i64(r.launch_type));
  run(st);
  ++m_imp.m_result.rows.kernels;
  seen(r.start_ns, r.end_ns);
}

std::pair<std::int64_t, std::int64_t> InsertVisitor::kernel_names(std::uint64_t log_name, std::int64_t mangled_id) {
  auto [it, added] = m_imp.m_kernel_names.try_emplace(mangled_id, 0, 0);
  if (added && mangled_id != 0) {
    const std::string demangled = demangle(m_reader.string(log_name));
    it->second = {m_imp.intern(demangled), m_imp.intern(base_name(demangled))};
  }
  return it->second;
}

// Profiled launches are kept whole (no capture-window clipping: `gpuscope kernels`
// chooses its launches with its own filters).
void InsertVisitor::on_kernel_profile(const log::KernelProfileRecord& r) {
  const std::int64_t mangled_id = str(r.name_string);
  const auto names = kernel_names(r.name_string, mangled_id);
  Statement& st = m_imp.m_ins_profile;
  st.bind(1, i64(m_pid)).bind(2, i64(r.device_id)).bind(3, i64(r.context_id));
  if (r.stream_id != 0xffffffffu) st.bind(4, i64(r.stream_id));
  st.bind(5, i64(r.correlation_id)).bind(6, i64(r.launch_index)).bind(7, i64(r.launch_ns));
  bind_id_or_null(st, 8, names.first);
  bind_id_or_null(st, 9, names.second);
  bind_id_or_null(st, 10, mangled_id);
  auto known = [&](int i, std::int32_t v) {
    if (v >= 0) st.bind(i, std::int64_t{v});
  };
  for (int i = 0; i < 3; ++i) {
    known(11 + i, r.grid[i]);
    known(14 + i, r.block[i]);
  }
  known(17, r.registers_per_thread);
  known(18, r.static_shared_memory);
  known(19, r.dynamic_shared_memory);
  known(20, r.local_memory_per_thread);
  const std::string_view set = m_reader.string(r.metric_set_string);
  if (!set.empty()) st.bind(21, set);
  st.bind(22, i64(r.passes));
  (void)st.step();
  st.reset();  // not every column is bound on every row: clear to NULL
  m_profile_ids[r.profile_id] = m_imp.m_db.last_insert_rowid();
  ++m_imp.m_result.rows.kernel_profiles;
  seen(r.launch_ns, r.launch_ns);
}

void InsertVisitor::on_kernel_metric(const log::KernelMetricRecord& r) {
  const auto it = m_profile_ids.find(r.profile_id);
  if (it == m_profile_ids.end()) return;  // its launch record was malformed
  Statement& st = m_imp.m_ins_metric;
  st.bind(1, it->second).bind(2, str(r.metric_string)).bind(3, r.value);
  run(st);
  ++m_imp.m_result.rows.kernel_metrics;
}

void InsertVisitor::on_memcpy(const log::MemcpyRecord& r) {
  if (!keep_gpu(r.correlation_id, r.start_ns)) {
    ++clipped;
    return;
  }
  Statement& st = m_imp.m_ins_memcpy;
  st.bind(1, i64(m_pid)).bind(2, i64(r.device_id)).bind(3, i64(r.context_id));
  st.bind(4, i64(r.stream_id)).bind(5, i64(r.correlation_id));
  st.bind(6, i64(r.start_ns)).bind(7, i64(r.end_ns)).bind(8, i64(r.bytes));
  st.bind(9, memcpy_kind_text(r.copy_kind)).bind(10, memory_kind_text(r.src_kind));
  st.bind(11, memory_kind_text(r.dst_kind));
  st.bind(12, i64(r.src_device_id)).bind(13, i64(r.dst_device_id)).bind(14, i64(r.is_async));
  bind_id_or_null(st, 15, i64(r.graph_id));
  bind_id_or_null(st, 16, i64(r.graph_node_id));
  run(st);
  ++m_imp.m_result.rows.memcpys;
  seen(r.start_ns, r.end_ns);
}

void InsertVisitor::on_memset(const log::MemsetRecord& r) {
  if (!keep_gpu(r.correlation_id, r.start_ns)) {
    ++clipped;
    return;
  }
  Statement& st = m_imp.m_ins_memset;
  st.bind(1, i64(m_pid)).bind(2, i64(r.device_id)).bind(3, i64(r.context_id));
  st.bind(4, i64(r.stream_id)).bind(5, i64(r.correlation_id));
  st.bind(6, i64(r.start_ns)).bind(7, i64(r.end_ns)).bind(8, i64(r.bytes));
  st.bind(9, i64(r.value)).bind(10, memory_kind_text(r.memory_kind));
  bind_id_or_null(st, 11, i64(r.graph_id));
  bind_id_or_null(st, 12, i64(r.graph_node_id));
  run(st);
  ++m_imp.m_result.rows.memsets;
  seen(r.start_ns, r.end_ns);
}

void InsertVisitor::on_api(const log::ApiRecord& r) {
  if (!in_window(r.start_ns)) {
    ++clipped;
    return;
  }
  auto [launch, added] = m_launch_names.try_emplace(r.name_string, false);
  if (added) launch->second = is_kernel_launch(m_reader.string(r.name_string));
  if (launch->second) ++m_launches_kept;

  Statement& st = m_imp.m_ins_api;
  st.bind(1, i64(m_pid)).bind(2, i64(r.thread_id)).bind(3, api_domain_text(r.domain));
  st.bind(4, i64(r.cbid));
  auto [api_name, new_name] = m_api_names.try_emplace(r.name_string, 0);
  if (new_name) api_name->second = m_imp.intern(api_function_name(m_reader.string(r.name_string)));
  bind_id_or_null(st, 5, api_name->second);
  st.bind(6, i64(r.start_ns)).bind(7, i64(r.end_ns)).bind(8, i64(r.correlation_id));
  st.bind(9, std::int64_t{r.return_value});
  run(st);
  ++m_imp.m_result.rows.api_calls;
  m_imp.add_thread(m_pid, r.thread_id);
  seen(r.start_ns, r.end_ns);
}

void InsertVisitor::on_sync(const log::SyncRecord& r) {
  if (!in_window(r.start_ns)) {
    ++clipped;
    return;
  }
  Statement& st = m_imp.m_ins_sync;
  st.bind(1, i64(m_pid));
  const auto api = m_scan.apis.find(r.correlation_id);
  if (api != m_scan.apis.end()) {
    st.bind(2, i64(api->second.tid));
  } else {
    st.bind_null(2);
  }
  st.bind(3, i64(r.context_id));
  if (r.stream_id == kNotApplicable) {
    st.bind_null(4);
  } else {
    st.bind(4, i64(r.stream_id));
  }
  if (r.event_id == kNotApplicable) {
    st.bind_null(5);
  } else {
    st.bind(5, i64(r.event_id));
  }
  st.bind(6, sync_type_text(r.sync_type));
  st.bind(7, i64(r.start_ns)).bind(8, i64(r.end_ns)).bind(9, i64(r.correlation_id));
  run(st);
  ++m_imp.m_result.rows.syncs;
  seen(r.start_ns, r.end_ns);
}

void InsertVisitor::on_thread_name(const log::ThreadNameRecord& r) {
  m_imp.name_thread(m_pid, r.thread_id, std::string(m_reader.string(r.name_string)));
}

void InsertVisitor::on_overhead(const log::OverheadRecord& r) {
  if (!in_window(r.start_ns)) {
    ++clipped;
    return;
  }
  Statement& st = m_imp.m_ins_overhead;
  st.bind(1, i64(m_pid)).bind(2, overhead_kind_text(r.overhead_kind));
  st.bind(3, i64(r.thread_or_device_id)).bind(4, i64(r.start_ns)).bind(5, i64(r.end_ns));
  run(st);
  ++m_imp.m_result.rows.overheads;
}

void InsertVisitor::on_data_loss(const log::DataLossRecord& r) {
  std::string what(m_reader.string(r.what_string));
  if (what.empty()) what = "collector_data_loss";
  m_collector_losses[what] += r.count;
}

void InsertVisitor::on_message(const log::MessageRecord& r) {
  Statement& st = m_imp.m_ins_message;
  st.bind(1, i64(m_pid)).bind(2, i64(r.ts_ns)).bind(3, message_severity_text(r.severity));
  st.bind(4, m_reader.string(r.text_string));
  run(st);
  ++m_imp.m_result.rows.messages;
}

void InsertVisitor::insert_nvtx(std::int64_t id, const log::NvtxRecord& open,
                                std::uint32_t end_tid, std::optional<std::uint64_t> end_ns,
                                std::string_view style, std::optional<std::uint32_t> depth,
                                std::int64_t parent_id) {
  Statement& st = m_imp.m_ins_nvtx;
  st.bind(1, id).bind(2, i64(m_pid)).bind(3, i64(open.thread_id)).bind(4, i64(end_tid));
  std::int64_t domain = 0;
  if (open.domain_id != 0) {
    const auto d = m_domains.find(open.domain_id);
    if (d != m_domains.end()) domain = str(d->second);
  }
  bind_id_or_null(st, 5, domain);
  st.bind(6, style);
  bind_id_or_null(st, 7, str(open.message_string));
  st.bind(8, i64(open.ts_ns));
  bind_opt(st, 9, end_ns);
  bind_opt(st, 10, depth);
  bind_id_or_null(st, 11, parent_id);
  if (open.has_color) {
    st.bind(12, i64(open.color));
  } else {
    st.bind_null(12);
  }
  st.bind(13, i64(open.category));
  run(st);
  ++m_imp.m_result.rows.nvtx_events;
  m_imp.add_thread(m_pid, open.thread_id);
  m_imp.add_thread(m_pid, end_tid);
  seen(open.ts_ns, end_ns.value_or(open.ts_ns));
}

void InsertVisitor::finish(bool ended_cleanly) {
  // NVTX: match in time order (the writer may interleave threads' batches).
  std::stable_sort(m_nvtx.begin(), m_nvtx.end(),
                   [](const log::NvtxRecord& a, const log::NvtxRecord& b) { return a.ts_ns < b.ts_ns; });
  struct Open {
    std::int64_t id;  // 0 = outside the capture windows, not written
    log::NvtxRecord rec;
    std::uint32_t depth;
    std::int64_t parent_id;
  };
  struct KeyHash {
    std::size_t operator()(const std::pair<std::uint32_t, std::uint64_t>& k) const {
      return std::hash<std::uint64_t>{}(k.second * 0x9e3779b97f4a7c15ull ^ k.first);
    }
  };
  std::unordered_map<std::pair<std::uint32_t, std::uint64_t>, std::vector<Open>, KeyHash> stacks;
  std::map<std::uint64_t, Open> started;  // by range id
  std::uint64_t unmatched_pops = 0, unmatched_ends = 0, unclosed = 0;
  auto new_id = [&](std::uint64_t ts) -> std::int64_t {
    if (!in_window(ts)) {
      ++clipped;
      return 0;
    }
    return m_imp.m_next_nvtx_id++;
  };
  using T = log::NvtxEventType;
  for (const log::NvtxRecord& r : m_nvtx) {
    auto& stack = stacks[{r.thread_id, r.domain_id}];
    switch (static_cast<T>(r.type)) {
      case T::kPush: {
        const std::int64_t parent = stack.empty() ? 0 : stack.back().id;
        stack.push_back({new_id(r.ts_ns), r, static_cast<std::uint32_t>(stack.size()), parent});
        break;
      }
      case T::kPop: {
        if (stack.empty()) {
          ++unmatched_pops;
          break;
        }
        const Open o = stack.back();
        stack.pop_back();
        if (o.id != 0) insert_nvtx(o.id, o.rec, r.thread_id, r.ts_ns, "PushPop", o.depth, o.parent_id);
        break;
      }
      case T::kStart: {
        if (const auto old = started.find(r.range_id); old != started.end()) {
          // A reused range id: the earlier range was never ended.
          if (old->second.id != 0) {
            ++unclosed;
            insert_nvtx(old->second.id, old->second.rec, old->second.rec.thread_id, std::nullopt,
                        "StartEnd", std::nullopt, 0);
          }
          started.erase(old);
        }
        started.emplace(r.range_id, Open{new_id(r.ts_ns), r, 0, 0});
        break;
      }
      case T::kEnd: {
        const auto it = started.find(r.range_id);
        if (it == started.end()) {
          ++unmatched_ends;
          break;
        }
        if (it->second.id != 0) {
          insert_nvtx(it->second.id, it->second.rec, r.thread_id, r.ts_ns, "StartEnd", std::nullopt, 0);
        }
        started.erase(it);
        break;
      }
      case T::kMark: {
        const std::int64_t id = new_id(r.ts_ns);
        if (id != 0) {
          insert_nvtx(id, r, r.thread_id, std::nullopt, "Mark", std::nullopt,
                      stack.empty() ? 0 : stack.back().id);
        }
        break;
      }
      default: break;
    }
  }
  for (auto& [key, stack] : stacks) {
    for (const Open& o : stack) {
      if (o.id == 0) continue;
      ++unclosed;
      insert_nvtx(o.id, o.rec, o.rec.thread_id, std::nullopt, "PushPop", o.depth, o.parent_id);
    }
  }
  for (const auto& [range, o] : started) {
    if (o.id == 0) continue;
    ++unclosed;
    insert_nvtx(o.id, o.rec, o.rec.thread_id, std::nullopt, "StartEnd", std::nullopt, 0);
  }
  m_nvtx.clear();

  const std::string proc = "process " + std::to_string(m_pid);
  if (unmatched_pops > 0) {
    m_imp.add_data_loss(m_pid, "unmatched_nvtx_pop", unmatched_pops, "warning",
                        std::to_string(unmatched_pops) +
                            " nvtxRangePop calls had no open push range on their thread and "
                            "domain; they were ignored (unbalanced push/pop in the program)");
  }
  if (unmatched_ends > 0) {
    m_imp.add_data_loss(m_pid, "unmatched_nvtx_end", unmatched_ends, "warning",
                        std::to_string(unmatched_ends) +
                            " nvtxRangeEnd calls had no matching nvtxRangeStart; they were ignored");
  }
  if (unclosed > 0) {
    m_imp.add_data_loss(
        m_pid, "unclosed_nvtx_range", unclosed, ended_cleanly ? "warning" : "info",
        std::to_string(unclosed) +
            (ended_cleanly ? " NVTX ranges were never closed (missing pop/end); they have end_ns NULL"
                           : " NVTX ranges were still open when the process died; they have "
                             "end_ns NULL"));
  }
  for (const auto& [what, count] : m_collector_losses) {
    std::string detail;
    if (what == "cupti_dropped_records") {
      detail = "CUPTI dropped " + std::to_string(count) +
               " activity records (its buffers filled faster than they were drained): the GPU "
               "timeline has gaps; trace fewer activity kinds or a shorter range";
    } else {
      detail = "the collector reported " + std::to_string(count) + " lost (" + what + ")";
    }
    m_imp.add_data_loss(m_pid, what, count, "data_loss", std::move(detail));
  }
  if (m_launches_kept > 0 && m_scan.kernel_records == 0) {
    m_imp.add_data_loss(m_pid, "missing_kernel_records", m_launches_kept, "data_loss",
                        std::to_string(m_launches_kept) +
                            " kernel launches but no kernel records: another CUPTI client "
                            "(torch.profiler, ncu, nsys) may have taken over the activity buffers");
  }
}

// ---- Importer ----

void Importer::import_log(const std::string& path) {
  EventLogReader reader;
  const LogStatus status = reader.open(path);
  if (!status.ok()) {
    ++m_result.logs_skipped;
    add_data_loss(std::nullopt, "unreadable_log", 1, "data_loss",
                  status.message + " (log skipped; the other logs were imported)");
    return;
  }
  ++m_result.logs_read;
  const std::uint32_t pid = reader.pid();

  ScanVisitor scan(reader);
  const LogReadStats stats = reader.read(scan);

  const std::uint64_t min_ts = scan.min_ts == kOpenEnd ? 0 : scan.min_ts;
  const std::uint64_t start_ns =
      scan.process && scan.process->start_ns != 0 ? scan.process->start_ns : min_ts;
  const std::uint64_t end_ns = std::max(scan.max_ts, start_ns);

  // Capture windows from the edges; no edge at all = the whole process.
  std::stable_sort(scan.captures.begin(), scan.captures.end(),
                   [](const CaptureEdge& a, const CaptureEdge& b) { return a.ts < b.ts; });
  std::vector<Window> windows;
  std::optional<Window> open;
  for (const CaptureEdge& e : scan.captures) {
    if (e.start) {
      if (!open) open = Window{e.ts, kOpenEnd, e.reason.empty() ? "start" : e.reason};
    } else if (open) {
      open->end = e.ts;
      windows.push_back(std::move(*open));
      open.reset();
    } else if (windows.empty()) {
      // Capturing from the start, then stopped: the collector began "on".
      windows.push_back({start_ns, e.ts, "process_start"});
    }
  }
  if (open) windows.push_back(std::move(*open));
  const bool clip = !scan.captures.empty();
  if (!clip) windows.push_back({start_ns, kOpenEnd, "all"});
  for (const Window& w : windows) {
    m_windows.push_back({pid, {w.start, w.end == kOpenEnd ? end_ns : w.end, w.reason}});
  }

  InsertVisitor ins(*this, reader, scan, windows, clip);
  (void)reader.read(ins);
  ins.finish(scan.has_end);
  m_result.events_outside_windows += ins.clipped;

  auto [it, added] = m_processes.try_emplace(pid);
  ProcessInfo& p = it->second;
  if (!added) {
    m_result.warnings.push_back("two event logs for process " + std::to_string(pid) +
                                " (did it exec?): merged into one process");
  }
  p.pid = pid;
  if (scan.process && !p.record) {
    p.record = scan.process;
    p.host = reader.string(scan.process->host_string);
    p.cmdline = cmdline_text(reader.string(scan.process->cmdline_string));
    p.exe = reader.string(scan.process->exe_string);
    p.collector_version = reader.string(scan.process->version_string);
  }
  p.start_ns = std::min(p.start_ns, start_ns);
  p.end_ns = std::max(p.end_ns, end_ns);
  p.ended_cleanly = p.ended_cleanly && scan.has_end;
  p.log_bytes += stats.file_bytes;

  if (!scan.has_end || stats.truncated_bytes > 0) {
    std::string detail = "process " + std::to_string(pid) +
                         " ended without closing its log (crash or kill): events after the last "
                         "flush, at most ~200 ms, are missing";
    if (stats.truncated_bytes > 0) {
      detail += "; a partly written record (" + std::to_string(stats.truncated_bytes) +
                " bytes) was dropped";
    }
    add_data_loss(pid, "truncated_log", stats.truncated_bytes, "data_loss", std::move(detail));
  }
  if (const std::uint64_t skipped = stats.unknown_records + stats.malformed_records; skipped > 0) {
    add_data_loss(pid, "unknown_log_records", skipped, "warning",
                  std::to_string(skipped) +
                      " log records of an unknown kind or size were skipped (collector and "
                      "importer from different gpuscope builds?)");
  }
}

void Importer::finish() {
  {
    Statement st = m_db.prepare(
        "INSERT INTO processes(pid, ppid, host, cmdline, exe, start_ns, end_ns, ended_cleanly, "
        "exit_status, term_signal, rank, local_rank, cupti_api_version, cuda_driver_version, "
        "collector_version, log_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
        "?12, ?13, ?14, ?15, ?16)");
    for (const auto& [pid, p] : m_processes) {
      st.bind(1, i64(pid));
      if (p.record) {
        st.bind(2, i64(p.record->ppid));
        bind_opt(st, 11, p.record->rank < 0 ? std::nullopt : std::optional<int>(p.record->rank));
        bind_opt(st, 12, p.record->local_rank < 0 ? std::nullopt
                                                  : std::optional<int>(p.record->local_rank));
        st.bind(13, i64(p.record->cupti_api_version));
        st.bind(14, i64(p.record->cuda_driver_version));
      }
      bind_text_or_null(st, 3, p.host);
      bind_text_or_null(st, 4, p.cmdline);
      bind_text_or_null(st, 5, p.exe);
      st.bind(6, i64(p.start_ns == kOpenEnd ? 0 : p.start_ns)).bind(7, i64(p.end_ns));
      st.bind(8, std::int64_t{p.ended_cleanly ? 1 : 0});
      if (pid == m_opts.launched_pid) {
        bind_opt(st, 9, m_opts.exit_status);
        bind_opt(st, 10, m_opts.term_signal);
      }
      bind_text_or_null(st, 15, p.collector_version);
      st.bind(16, i64(p.log_bytes));
      (void)st.step();
      st.reset();  // not every column is bound on every row: clear to NULL
      ++m_result.rows.processes;
    }
  }
  {
    Statement st = m_db.prepare("INSERT INTO threads(pid, tid, name) VALUES (?1, ?2, ?3)");
    for (const auto& [pid, tid] : m_threads) {
      st.bind(1, i64(pid)).bind(2, i64(tid));
      const auto name = m_thread_names.find({pid, tid});
      bind_text_or_null(st, 3, name == m_thread_names.end() ? std::string_view{} : name->second);
      run(st);
      ++m_result.rows.threads;
    }
  }
  {
    Statement st = m_db.prepare(
        "INSERT INTO devices(pid, device_id, name, uuid, cc_major, cc_minor, sm_count, "
        "global_memory_bytes, memory_bandwidth_bytes_per_s, l2_cache_bytes, core_clock_khz, "
        "memory_clock_khz, memory_bus_width_bits, max_threads_per_block, max_warps_per_sm, "
        "max_blocks_per_sm, max_registers_per_sm, max_registers_per_block, "
        "max_shared_memory_per_sm, max_shared_memory_per_block, num_memcpy_engines, ecc_enabled) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
        "?19, ?20, ?21, ?22)");
    for (const DeviceRow& d : m_device_rows) {
      const log::DeviceRecord& r = d.record;
      st.bind(1, i64(d.pid)).bind(2, i64(r.device_id));
      bind_text_or_null(st, 3, d.name);
      bind_text_or_null(st, 4, uuid_text(r.uuid));
      st.bind(5, i64(r.cc_major)).bind(6, i64(r.cc_minor)).bind(7, i64(r.sm_count));
      st.bind(8, i64(r.global_memory_bytes));
      st.bind(9, i64(r.global_memory_bandwidth_kbps * 1000));  // CUPTI reports KB/s
      st.bind(10, i64(r.l2_cache_bytes)).bind(11, i64(r.core_clock_khz));
      st.bind(12, i64(r.memory_clock_khz)).bind(13, i64(r.memory_bus_width_bits));
      st.bind(14, i64(r.max_threads_per_block)).bind(15, i64(r.max_warps_per_sm));
      st.bind(16, i64(r.max_blocks_per_sm)).bind(17, i64(r.max_registers_per_sm));
      st.bind(18, i64(r.max_registers_per_block)).bind(19, i64(r.max_shared_memory_per_sm));
      st.bind(20, i64(r.max_shared_memory_per_block)).bind(21, i64(r.num_memcpy_engines));
      st.bind(22, i64(r.ecc_enabled));
      run(st);
      ++m_result.rows.devices;
    }
  }
  {
    Statement st = m_db.prepare(
        "INSERT INTO capture_windows(pid, start_ns, end_ns, reason) VALUES (?1, ?2, ?3, ?4)");
    for (const auto& [pid, w] : m_windows) {
      st.bind(1, i64(pid)).bind(2, i64(w.start)).bind(3, i64(w.end)).bind(4, w.reason);
      run(st);
      ++m_result.rows.capture_windows;
    }
  }
  {
    Statement st = m_db.prepare(
        "INSERT INTO data_loss(pid, what, count, severity, detail) VALUES (?1, ?2, ?3, ?4, ?5)");
    for (const DataLossEntry& e : m_result.data_loss) {
      bind_opt(st, 1, e.pid);
      st.bind(2, e.what).bind(3, i64(e.count)).bind(4, e.severity).bind(5, e.detail);
      run(st);
      ++m_result.rows.data_loss;
      if (e.severity == "data_loss") ++m_result.data_loss_total;
    }
  }
  {
    std::string host;
    if (const auto it = m_processes.find(m_opts.launched_pid); it != m_processes.end()) {
      host = it->second.host;
    }
    for (const auto& [pid, p] : m_processes) {
      if (host.empty()) host = p.host;
    }
    const std::uint64_t duration = m_last_ns >= m_first_ns ? m_last_ns - m_first_ns : 0;

    Statement st = m_db.prepare("INSERT OR IGNORE INTO meta(key, value) VALUES (?1, ?2)");
    auto put = [&](std::string_view key, std::string_view value) {
      st.bind(1, key).bind(2, value);
      run(st);
    };
    put("schema_version", std::to_string(kSchemaVersion));
    put("gpuscope_version", m_opts.gpuscope_version.empty() ? std::string(kVersion)
                                                            : m_opts.gpuscope_version);
    put("command", m_opts.command);
    put("start_time", m_opts.start_time);
    put("host", host);
    put("capture_range", m_opts.capture_range.empty() ? "none" : m_opts.capture_range);
    put("trace_sources", m_opts.trace_sources);
    put("clock", "CLOCK_REALTIME ns, CUPTI");
    put("duration_ns", std::to_string(duration));
    put("process_count", std::to_string(m_processes.size()));
    put("launched_pid", std::to_string(m_opts.launched_pid));
    for (const auto& [key, value] : m_opts.extra_meta) put(key, value);
  }
  m_db.exec(create_indexes_sql());
  // A profiled launch whose facts the launch call did not give (a runtime launch has no
  // CUfunction to ask for registers) takes them from its kernel activity record.
  if (m_result.rows.kernel_profiles > 0 && m_result.rows.kernels > 0) {
    m_db.exec(
        "UPDATE kernel_profiles AS p SET "
        "registers_per_thread = COALESCE(p.registers_per_thread, k.registers_per_thread), "
        "static_shared_memory = COALESCE(p.static_shared_memory, k.static_shared_memory), "
        "local_memory_per_thread = COALESCE(p.local_memory_per_thread, k.local_memory_per_thread), "
        "stream_id = COALESCE(p.stream_id, k.stream_id) "
        "FROM kernels AS k WHERE k.pid = p.pid AND k.correlation_id = p.correlation_id");
  }
}

}  // namespace

ImportResult import_logs(const std::vector<std::string>& log_paths, const std::string& db_path,
                         const ImportOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(db_path, ec) && !options.overwrite) {
    throw DatabaseError("cannot write trace " + db_path + ": the file already exists");
  }
  const std::string partial = db_path + ".partial";
  fs::remove(partial, ec);
  ImportResult result;
  try {
    Database db(partial, Database::Mode::kReadWriteCreate);
    // Written once, start to finish: no journal, no fsync until the end. Indexes
    // are built after the bulk insert (create_indexes_sql in finish()); measured
    // slower both with indexes kept up to date and with sorter worker threads.
    db.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
            "PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-262144; PRAGMA temp_store=MEMORY");
    db.exec("BEGIN");
    db.exec(create_tables_sql());
    {
      Importer importer(db, options);
      for (const std::string& path : log_paths) importer.import_log(path);
      importer.finish();
      result = importer.take_result();
    }
    db.exec("COMMIT");
  } catch (...) {
    fs::remove(partial, ec);
    throw;
  }
  fs::rename(partial, db_path, ec);
  if (ec) {
    fs::remove(partial, ec);
    throw DatabaseError("cannot write trace " + db_path + ": " + ec.message());
  }
  return result;
}

}  // namespace gpuscope::store
