// The replay source of `gpuscope monitor --replay FILE`: the frames of a `--format json`
// document, one per refresh, in order; the recorded times are kept.
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/monitor_source.hpp"

namespace gpuscope::cli {
namespace {

double number(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : core::kMonitorUnknown;
}

std::string text(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

class ReplaySource final : public MonitorSource {
 public:
  explicit ReplaySource(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open the monitor recording " + path);
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(path + " is not a `gpuscope monitor --format json` document: " + e.what());
    }
    for (const auto& g : doc.value("gpus", nlohmann::json::array())) {
      core::MonitorGpu gpu;
      gpu.device = g.value("device", 0);
      gpu.name = text(g, "name");
      gpu.uuid = text(g, "uuid");
      gpu.dram_ceiling_bytes_per_s = number(g, "dram_ceiling_bytes_per_s");
      gpu.dram_ceiling_source = text(g, "dram_ceiling_source");
      m_gpus.push_back(std::move(gpu));
    }
    for (const auto& n : doc.value("notes", nlohmann::json::array()))
      if (n.is_string()) m_notes.push_back(n.get<std::string>());
    for (const auto& f : doc.value("frames", nlohmann::json::array())) {
      core::MonitorFrame frame;
      frame.time_s = number(f, "time_s");
      for (const auto& s : f.value("gpus", nlohmann::json::array())) {
        core::MonitorSample x;
        x.device = s.value("device", 0);
        x.counters = s.value("counters", false);
        x.sm_active_pct = number(s, "sm_active_pct");
        x.warps_active_pct = number(s, "warps_active_pct");
        x.tensor_active_pct = number(s, "tensor_active_pct");
        x.dram_bytes_per_s = number(s, "dram_bytes_per_s");
        x.dram_read_bytes_per_s = number(s, "dram_read_bytes_per_s");
        x.dram_write_bytes_per_s = number(s, "dram_write_bytes_per_s");
        x.pcie_rx_bytes_per_s = number(s, "pcie_rx_bytes_per_s");
        x.pcie_tx_bytes_per_s = number(s, "pcie_tx_bytes_per_s");
        x.nvlink_rx_bytes_per_s = number(s, "nvlink_rx_bytes_per_s");
        x.nvlink_tx_bytes_per_s = number(s, "nvlink_tx_bytes_per_s");
        x.sm_clock_hz = number(s, "sm_clock_hz");
        x.nvml_util_pct = number(s, "nvml_util_pct");
        x.power_w = number(s, "power_w");
        x.temperature_c = number(s, "temperature_c");
        x.memory_used_bytes = number(s, "memory_used_bytes");
        x.memory_total_bytes = number(s, "memory_total_bytes");
        frame.samples.push_back(x);
      }
      for (const auto& p : f.value("processes", nlohmann::json::array())) {
        core::MonitorProcess proc;
        proc.device = p.value("device", 0);
        proc.pid = p.value("pid", 0u);
        proc.user = text(p, "user");
        proc.command = text(p, "command");
        proc.gpu_memory_bytes = number(p, "gpu_memory_bytes");
        frame.processes.push_back(std::move(proc));
      }
      m_frames.push_back(std::move(frame));
    }
    if (m_frames.empty()) throw std::runtime_error(path + " holds no frames");
  }

  [[nodiscard]] const std::vector<core::MonitorGpu>& gpus() const override { return m_gpus; }
  [[nodiscard]] const std::vector<std::string>& notes() const override { return m_notes; }
  [[nodiscard]] std::optional<core::MonitorFrame> frame(double /*time_s*/) override {
    if (m_next >= m_frames.size()) return std::nullopt;
    return m_frames[m_next++];
  }

 private:
  std::vector<core::MonitorGpu> m_gpus;
  std::vector<std::string> m_notes;
  std::vector<core::MonitorFrame> m_frames;
  std::size_t m_next = 0;
};

}  // namespace

std::unique_ptr<MonitorSource> open_replay_source(const std::string& path) {
  return std::make_unique<ReplaySource>(path);
}

}  // namespace gpuscope::cli
