#include "bench/nvml.hpp"

#include <dlfcn.h>

#include <cmath>
#include <cuda_runtime_api.h>
#include <limits>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace gpuscope::bench {
namespace {

// The subset of nvml.h gpuscope calls (NVML API reference, "Device Queries"); the
// CPU machine has no nvml.h, so the prototypes are declared here.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlErrorInsufficientSize = 7;
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlClockMem = 2;
struct NvmlUtilization {
  unsigned int gpu;
  unsigned int memory;
};

struct NvmlApi {
  nvmlReturn_t (*init)() = nullptr;                                        // nvmlInit_v2
  nvmlReturn_t (*handle_by_pci)(const char*, nvmlDevice_t*) = nullptr;     // ..._v2
  nvmlReturn_t (*clock_info)(nvmlDevice_t, int, unsigned int*) = nullptr;  // nvmlDeviceGetClockInfo
  nvmlReturn_t (*max_clock_info)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*clock_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*compute_procs)(nvmlDevice_t, unsigned int*, void*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, NvmlUtilization*) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned int) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned int*) = nullptr;             // nvmlDeviceGetPowerUsage
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int*) = nullptr;  // nvmlDeviceGetTemperature
  nvmlReturn_t (*memory_info)(nvmlDevice_t, void*) = nullptr;               // nvmlDeviceGetMemoryInfo
};
// nvmlMemory_t and nvmlProcessInfo_t (the _v3 call's element) of nvml.h.
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct NvmlProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
constexpr unsigned long long kNvmlValueNotAvailable = ~0ull;

NvmlApi g_api;
std::mutex g_handles_mutex;
std::unordered_map<int, nvmlDevice_t> g_handles;

template <class F>
bool load(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

// A clock of 0 MHz is not a reading: some container NVMLs answer success with no data.
double mhz_or_nan(nvmlReturn_t status, unsigned int mhz) {
  return status == kNvmlSuccess && mhz > 0 ? static_cast<double>(mhz) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

Nvml& Nvml::instance() {
  static Nvml nvml;
  return nvml;
}

Nvml::Nvml() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    m_error = why ? why : "libnvidia-ml.so.1 not found";
    return;
  }
  bool ok = load(lib, "nvmlInit_v2", g_api.init) &&
            load(lib, "nvmlDeviceGetHandleByPciBusId_v2", g_api.handle_by_pci) &&
            load(lib, "nvmlDeviceGetClockInfo", g_api.clock_info) &&
            load(lib, "nvmlDeviceGetMaxClockInfo", g_api.max_clock_info);
  if (!ok) {
    m_error = "libnvidia-ml.so.1 lacks nvmlInit_v2 / nvmlDeviceGetClockInfo";
    return;
  }
  // Optional entry points: older drivers name the reasons call "Throttle".
  if (!load(lib, "nvmlDeviceGetCurrentClocksEventReasons", g_api.clock_reasons))
    load(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", g_api.clock_reasons);
  load(lib, "nvmlDeviceGetComputeRunningProcesses_v3", g_api.compute_procs);
  load(lib, "nvmlDeviceGetUtilizationRates", g_api.utilization);
  load(lib, "nvmlSystemGetDriverVersion", g_api.driver_version);
  load(lib, "nvmlDeviceGetPowerUsage", g_api.power);
  load(lib, "nvmlDeviceGetTemperature", g_api.temperature);
  load(lib, "nvmlDeviceGetMemoryInfo", g_api.memory_info);
  const nvmlReturn_t status = g_api.init();
  if (status != kNvmlSuccess) {
    m_error = "nvmlInit_v2 failed with NVML status " + std::to_string(status);
    return;
  }
  m_available = true;
  // Some container runtimes ship an NVML that answers every call with success and no
  // data (handles and clocks read 0). Such an NVML is worse than none: say so.
  unsigned int count = 0;
  nvmlReturn_t (*get_count)(unsigned int*) = nullptr;
  if (load(lib, "nvmlDeviceGetCount_v2", get_count) && (get_count(&count) != kNvmlSuccess || count == 0)) {
    m_available = false;
    m_error = "NVML reports no devices (nvmlDeviceGetCount_v2 gave 0): its clocks cannot be read here";
  }
}

void* Nvml::device_handle(int cuda_device) const {
  if (!m_available) return nullptr;
  std::lock_guard lock(g_handles_mutex);
  if (auto it = g_handles.find(cuda_device); it != g_handles.end()) return it->second;
  char bus_id[64] = {};
  nvmlDevice_t handle = nullptr;
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, cuda_device) != cudaSuccess ||
      g_api.handle_by_pci(bus_id, &handle) != kNvmlSuccess)
    handle = nullptr;
  g_handles.emplace(cuda_device, handle);
  return handle;
}

double Nvml::sm_clock_mhz(int cuda_device) const {
  unsigned int mhz = 0;
  void* h = device_handle(cuda_device);
  return h ? mhz_or_nan(g_api.clock_info(h, kNvmlClockSm, &mhz), mhz) : std::nan("");
}

double Nvml::mem_clock_mhz(int cuda_device) const {
  unsigned int mhz = 0;
  void* h = device_handle(cuda_device);
  return h ? mhz_or_nan(g_api.clock_info(h, kNvmlClockMem, &mhz), mhz) : std::nan("");
}

double Nvml::max_sm_clock_mhz(int cuda_device) const {
  unsigned int mhz = 0;
  void* h = device_handle(cuda_device);
  return h ? mhz_or_nan(g_api.max_clock_info(h, kNvmlClockSm, &mhz), mhz) : std::nan("");
}

std::optional<std::uint64_t> Nvml::clock_event_reasons(int cuda_device) const {
  void* h = device_handle(cuda_device);
  unsigned long long reasons = 0;
  if (!h || !g_api.clock_reasons || g_api.clock_reasons(h, &reasons) != kNvmlSuccess) return std::nullopt;
  return reasons;
}

std::string Nvml::describe_clock_event_reasons(std::uint64_t reasons) {
  // nvmlClocksEventReason* bits (nvml.h); bit 0x1 (GPU idle) is not a slowdown.
  static constexpr std::pair<std::uint64_t, std::string_view> kBits[] = {
      {0x2, "application clocks setting"}, {0x4, "software power cap"},
      {0x8, "hardware slowdown"},          {0x10, "sync boost"},
      {0x20, "software thermal slowdown"}, {0x40, "hardware thermal slowdown"},
      {0x80, "hardware power brake"},      {0x100, "display clock setting"}};
  std::string text;
  for (const auto& [bit, name] : kBits)
    if (reasons & bit) text += (text.empty() ? "" : ", ") + std::string(name);
  return text;
}

std::optional<int> Nvml::compute_process_count(int cuda_device) const {
  void* h = device_handle(cuda_device);
  if (!h || !g_api.compute_procs) return std::nullopt;
  unsigned int count = 0;  // a zero-sized query returns the count
  const nvmlReturn_t status = g_api.compute_procs(h, &count, nullptr);
  if (status != kNvmlSuccess && status != kNvmlErrorInsufficientSize) return std::nullopt;
  // This process holds a context when it asks, so 0 means NVML cannot see processes here.
  if (count == 0) return std::nullopt;
  return static_cast<int>(count);
}

std::optional<int> Nvml::gpu_utilization_pct(int cuda_device) const {
  void* h = device_handle(cuda_device);
  NvmlUtilization u{};
  if (!h || !g_api.utilization || g_api.utilization(h, &u) != kNvmlSuccess) return std::nullopt;
  return static_cast<int>(u.gpu);
}

double Nvml::power_w(int cuda_device) const {
  void* h = device_handle(cuda_device);
  unsigned int mw = 0;
  if (!h || !g_api.power || g_api.power(h, &mw) != kNvmlSuccess) return std::nan("");
  return mw / 1000.0;
}

double Nvml::temperature_c(int cuda_device) const {
  void* h = device_handle(cuda_device);
  unsigned int c = 0;
  if (!h || !g_api.temperature || g_api.temperature(h, 0 /* NVML_TEMPERATURE_GPU */, &c) != kNvmlSuccess)
    return std::nan("");
  return c;
}

std::optional<std::pair<double, double>> Nvml::memory_used_total(int cuda_device) const {
  void* h = device_handle(cuda_device);
  NvmlMemory m{};
  if (!h || !g_api.memory_info || g_api.memory_info(h, &m) != kNvmlSuccess || m.total == 0) return std::nullopt;
  return std::pair{static_cast<double>(m.used), static_cast<double>(m.total)};
}

std::vector<Nvml::Process> Nvml::compute_processes(int cuda_device) const {
  void* h = device_handle(cuda_device);
  if (!h || !g_api.compute_procs) return {};
  std::vector<NvmlProcessInfo> info(64);
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto count = static_cast<unsigned int>(info.size());
    const nvmlReturn_t status = g_api.compute_procs(h, &count, info.data());
    if (status == kNvmlErrorInsufficientSize) {
      info.resize(count + 16);
      continue;
    }
    if (status != kNvmlSuccess) return {};
    std::vector<Process> out;
    for (unsigned int i = 0; i < count && i < info.size(); ++i) {
      const double bytes = info[i].used_gpu_memory == kNvmlValueNotAvailable
                               ? std::nan("")
                               : static_cast<double>(info[i].used_gpu_memory);
      out.push_back(Process{info[i].pid, bytes});
    }
    return out;
  }
  return {};
}

std::string Nvml::driver_version() const {
  char text[96] = {};
  if (!m_available || !g_api.driver_version || g_api.driver_version(text, sizeof text) != kNvmlSuccess) return "";
  return text;
}

}  // namespace gpuscope::bench
