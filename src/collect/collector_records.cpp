// The records the collector writes about the process and its devices, and the ones it
// turns host events and profiled launches into (writer thread; the ProcessRecord at
// initialisation): ProcessRecord + RankRecord, DeviceRecord, NVTX / thread-name / capture /
// message records, KernelProfileRecord + KernelMetricRecords, ProcessEndRecord.
#include <bit>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "collect/activity_convert.hpp"
#include "collect/collector.hpp"
#include "collect/cupti_check.hpp"
#include "collect/kernel_profiler.hpp"
#include "collect/launcher_ranks.hpp"
#include "core/version.hpp"

namespace gpuscope::collect::detail {
namespace {

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

void Collector::write_process_record() {
  log::ProcessRecord p{};
  p.pid = m_pid;
  p.ppid = static_cast<std::uint32_t>(::getppid());
  p.start_ns = m_start_ns;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  p.host_string = m_writer.intern(host);
  std::string cmdline = read_file("/proc/self/cmdline");
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();  // keep inner '\0'
  p.cmdline_string = m_writer.intern(cmdline);
  char exe[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) p.exe_string = m_writer.intern(std::string_view(exe, static_cast<std::size_t>(n)));
  p.version_string = m_writer.intern(kVersion);
  // Older readers see the rank in the ProcessRecord; the RankRecord after it adds the
  // world size and the launcher.
  const collect::LauncherRanks ranks = collect::launcher_ranks(&std::getenv);
  p.rank = ranks.rank;
  p.local_rank = ranks.local_rank;
  std::uint32_t cupti_version = 0;
  if (GPUSCOPE_CUPTI_LOG_CALL(cuptiGetVersion(&cupti_version)) == CUPTI_SUCCESS) {
    p.cupti_api_version = cupti_version;
  }
  int driver = 0;
  if (GPUSCOPE_CU_LOG_CALL(cuDriverGetVersion(&driver)) == CUDA_SUCCESS) {
    p.cuda_driver_version = static_cast<std::uint32_t>(driver);
  }
  m_writer.add(log::RecordKind::kProcess, p);
  if (ranks.launcher != log::RankLauncher::kNone) {
    log::RankRecord r{};
    r.rank = ranks.rank;
    r.local_rank = ranks.local_rank;
    r.world_size = ranks.world_size;
    r.launcher = static_cast<std::uint8_t>(ranks.launcher);
    m_writer.add(log::RecordKind::kRank, r);
  }
}

bool Collector::write_device(const CUpti_ActivityDevice5& d, std::uint64_t name_string, bool force) {
  std::uint32_t mem_clock = 0, bus_width = 0;
  CUdevice dev = 0;
  // At exit the driver may already be shut down (DEINITIALIZED): write the record
  // without the two clock facts rather than complain.
  const bool driver_gone = m_stop.load();
  const CUresult got =
      driver_gone ? CUDA_ERROR_DEINITIALIZED
                  : GPUSCOPE_CU_LOG_CALL_EXPECT(cuDeviceGet(&dev, static_cast<int>(d.id)), CUDA_ERROR_NOT_INITIALIZED);
  if (got == CUDA_ERROR_NOT_INITIALIZED && !force) return false;
  if (got == CUDA_SUCCESS) {
    int v = 0;
    if (GPUSCOPE_CU_LOG_CALL(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev)) == CUDA_SUCCESS) {
      mem_clock = static_cast<std::uint32_t>(v);
    }
    if (GPUSCOPE_CU_LOG_CALL(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev)) ==
        CUDA_SUCCESS) {
      bus_width = static_cast<std::uint32_t>(v);
    }
  }
  m_writer.add(log::RecordKind::kDevice, collect::to_device_record(d, name_string, mem_clock, bus_width));
  return true;
}

void Collector::write_host_event(const HostEvent& e) {
  switch (e.kind) {
    case HostEvent::Kind::kNvtx: {
      log::NvtxRecord r{};
      r.ts_ns = e.ts_ns;
      r.domain_id = e.domain_id;
      r.range_id = e.range_id;
      r.message_string = m_writer.intern(e.text);
      r.thread_id = e.thread_id;
      r.color = e.color;
      r.category = e.category;
      r.type = e.type;
      r.has_color = e.has_color;
      m_writer.add(log::RecordKind::kNvtx, r);
      break;
    }
    case HostEvent::Kind::kNvtxDomain: {
      log::NvtxDomainRecord r{};
      r.domain_id = e.domain_id;
      r.name_string = m_writer.intern(e.text);
      m_writer.add(log::RecordKind::kNvtxDomain, r);
      break;
    }
    case HostEvent::Kind::kThreadName: {
      log::ThreadNameRecord r{};
      r.thread_id = e.thread_id;
      r.name_string = m_writer.intern(e.text);
      m_writer.add(log::RecordKind::kThreadName, r);
      break;
    }
    case HostEvent::Kind::kCapture: {
      log::CaptureRecord r{};
      r.ts_ns = e.ts_ns;
      r.reason_string = m_writer.intern(e.text);
      r.state = e.type;
      m_writer.add(log::RecordKind::kCapture, r);
      break;
    }
    case HostEvent::Kind::kMessage: {
      log::MessageRecord r{};
      r.ts_ns = e.ts_ns;
      r.text_string = m_writer.intern(e.text);
      r.severity = e.type;
      m_writer.add(log::RecordKind::kMessage, r);
      break;
    }
    case HostEvent::Kind::kTorchOpCost: {
      log::TorchOpCostRecord r{};
      r.op_ns = std::bit_cast<double>(e.domain_id);
      r.module_ns = std::bit_cast<double>(e.range_id);
      r.method_string = m_writer.intern(e.text);
      m_writer.add(log::RecordKind::kTorchOpCost, r);
      break;
    }
  }
}

void Collector::write_profiled_launches() {
  std::vector<ProfiledLaunch> launches = m_kernels->take();
  if (launches.empty()) return;
  const std::vector<std::string>& metrics = m_kernels->metrics();
  if (m_metric_strings.empty()) {
    for (const std::string& m : metrics) m_metric_strings.push_back(m_writer.intern(m));
  }
  const std::uint64_t set = m_writer.intern(m_config.kernel_set);
  for (const ProfiledLaunch& l : launches) {
    log::KernelProfileRecord r{};
    r.launch_ns = l.launch_ns;
    r.profile_id = m_next_profile_id++;
    r.launch_index = l.launch_index;
    r.name_string = m_writer.intern(l.name);
    r.metric_set_string = set;
    r.device_id = l.device_id;
    r.context_id = l.context_id;
    r.stream_id = l.stream_id;
    r.correlation_id = l.correlation_id;
    for (int i = 0; i < 3; ++i) {
      r.grid[i] = l.grid[i];
      r.block[i] = l.block[i];
    }
    r.registers_per_thread = l.registers_per_thread;
    r.static_shared_memory = l.static_shared_memory;
    r.dynamic_shared_memory = l.dynamic_shared_memory;
    r.local_memory_per_thread = l.local_memory_per_thread;
    r.passes = l.passes;
    m_writer.add(log::RecordKind::kKernelProfile, r);
    for (std::size_t i = 0; i < l.values.size() && i < m_metric_strings.size(); ++i) {
      log::KernelMetricRecord m{};
      m.profile_id = r.profile_id;
      m.metric_string = m_metric_strings[i];
      m.value = l.values[i];
      m_writer.add(log::RecordKind::kKernelMetric, m);
    }
  }
}

void Collector::write_process_end() {
  log::ProcessEndRecord r{};
  r.ts_ns = now_ns();
  r.records_written = m_writer.records_written() + 1;
  r.activity_buffers = m_buffers;
  r.bytes_written =
      m_writer.bytes_written() + m_writer.pending_bytes() + sizeof(log::RecordHeader) + sizeof(log::ProcessEndRecord);
  m_writer.add(log::RecordKind::kProcessEnd, r);
  if (m_config.verbose) {
    std::fprintf(stderr,
                 "gpuscope: pid %u: %llu records, %llu bytes, %llu CUPTI buffers, %llu CUPTI "
                 "records dropped, %llu host events dropped -> %s\n",
                 m_pid, static_cast<unsigned long long>(r.records_written),
                 static_cast<unsigned long long>(r.bytes_written), static_cast<unsigned long long>(m_buffers),
                 static_cast<unsigned long long>(m_cupti_dropped),
                 static_cast<unsigned long long>(m_events_dropped_written), m_log_path.c_str());
  }
}

}  // namespace gpuscope::collect::detail
