// nvml: the few NVML queries gpuscope needs, through dlopen("libnvidia-ml.so.1") so
// gpuscope builds and runs where NVML is missing (there is no nvml.h on the CPU machine;
// the prototypes below follow NVML's documented C API, nvml.h of the CUDA toolkit).
//
// Devices are named by CUDA ordinal and matched to NVML handles by PCI bus id
// (cudaDeviceGetPCIBusId → nvmlDeviceGetHandleByPciBusId_v2), so CUDA_VISIBLE_DEVICES
// is honoured. Every query returns NaN / nullopt / "" when NVML or the value is not
// available; nothing throws. Thread-safe after the first call to instance().
// Clocks are only read, never set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuscope::bench {

class Nvml {
 public:
  /// The process-wide instance; loads and initializes NVML on first use.
  static Nvml& instance();

  /// NVML loaded and nvmlInit_v2 succeeded.
  [[nodiscard]] bool available() const { return m_available; }
  /// Why NVML is not available ("libnvidia-ml.so.1: cannot open shared object file"), or "".
  [[nodiscard]] const std::string& error() const { return m_error; }

  /// Current SM / memory clock in MHz (nvmlDeviceGetClockInfo, NVML_CLOCK_SM / _MEM).
  [[nodiscard]] double sm_clock_mhz(int cuda_device) const;
  [[nodiscard]] double mem_clock_mhz(int cuda_device) const;
  /// Maximum SM clock in MHz (nvmlDeviceGetMaxClockInfo, NVML_CLOCK_SM).
  [[nodiscard]] double max_sm_clock_mhz(int cuda_device) const;
  /// nvmlDeviceGetCurrentClocksEventReasons bit mask (0 = not throttled).
  [[nodiscard]] std::optional<std::uint64_t> clock_event_reasons(int cuda_device) const;
  /// Plain-language names of the bits set in `reasons` ("power cap, thermal slowdown"),
  /// ignoring the GPU-idle bit; "" when none.
  [[nodiscard]] static std::string describe_clock_event_reasons(std::uint64_t reasons);
  /// Processes with a compute context on the device (nvmlDeviceGetComputeRunningProcesses),
  /// this process included; nullopt when NVML reports none (it cannot see processes, e.g.
  /// inside a container's PID namespace). A clock that reads 0 MHz is reported as NaN.
  [[nodiscard]] std::optional<int> compute_process_count(int cuda_device) const;
  /// Current GPU utilization in % (nvmlDeviceGetUtilizationRates), over NVML's sample period.
  [[nodiscard]] std::optional<int> gpu_utilization_pct(int cuda_device) const;
  /// Board power draw in W (nvmlDeviceGetPowerUsage, mW), NaN if unknown.
  [[nodiscard]] double power_w(int cuda_device) const;
  /// GPU die temperature in °C (nvmlDeviceGetTemperature, NVML_TEMPERATURE_GPU), NaN if unknown.
  [[nodiscard]] double temperature_c(int cuda_device) const;
  /// Device memory used and total in bytes (nvmlDeviceGetMemoryInfo); nullopt if unknown.
  [[nodiscard]] std::optional<std::pair<double, double>> memory_used_total(int cuda_device) const;
  struct Process {
    std::uint32_t pid = 0;
    double gpu_memory_bytes = 0;  // NaN when NVML does not say (NVML_VALUE_NOT_AVAILABLE)
  };
  /// Processes with a compute context on the device and their memory
  /// (nvmlDeviceGetComputeRunningProcesses_v3); empty when none or unknown.
  [[nodiscard]] std::vector<Process> compute_processes(int cuda_device) const;
  /// "580.159.04" (nvmlSystemGetDriverVersion), "" if unknown.
  [[nodiscard]] std::string driver_version() const;

  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

 private:
  Nvml();
  void* device_handle(int cuda_device) const;
  bool m_available = false;
  std::string m_error;
};

}  // namespace gpuscope::bench
