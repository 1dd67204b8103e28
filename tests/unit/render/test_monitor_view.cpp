// gpuscope monitor's model and view (core/monitor_model.hpp, render/monitor_view.hpp), no GPU.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/monitor_model.hpp"
#include "render/monitor_view.hpp"

namespace gpuscope {
namespace {

std::size_t columns(const std::string& s) {
  std::size_t n = 0;
  for (const unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

core::MonitorFrame frame(double t, double sm, double nvml, bool counters = true) {
  core::MonitorFrame f;
  f.time_s = t;
  core::MonitorSample s;
  s.device = 0;
  s.counters = counters;
  if (counters) {
    s.sm_active_pct = sm;
    s.warps_active_pct = sm / 4;
    s.tensor_active_pct = sm / 2;
    s.dram_read_bytes_per_s = 1e12;
    s.dram_write_bytes_per_s = 5e11;
    s.dram_bytes_per_s = 1.5e12;
  }
  s.nvml_util_pct = nvml;
  s.sm_clock_hz = 1.98e9;
  s.power_w = 600;
  s.temperature_c = 60;
  s.memory_used_bytes = 40.0 * (1ull << 30);
  s.memory_total_bytes = 80.0 * (1ull << 30);
  f.samples.push_back(s);
  f.processes.push_back({0, 4242, "alice", "python3 train.py", 39.0 * (1ull << 30)});
  return f;
}

core::MonitorModel model_with(int frames, bool counters = true) {
  core::MonitorModel m({{0, "NVIDIA H100 80GB HBM3", "GPU-1", 3.0e12, "measured"}});
  for (int i = 0; i < frames; ++i) m.push(frame(0.5 * (i + 1), i * 1.0, 100, counters));
  return m;
}

TEST(MonitorModel, KeepsTheLastWindow) {
  core::MonitorModel m = model_with(200);  // 100 s of frames
  EXPECT_LE(m.frames().size(), 121u);
  EXPECT_GE(m.frames().front().time_s, 100.0 - 60.0);
  EXPECT_EQ(m.history(0, core::MonitorField::kSmActive).back(), 199.0);
  EXPECT_TRUE(std::isnan(m.history(1, core::MonitorField::kSmActive).back()));  // no such GPU
}

TEST(MonitorModel, Sparkline) {
  EXPECT_EQ(core::sparkline({0, 50, 100}, 3, 100), "▁▄█");
  EXPECT_EQ(core::sparkline({100}, 3, 100), "  █");                        // right-aligned
  EXPECT_EQ(core::sparkline({0, 1, 2, 3}, 2, 0), "▂█");                    // means of halves (0.5, 2.5), own scale
  EXPECT_EQ(core::sparkline({core::kMonitorUnknown, 100}, 2, 100), " █");  // unknown: a space
}

TEST(MonitorView, ScreenFitsEightyAndTwoHundredColumns) {
  const core::MonitorModel m = model_with(30);
  render::MonitorViewState st;
  for (const int width : {80, 200}) {
    const std::vector<std::string> lines = render::monitor_screen(m, st, width, 50);
    std::string all;
    for (const std::string& l : lines) {
      EXPECT_LE(columns(l), static_cast<std::size_t>(width)) << l;
      all += l + "\n";
    }
    EXPECT_NE(all.find("SM active"), std::string::npos) << all;
    EXPECT_NE(all.find("NVML util"), std::string::npos);
    EXPECT_NE(all.find("tensor active"), std::string::npos);
    EXPECT_NE(all.find("of measured 3 TB/s"), std::string::npos) << all;
    EXPECT_NE(all.find("python3 train.py"), std::string::npos);
    EXPECT_NE(all.find("▄"), std::string::npos);  // sparklines (DRAM at half the ceiling)
  }
  // The note beside NVML's figure says what it counts.
  std::string wide;
  for (const std::string& l : render::monitor_screen(m, st, 200, 50)) wide += l + "\n";
  EXPECT_NE(wide.find("time any kernel ran (nvidia-smi)"), std::string::npos);
}

TEST(MonitorView, WithoutCountersOnlyNvmlRows) {
  const core::MonitorModel m = model_with(5, false);
  render::MonitorViewState st;
  st.notes = {"another tool holds the GPU's counters"};
  std::string all;
  for (const std::string& l : render::monitor_screen(m, st, 120, 50)) all += l + "\n";
  EXPECT_EQ(all.find("SM active"), std::string::npos) << all;
  EXPECT_EQ(all.find("tensor active"), std::string::npos);
  EXPECT_NE(all.find("NVML util"), std::string::npos);
  EXPECT_NE(all.find("! another tool holds"), std::string::npos);
  const auto lines = render::monitor_lines(m, *m.latest());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("NVML util 100 % (no counters)"), std::string::npos) << lines[0];
}

TEST(MonitorView, PausedAndPickedGpu) {
  core::MonitorModel m({{0, "A", "", core::kMonitorUnknown, ""}, {1, "B", "", core::kMonitorUnknown, ""}});
  core::MonitorFrame f = frame(0.5, 10, 100);
  core::MonitorSample s1 = f.samples[0];
  s1.device = 1;
  f.samples.push_back(s1);
  m.push(f);
  render::MonitorViewState st;
  st.paused = true;
  st.selected_gpu = 1;
  std::string all;
  for (const std::string& l : render::monitor_screen(m, st, 100, 50)) all += l + "\n";
  EXPECT_NE(all.find("PAUSED"), std::string::npos);
  EXPECT_NE(all.find("GPU 1  B"), std::string::npos);
  EXPECT_EQ(all.find("GPU 0  A"), std::string::npos);
  EXPECT_EQ(all.find("python3"), std::string::npos);      // its process is on GPU 0
  EXPECT_EQ(all.find("of measured"), std::string::npos);  // no ceiling known: no share
}

TEST(MonitorView, LineAndJson) {
  const core::MonitorModel m = model_with(3);
  const auto lines = render::monitor_lines(m, *m.latest());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("t=1.5 s gpu0 SM active 2.0 % (NVML util 100 %) warps 0.5 % tensor 1.0 % DRAM 1.5 TB/s "
                           "(50 % of measured 3 TB/s)",
                           0),
            0u)
      << lines[0];
  std::ostringstream out;
  const std::vector<core::MonitorFrame> frames(m.frames().begin(), m.frames().end());
  render::write_monitor_json(out, m, frames, {"a \"note\""});
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["frames"].size(), 3u);
  EXPECT_EQ(doc["notes"][0], "a \"note\"");
  EXPECT_EQ(doc["frames"][2]["gpus"][0]["sm_active_pct"], 2.0);
  EXPECT_EQ(doc["frames"][2]["gpus"][0]["pcie_rx_bytes_per_s"], nullptr);  // unknown
  EXPECT_EQ(doc["frames"][2]["processes"][0]["pid"], 4242);
  EXPECT_EQ(doc["gpus"][0]["dram_ceiling_source"], "measured");
}

}  // namespace
}  // namespace gpuscope
