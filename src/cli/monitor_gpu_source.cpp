// The GPU source of `gpuscope monitor`: CUPTI PM sampling of every visible GPU in this process
// (collect/pm_sampler.hpp; the samples are read live through PmSamplerOptions::on_sample and
// averaged over each refresh, weighted by their durations) beside NVML (bench/nvml.hpp):
// utilization, clock, power, temperature, memory and processes.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pwd.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "bench/nvml.hpp"
#include "cli/monitor_source.hpp"
#include "collect/pm_sampler.hpp"
#include "core/gpu_metrics.hpp"
#include "store/machine_profile_json.hpp"
#include "store/record_text.hpp"

namespace gpuscope::cli {
namespace {

// The counters the monitor asks for, in the order of Sums.
constexpr std::array<std::string_view, 10> kMetrics = {
    core::gpu_metric::kSmActive, core::gpu_metric::kWarpsActive, core::gpu_metric::kTensorActive,
    core::gpu_metric::kDramRead, core::gpu_metric::kDramWrite,   core::gpu_metric::kSmClock,
    "pcie__read_bytes.sum",      "pcie__write_bytes.sum",        "nvlrx__bytes.sum",
    "nvltx__bytes.sum"};
enum Metric { kSm, kWarps, kTensor, kRead, kWrite, kClock, kPcieRx, kPcieTx, kNvlRx, kNvlTx, kCount };

// Samples of one GPU since the last frame: percentages and the clock weighted by duration,
// bytes summed; per metric, the time it was known.
struct Sums {
  std::array<double, kCount> value{};
  std::array<double, kCount> ns{};
};

std::string user_of(std::uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Uid:", 0) == 0) {
      std::istringstream s(line.substr(4));
      uid_t uid = 0;
      s >> uid;
      if (const passwd* pw = ::getpwuid(uid)) return pw->pw_name;
      return std::to_string(uid);
    }
  }
  return "";
}

std::string command_of(std::uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& c : text)
    if (c == '\0') c = ' ';
  return text;
}

class GpuSource final : public MonitorSource {
 public:
  explicit GpuSource(const GpuSourceOptions& options) {
    if (::dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      throw NoGpuError(
          "no GPU: the NVIDIA driver is not installed here (libcuda.so.1 not found). gpuscope monitor watches "
          "NVIDIA GPUs: run it on the machine that has them");
    }
    int count = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
      const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
      throw NoGpuError(std::string("no GPU: ") +
                       (e != cudaSuccess ? std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(e)
                                         : std::string("no CUDA device is visible")) +
                       (v != nullptr ? std::string(" (CUDA_VISIBLE_DEVICES=") + v + ")" : std::string()) +
                       ". Check nvidia-smi; unset CUDA_VISIBLE_DEVICES or name a GPU there");
    }
    m_sums.resize(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) m_gpus.push_back(describe(i));
    if (!bench::Nvml::instance().available()) {
      m_notes.push_back("NVML is not available (" + bench::Nvml::instance().error() +
                        "): no utilization, power, temperature, memory or processes");
    }
    if (options.counters) start_sampler(options);
  }

  ~GpuSource() override {
    m_sampler.stop();
    std::error_code ec;
    if (!m_dir.empty()) std::filesystem::remove_all(m_dir, ec);
  }

  [[nodiscard]] const std::vector<core::MonitorGpu>& gpus() const override { return m_gpus; }
  [[nodiscard]] const std::vector<std::string>& notes() const override { return m_notes; }

  [[nodiscard]] std::optional<core::MonitorFrame> frame(double time_s) override {
    core::MonitorFrame f;
    f.time_s = time_s;
    std::vector<Sums> sums;
    {
      std::lock_guard lock(m_mutex);
      sums.swap(m_sums);
      m_sums.resize(sums.size());
    }
    const bench::Nvml& nvml = bench::Nvml::instance();
    for (std::size_t i = 0; i < m_gpus.size(); ++i) {
      const int dev = m_gpus[i].device;
      core::MonitorSample s;
      s.device = dev;
      const Sums& x = sums[i];
      auto mean = [&](Metric m) { return x.ns[m] > 0 ? x.value[m] / x.ns[m] : core::kMonitorUnknown; };
      auto per_s = [&](Metric m) { return x.ns[m] > 0 ? x.value[m] / (x.ns[m] * 1e-9) : core::kMonitorUnknown; };
      s.counters = x.ns[kSm] > 0;
      s.sm_active_pct = mean(kSm);
      s.warps_active_pct = mean(kWarps);
      s.tensor_active_pct = mean(kTensor);
      s.dram_read_bytes_per_s = per_s(kRead);
      s.dram_write_bytes_per_s = per_s(kWrite);
      s.dram_bytes_per_s = s.dram_read_bytes_per_s + s.dram_write_bytes_per_s;
      s.pcie_rx_bytes_per_s = per_s(kPcieRx);
      s.pcie_tx_bytes_per_s = per_s(kPcieTx);
      s.nvlink_rx_bytes_per_s = per_s(kNvlRx);
      s.nvlink_tx_bytes_per_s = per_s(kNvlTx);
      s.sm_clock_hz = mean(kClock);
      if (!std::isfinite(s.sm_clock_hz)) s.sm_clock_hz = nvml.sm_clock_mhz(dev) * 1e6;
      if (const auto u = nvml.gpu_utilization_pct(dev)) s.nvml_util_pct = *u;
      s.power_w = nvml.power_w(dev);
      s.temperature_c = nvml.temperature_c(dev);
      if (const auto m = nvml.memory_used_total(dev)) {
        s.memory_used_bytes = m->first;
        s.memory_total_bytes = m->second;
      }
      f.samples.push_back(s);
      for (const bench::Nvml::Process& p : nvml.compute_processes(dev)) {
        f.processes.push_back(core::MonitorProcess{dev, p.pid, user_of(p.pid), command_of(p.pid), p.gpu_memory_bytes});
      }
    }
    return f;
  }

 private:
  static core::MonitorGpu describe(int device) {
    core::MonitorGpu g;
    g.device = device;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
      g.name = prop.name;
      std::uint8_t uuid[16];
      std::memcpy(uuid, prop.uuid.bytes, sizeof uuid);
      g.uuid = store::detail::uuid_text(uuid);
    }
    std::vector<std::string> warnings;
    if (const auto cached = store::find_profile_for_device(g.uuid, &warnings)) {
      if (const core::Ceiling* c = cached->profile.find("dram_copy"); c != nullptr && std::isfinite(c->measured)) {
        g.dram_ceiling_bytes_per_s = c->measured;
        g.dram_ceiling_source = "measured";
        return g;
      }
    }
    // Theoretical: bus width × memory clock × 2 (double data rate).
    int bus_bits = 0, mem_khz = 0;
    if (cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) == cudaSuccess &&
        cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess && bus_bits > 0 &&
        mem_khz > 0) {
      g.dram_ceiling_bytes_per_s = bus_bits / 8.0 * mem_khz * 1e3 * 2;
      g.dram_ceiling_source = "theoretical";
    }
    return g;
  }

  void start_sampler(const GpuSourceOptions& options) {
    char dir[] = "/tmp/gpuscope-monitor-XXXXXX";
    if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && *tmp != '\0') {
      m_dir = std::string(tmp) + "/gpuscope-monitor-XXXXXX";
    } else {
      m_dir = dir;
    }
    if (::mkdtemp(m_dir.data()) == nullptr) {
      m_notes.push_back("cannot create a folder for the counters' log in " + m_dir +
                        ": showing NVML readings only; set TMPDIR to a writable folder");
      m_dir.clear();
      return;
    }
    collect::PmSamplerOptions o;
    o.interval_ns = static_cast<std::uint64_t>(1e9 / options.sample_rate_hz);
    o.decode_period_ms = 50;
    for (std::string_view m : kMetrics) o.metrics.emplace_back(m);
    o.on_sample = [this](const collect::PmSample& s) { add(s); };
    std::vector<std::string> messages;
    const std::size_t started = m_sampler.start(m_dir + "/samples.gslog", o, &messages);
    for (const std::string& m : messages) {
      // Metrics a chip lacks (NVLink on a PCIe card) are normal: not worth a line.
      if (m.find("left out") == std::string::npos) m_notes.push_back(m);
    }
    if (started < m_gpus.size()) {
      m_notes.push_back(started == 0 ? "no GPU's counters can be read: showing NVML readings only (NVML's "
                                       "utilization is the share of time any kernel ran, not how much of the GPU "
                                       "it used)"
                                     : "some GPUs' counters cannot be read: those show NVML readings only");
    }
  }

  // Evaluator thread of the sampler.
  void add(const collect::PmSample& s) {
    if (s.device < 0 || static_cast<std::size_t>(s.device) >= m_gpus.size() || s.end_ns <= s.start_ns) return;
    const double ns = static_cast<double>(s.end_ns - s.start_ns);
    std::lock_guard lock(m_mutex);
    Sums& x = m_sums[static_cast<std::size_t>(s.device)];
    for (std::size_t i = 0; i < s.metrics->size(); ++i) {
      const double v = s.values[i];
      if (!std::isfinite(v)) continue;
      for (std::size_t m = 0; m < kMetrics.size(); ++m) {
        if ((*s.metrics)[i] != kMetrics[m]) continue;
        const bool bytes = m == kRead || m == kWrite || m == kPcieRx || m == kPcieTx || m == kNvlRx || m == kNvlTx;
        x.value[m] += bytes ? v : v * ns;
        x.ns[m] += ns;
      }
    }
  }

  std::vector<core::MonitorGpu> m_gpus;
  std::vector<std::string> m_notes;
  std::mutex m_mutex;
  std::vector<Sums> m_sums;  // by GPU index (m_mutex)
  std::string m_dir;
  collect::PmSampler m_sampler;
};

}  // namespace

std::unique_ptr<MonitorSource> open_gpu_source(const GpuSourceOptions& options) {
  return std::make_unique<GpuSource>(options);
}

}  // namespace gpuscope::cli
