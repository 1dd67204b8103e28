// Test helpers: a temp directory and a builder of synthetic event logs
// (records as the collector writes them, through EventLogWriter).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/event_log_format.hpp"
#include "store/event_log_writer.hpp"

namespace gpuscope::store::test {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpuscope_store_XXXXXX").string();
    m_path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  [[nodiscard]] std::string file(std::string_view name) const { return (m_path / name).string(); }

 private:
  std::filesystem::path m_path;
};

class LogBuilder {
 public:
  LogBuilder(const std::string& path, std::uint32_t pid) : m_pid(pid) {
    std::string err;
    EXPECT_TRUE(m_w.open(path, pid, &err)) << err;
  }

  void process(std::uint64_t start_ns, std::string_view host = "node1",
               std::string_view cmdline = std::string_view("python\0train.py", 15)) {
    log::ProcessRecord r{};
    r.pid = m_pid;
    r.ppid = 1;
    r.start_ns = start_ns;
    r.host_string = m_w.intern(host);
    r.cmdline_string = m_w.intern(cmdline);
    r.exe_string = m_w.intern("/usr/bin/python3");
    r.version_string = m_w.intern("0.1.0");
    r.rank = process_rank;
    r.local_rank = process_local_rank;
    r.cupti_api_version = 26;
    r.cuda_driver_version = 13000;
    m_w.add(log::RecordKind::kProcess, r);
  }
  // What the ProcessRecord says (older collectors: $RANK and $LOCAL_RANK, no RankRecord).
  std::int32_t process_rank = -1;
  std::int32_t process_local_rank = -1;
  // A RankRecord, as the collector writes after the ProcessRecord when a launcher set a rank.
  void rank(std::int32_t rank, std::int32_t local_rank, std::int32_t world_size, log::RankLauncher launcher) {
    log::RankRecord r{};
    r.rank = rank;
    r.local_rank = local_rank;
    r.world_size = world_size;
    r.launcher = static_cast<std::uint8_t>(launcher);
    m_w.add(log::RecordKind::kRank, r);
  }
  // `uuid0`: the UUID's first byte (the rest 0): devices with the same one are one physical GPU.
  void device(std::uint32_t id, std::string_view name, std::uint8_t uuid0 = 0xab, std::uint64_t memory_bytes = 0) {
    log::DeviceRecord r{};
    r.device_id = id;
    r.name_string = m_w.intern(name);
    r.uuid[0] = uuid0;
    r.global_memory_bytes = memory_bytes;
    r.cc_major = 9;
    r.sm_count = 132;
    r.global_memory_bandwidth_kbps = 3'352'000'000;
    m_w.add(log::RecordKind::kDevice, r);
  }
  void api(std::uint64_t start, std::uint64_t end, std::uint32_t tid, std::uint32_t corr, std::string_view name,
           log::ApiDomain domain = log::ApiDomain::kRuntime) {
    log::ApiRecord r{};
    r.start_ns = start;
    r.end_ns = end;
    r.thread_id = tid;
    r.correlation_id = corr;
    r.cbid = 211;
    r.name_string = m_w.intern(name);
    r.domain = static_cast<std::uint8_t>(domain);
    r.py_stack_id = api_py_stack;
    m_w.add(log::RecordKind::kApi, r);
  }
  // The Python stack the next api() calls carry (log stack id, 0 = none).
  std::uint32_t api_py_stack = 0;
  // A Python frame and a call site, as the collector's writer writes them (--python-callsites).
  void py_frame(std::uint32_t id, std::string_view file, std::int32_t line, std::string_view function,
                std::int32_t first_line = -1) {
    log::PyFrameRecord r{};
    r.frame_id = id;
    r.line = line;
    r.first_line = first_line;
    r.file_string = m_w.intern(file);
    r.function_string = m_w.intern(function);
    m_w.add(log::RecordKind::kPyFrame, r);
  }
  void py_stack(std::uint32_t id, std::uint32_t parent, std::uint32_t frame, std::uint32_t depth) {
    log::PyStackRecord r{};
    r.stack_id = id;
    r.parent_id = parent;
    r.frame_id = frame;
    r.depth = depth;
    m_w.add(log::RecordKind::kPyStack, r);
  }
  // A periodic Python sample (--python-sampling): thread tid at stack (0 = no Python frame).
  void py_sample(std::uint64_t ts, std::uint32_t tid, std::uint32_t stack, std::uint8_t flags) {
    log::PySampleRecord r{};
    r.ts_ns = ts;
    r.tid = tid;
    r.stack_id = stack;
    r.flags = flags;
    m_w.add(log::RecordKind::kPySample, r);
  }
  void kernel(std::uint64_t start, std::uint64_t end, std::uint32_t corr, std::string_view name,
              std::uint32_t stream = 7) {
    log::KernelRecord r{};
    r.start_ns = start;
    r.end_ns = end;
    r.stream_id = stream;
    r.correlation_id = corr;
    r.context_id = 1;
    r.grid[0] = 128;
    r.grid[1] = 1;
    r.grid[2] = 1;
    r.block[0] = 256;
    r.block[1] = 1;
    r.block[2] = 1;
    r.registers_per_thread = 32;
    r.name_string = m_w.intern(name);
    m_w.add(log::RecordKind::kKernel, r);
  }
  void memcpy(std::uint64_t start, std::uint64_t end, std::uint32_t corr, std::uint64_t bytes, log::MemcpyKind kind,
              log::MemoryKind src, log::MemoryKind dst) {
    log::MemcpyRecord r{};
    r.start_ns = start;
    r.end_ns = end;
    r.correlation_id = corr;
    r.bytes = bytes;
    r.copy_kind = static_cast<std::uint8_t>(kind);
    r.src_kind = static_cast<std::uint8_t>(src);
    r.dst_kind = static_cast<std::uint8_t>(dst);
    m_w.add(log::RecordKind::kMemcpy, r);
  }
  void memset(std::uint64_t start, std::uint64_t end, std::uint32_t corr, std::uint64_t bytes) {
    log::MemsetRecord r{};
    r.start_ns = start;
    r.end_ns = end;
    r.correlation_id = corr;
    r.bytes = bytes;
    r.memory_kind = static_cast<std::uint8_t>(log::MemoryKind::kDevice);
    m_w.add(log::RecordKind::kMemset, r);
  }
  void sync(std::uint64_t start, std::uint64_t end, std::uint32_t corr, log::SyncType type, std::uint32_t stream,
            std::uint32_t event) {
    log::SyncRecord r{};
    r.start_ns = start;
    r.end_ns = end;
    r.correlation_id = corr;
    r.sync_type = static_cast<std::uint8_t>(type);
    r.stream_id = stream;
    r.event_id = event;
    m_w.add(log::RecordKind::kSync, r);
  }
  void nvtx(log::NvtxEventType type, std::uint64_t ts, std::uint32_t tid, std::string_view msg = {},
            std::uint64_t range_id = 0, std::uint64_t domain = 0) {
    log::NvtxRecord r{};
    r.ts_ns = ts;
    r.thread_id = tid;
    r.type = static_cast<std::uint8_t>(type);
    r.message_string = m_w.intern(msg);
    r.range_id = range_id;
    r.domain_id = domain;
    m_w.add(log::RecordKind::kNvtx, r);
  }
  void push(std::uint64_t ts, std::uint32_t tid, std::string_view msg, std::uint64_t domain = 0) {
    nvtx(log::NvtxEventType::kPush, ts, tid, msg, 0, domain);
  }
  void pop(std::uint64_t ts, std::uint32_t tid, std::uint64_t domain = 0) {
    nvtx(log::NvtxEventType::kPop, ts, tid, {}, 0, domain);
  }
  // gpuscope's PyTorch observer: one range edge (log::TorchOpRecord).
  void torch_op(log::TorchOpEventType type, std::uint64_t ts, std::uint32_t tid, std::string_view name = {},
                std::int64_t seq = 0, std::uint64_t op_id = 0, std::string_view shapes = {}) {
    log::TorchOpRecord r{};
    r.ts_ns = ts;
    r.thread_id = tid;
    r.type = static_cast<std::uint8_t>(type);
    r.name_string = m_w.intern(name);
    r.shapes_string = m_w.intern(shapes);
    r.seq = seq;
    r.op_id = op_id;
    m_w.add(log::RecordKind::kTorchOp, r);
  }
  void torch_op_cost(double op_ns, double module_ns, std::string_view method) {
    log::TorchOpCostRecord r{op_ns, module_ns, m_w.intern(method)};
    m_w.add(log::RecordKind::kTorchOpCost, r);
  }
  void nvtx_domain(std::uint64_t id, std::string_view name) {
    log::NvtxDomainRecord r{id, m_w.intern(name)};
    m_w.add(log::RecordKind::kNvtxDomain, r);
  }
  void thread_name(std::uint32_t tid, std::string_view name) {
    log::ThreadNameRecord r{tid, 0, m_w.intern(name)};
    m_w.add(log::RecordKind::kThreadName, r);
  }
  void overhead(std::uint64_t start, std::uint64_t end, std::uint32_t kind) {
    log::OverheadRecord r{start, end, kind, 0, 0, 0};
    m_w.add(log::RecordKind::kOverhead, r);
  }
  void capture(std::uint64_t ts, bool start, std::string_view reason = "cudaProfilerStart") {
    log::CaptureRecord r{};
    r.ts_ns = ts;
    r.reason_string = m_w.intern(reason);
    r.state = static_cast<std::uint8_t>(start ? log::CaptureState::kStart : log::CaptureState::kStop);
    m_w.add(log::RecordKind::kCapture, r);
  }
  void data_loss(std::uint64_t ts, std::uint64_t count, std::string_view what) {
    log::DataLossRecord r{};
    r.ts_ns = ts;
    r.count = count;
    r.what_string = m_w.intern(what);
    m_w.add(log::RecordKind::kDataLoss, r);
  }
  void message(std::uint64_t ts, log::Severity sev, std::string_view text) {
    log::MessageRecord r{};
    r.ts_ns = ts;
    r.text_string = m_w.intern(text);
    r.severity = static_cast<std::uint8_t>(sev);
    m_w.add(log::RecordKind::kMessage, r);
  }
  // Memory records (gpuscope trace --cuda-memory-usage), as the collector converts CUPTI's
  // MEMORY2 and MEMORY_POOL records (collect/activity_convert.hpp).
  log::MemoryRecord memory_record(log::MemoryOperation op, std::uint64_t ts, std::uint64_t address, std::uint64_t bytes,
                                  std::uint32_t device, std::uint32_t corr, log::MemoryKind kind) {
    log::MemoryRecord r{};
    r.ts_ns = ts;
    r.address = address;
    r.bytes = bytes;
    r.device_id = device;
    r.context_id = 1;
    r.stream_id = 0xffffffffu;  // not stream-ordered
    r.correlation_id = corr;
    r.operation = static_cast<std::uint8_t>(op);
    r.memory_kind = static_cast<std::uint8_t>(kind);
    return r;
  }
  void memory(const log::MemoryRecord& r) { m_w.add(log::RecordKind::kMemory, r); }
  void alloc(std::uint64_t ts, std::uint64_t address, std::uint64_t bytes, std::uint32_t corr = 0,
             std::uint32_t device = 0, log::MemoryKind kind = log::MemoryKind::kDevice) {
    memory(memory_record(log::MemoryOperation::kAlloc, ts, address, bytes, device, corr, kind));
  }
  void free(std::uint64_t ts, std::uint64_t address, std::uint64_t bytes, std::uint32_t corr = 0,
            std::uint32_t device = 0, log::MemoryKind kind = log::MemoryKind::kDevice) {
    memory(memory_record(log::MemoryOperation::kFree, ts, address, bytes, device, corr, kind));
  }
  /// A stream-ordered allocation (cudaMallocAsync) from a local pool at `pool`.
  void alloc_async(std::uint64_t ts, std::uint64_t address, std::uint64_t bytes, std::uint64_t pool,
                   std::uint64_t pool_size, std::uint32_t stream, std::uint32_t corr = 0, std::uint32_t device = 0) {
    log::MemoryRecord r =
        memory_record(log::MemoryOperation::kAlloc, ts, address, bytes, device, corr, log::MemoryKind::kDevice);
    r.stream_id = stream;
    r.is_async = 1;
    r.pool_type = static_cast<std::uint8_t>(log::MemoryPoolType::kLocal);
    r.pool_address = pool;
    r.pool_size = pool_size;
    r.pool_utilized_bytes = bytes;
    memory(r);
  }
  /// A memory pool operation (kPoolCreate, kPoolDestroy, kPoolTrim) on a local pool.
  void pool(log::MemoryOperation op, std::uint64_t ts, std::uint64_t pool, std::uint64_t size, std::uint32_t corr = 0,
            std::uint32_t device = 0, std::uint64_t min_bytes_to_keep = 0) {
    log::MemoryRecord r = memory_record(op, ts, pool, size, device, corr, log::MemoryKind::kDevice);
    r.context_id = 0xffffffffu;
    r.pool_type = static_cast<std::uint8_t>(log::MemoryPoolType::kLocal);
    r.pool_address = pool;
    r.pool_size = size;
    r.pool_release_threshold = 1 << 20;
    r.pool_min_bytes_to_keep = min_bytes_to_keep;
    memory(r);
  }
  // GPU-metrics sampler records (gpuscope trace --gpu-metrics), as collect/pm_sampler writes
  // them into the launcher's own log: no ProcessRecord (build it with the launcher's pid and
  // write only these, messages and data_loss). `uuid0` as in device().
  void gpu_metrics_session(std::uint32_t device, std::uint8_t uuid0, const std::vector<std::string_view>& metrics,
                           std::uint64_t start_ns = 1'000, std::uint64_t interval_ns = 1'000,
                           std::string_view chip = "GH100", std::string_view name = "NVIDIA H100 80GB HBM3") {
    log::GpuMetricsSessionRecord r{};
    r.start_ns = start_ns;
    r.interval_ns = interval_ns;
    r.chip_string = m_w.intern(chip);
    r.device_name_string = m_w.intern(name);
    r.uuid[0] = uuid0;
    r.clock_offset_ns = -250;
    r.hardware_buffer_bytes = 512u << 20;
    r.device_id = device;
    r.metric_count = static_cast<std::uint32_t>(metrics.size());
    std::string payload(reinterpret_cast<const char*>(&r), sizeof r);
    for (std::string_view m : metrics) {
      const std::uint64_t id = m_w.intern(m);
      payload.append(reinterpret_cast<const char*>(&id), sizeof id);
    }
    raw(static_cast<std::uint16_t>(log::RecordKind::kGpuMetricsSession), payload);
  }
  /// A sample's payload; `count` (default: values.size()) may lie, to build damaged records.
  static std::string gpu_metric_sample_payload(std::uint32_t device, std::uint64_t start, std::uint64_t end,
                                               const std::vector<double>& values,
                                               std::optional<std::uint32_t> count = std::nullopt) {
    log::GpuMetricSampleRecord r{};
    r.start_ns = start;
    r.end_ns = end;
    r.device_id = device;
    r.count = count.value_or(static_cast<std::uint32_t>(values.size()));
    std::string payload(reinterpret_cast<const char*>(&r), sizeof r);
    payload.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
    return payload;
  }
  void gpu_metric_sample(std::uint32_t device, std::uint64_t start, std::uint64_t end,
                         const std::vector<double>& values) {
    raw(static_cast<std::uint16_t>(log::RecordKind::kGpuMetricSample),
        gpu_metric_sample_payload(device, start, end, values));
  }
  void end(std::uint64_t ts) {
    log::ProcessEndRecord r{ts, m_w.records_written(), 1, m_w.bytes_written()};
    m_w.add(log::RecordKind::kProcessEnd, r);
  }
  void raw(std::uint16_t kind, std::string_view payload) {
    m_w.add_raw(static_cast<log::RecordKind>(kind), payload.data(), static_cast<std::uint32_t>(payload.size()));
  }
  void flush() { ASSERT_TRUE(m_w.flush()) << m_w.last_error(); }
  void close() { m_w.close(); }
  EventLogWriter& writer() { return m_w; }

 private:
  EventLogWriter m_w;
  std::uint32_t m_pid;
};

/// Writes DIR/a.gslog: process `pid` (7 by default) with one cudaLaunchKernel [2000, 3000) ns
/// and its kernel "k" [2500, 2600) ns, ended at 5000 ns; returns its path. The process log that
/// tests of a side file (requests, allocator state) import next to it.
inline std::string write_one_kernel_log(const TempDir& dir, std::uint32_t pid = 7) {
  const std::string log = dir.file("a.gslog");
  LogBuilder l(log, pid);
  l.process(1000);
  l.api(2000, 3000, 7, 1, "cudaLaunchKernel");
  l.kernel(2500, 2600, 1, "k");
  l.end(5000);
  l.flush();
  return log;
}

}  // namespace gpuscope::store::test
