#include "cli/monitor_record.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "core/gpu_metrics.hpp"
#include "core/units.hpp"
#include "core/version.hpp"
#include "store/importer.hpp"

namespace gpuscope::cli {
namespace {

// The metrics of every sample, in order (values from record_values).
std::vector<std::string> record_metrics() {
  std::vector<std::string> m = {std::string(core::gpu_metric::kSmActive),
                                std::string(core::gpu_metric::kWarpsActive),
                                std::string(core::gpu_metric::kTensorActive),
                                std::string(core::gpu_metric::kDramRead),
                                std::string(core::gpu_metric::kDramWrite),
                                std::string(core::gpu_metric::kSmClock),
                                "pcie__read_bytes.sum",
                                "pcie__write_bytes.sum",
                                "nvlrx__bytes.sum",
                                "nvltx__bytes.sum"};
  for (const core::GpuMetricDef& d : core::kMonitorNvmlMetrics) m.emplace_back(d.name);
  return m;
}

std::vector<double> record_values(const core::MonitorSample& s, double seconds) {
  const double nan = core::kMonitorUnknown;
  auto pct = [&](double v) { return s.counters ? v : nan; };
  auto bytes = [&](double rate) { return s.counters ? rate * seconds : nan; };
  return {pct(s.sm_active_pct),
          pct(s.warps_active_pct),
          pct(s.tensor_active_pct),
          bytes(s.dram_read_bytes_per_s),
          bytes(s.dram_write_bytes_per_s),
          s.sm_clock_hz,
          bytes(s.pcie_rx_bytes_per_s),
          bytes(s.pcie_tx_bytes_per_s),
          bytes(s.nvlink_rx_bytes_per_s),
          bytes(s.nvlink_tx_bytes_per_s),
          s.nvml_util_pct,
          s.power_w,
          s.temperature_c,
          s.memory_used_bytes};
}

// "GPU-8c1f0e2a-...." -> 16 bytes (zeros when not that shape).
void parse_uuid(const std::string& text, std::uint8_t (&out)[16]) {
  std::memset(out, 0, sizeof out);
  std::string hex;
  for (std::size_t i = text.rfind("GPU-", 0) == 0 ? 4 : 0; i < text.size(); ++i)
    if (text[i] != '-') hex += text[i];
  if (hex.size() != 32) return;
  for (int i = 0; i < 16; ++i)
    out[i] = static_cast<std::uint8_t>(std::strtoul(hex.substr(2 * i, 2).c_str(), nullptr, 16));
}

std::string host_name() {
  char b[256] = {};
  ::gethostname(b, sizeof b - 1);
  return b;
}

}  // namespace

std::uint64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

MonitorRecorder::MonitorRecorder(std::string trace_path, const std::vector<core::MonitorGpu>& gpus, double interval_s,
                                 std::string command)
    : m_trace(std::move(trace_path)), m_command(std::move(command)), m_gpus(gpus) {
  if (std::filesystem::exists(m_trace))
    throw std::runtime_error(m_trace + " exists: give --record a new file name (nothing was overwritten)");
  const char* tmp = std::getenv("TMPDIR");
  m_dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/gpuscope-monitor-record-XXXXXX";
  if (::mkdtemp(m_dir.data()) == nullptr)
    throw std::runtime_error("cannot create a folder for the recording in " + m_dir + ": set TMPDIR to a writable one");
  std::string error;
  if (!m_writer.open(m_dir + "/gpu-metrics-monitor.gslog", static_cast<std::uint32_t>(::getpid()), &error))
    throw std::runtime_error("cannot write the recording's log: " + error);
  const std::vector<std::string> metrics = record_metrics();
  for (const core::MonitorGpu& g : m_gpus) {
    std::vector<char> payload(sizeof(log::GpuMetricsSessionRecord) + metrics.size() * sizeof(std::uint64_t));
    log::GpuMetricsSessionRecord s{};
    s.start_ns = realtime_ns();
    s.interval_ns = static_cast<std::uint64_t>(interval_s * 1e9);
    s.device_name_string = m_writer.intern(g.name);
    parse_uuid(g.uuid, s.uuid);
    s.device_id = static_cast<std::uint32_t>(g.device);
    s.metric_count = static_cast<std::uint32_t>(metrics.size());
    std::memcpy(payload.data(), &s, sizeof s);
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      const std::uint64_t id = m_writer.intern(metrics[i]);
      std::memcpy(payload.data() + sizeof s + i * sizeof id, &id, sizeof id);
    }
    m_writer.add_raw(log::RecordKind::kGpuMetricsSession, payload.data(), static_cast<std::uint32_t>(payload.size()));
  }
  m_writer.flush();
}

MonitorRecorder::~MonitorRecorder() {
  std::error_code ec;
  std::filesystem::remove_all(m_dir, ec);
}

void MonitorRecorder::add(const core::MonitorFrame& frame, std::uint64_t start_ns, std::uint64_t end_ns) {
  if (end_ns <= start_ns) return;
  const double seconds = static_cast<double>(end_ns - start_ns) * 1e-9;
  for (const core::MonitorSample& s : frame.samples) {
    const std::vector<double> values = record_values(s, seconds);
    log::GpuMetricSampleRecord r{};
    r.start_ns = start_ns;
    r.end_ns = end_ns;
    r.device_id = static_cast<std::uint32_t>(s.device);
    r.count = static_cast<std::uint32_t>(values.size());
    std::vector<char> payload(sizeof r + values.size() * sizeof(double));
    std::memcpy(payload.data(), &r, sizeof r);
    std::memcpy(payload.data() + sizeof r, values.data(), values.size() * sizeof(double));
    m_writer.add_raw(log::RecordKind::kGpuMetricSample, payload.data(), static_cast<std::uint32_t>(payload.size()));
  }
  for (const core::MonitorProcess& p : frame.processes) {
    auto [it, added] = m_processes.try_emplace(p.pid);
    if (added) {
      it->second.command = p.command;
      it->second.first_ns = start_ns;
    }
    it->second.last_ns = end_ns;
  }
  ++m_frames;
  m_writer.flush();
}

std::string MonitorRecorder::finish() {
  if (m_finished) return "";
  m_finished = true;
  m_writer.close();
  std::vector<std::string> logs = {m_dir + "/gpu-metrics-monitor.gslog"};
  const std::string host = host_name();
  for (const auto& [pid, p] : m_processes) {
    store::EventLogWriter w;
    std::string error;
    const std::string path = m_dir + "/process-" + std::to_string(pid) + ".gslog";
    if (!w.open(path, pid, &error)) continue;
    log::ProcessRecord r{};
    r.pid = pid;
    r.start_ns = p.first_ns;
    r.host_string = w.intern(host);
    std::string cmdline = p.command;
    for (char& c : cmdline)
      if (c == ' ') c = '\0';
    r.cmdline_string = w.intern(cmdline);
    r.version_string = w.intern(kVersion);
    r.rank = -1;
    r.local_rank = -1;
    w.add(log::RecordKind::kProcess, r);
    log::ProcessEndRecord end{};
    end.ts_ns = p.last_ns;
    w.add(log::RecordKind::kProcessEnd, end);
    w.flush();
    w.close();
    logs.push_back(path);
  }
  store::ImportOptions o;
  o.command = m_command;
  o.start_time = units::utc_now_iso8601();
  o.trace_sources = "monitor";
  o.extra_meta.emplace_back("recorded_by", "gpuscope monitor");
  const store::ImportResult result = store::import_logs(logs, m_trace, o);
  (void)result;
  return "gpuscope monitor: recorded " + std::to_string(m_frames) + " frame(s) of " + std::to_string(m_gpus.size()) +
         " GPU(s) to " + m_trace + " (gpuscope stats " + m_trace + " -r gpu_metrics_sum; gpuscope export " + m_trace +
         " --format perfetto)";
}

}  // namespace gpuscope::cli
