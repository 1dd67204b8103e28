#include "render/monitor_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/units.hpp"

namespace gpuscope::render {
namespace {

using core::MonitorField;
using core::MonitorFrame;
using core::MonitorGpu;
using core::MonitorModel;
using core::MonitorSample;

// Columns of UTF-8 text (one per code point: the view writes no wide characters itself).
std::size_t columns(const std::string& s) {
  std::size_t n = 0;
  for (const unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

// `s` cut to `width` columns.
std::string fit(const std::string& s, std::size_t width) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (n == width) return s.substr(0, i);
      ++n;
    }
  }
  return s;
}

std::string pad(const std::string& s, std::size_t width) {
  const std::size_t n = columns(s);
  return n >= width ? s : s + std::string(width - n, ' ');
}

std::string rpad(const std::string& s, std::size_t width) {
  const std::size_t n = columns(s);
  return n >= width ? s : std::string(width - n, ' ') + s;
}

std::string pct(double v) { return std::isfinite(v) ? units::percent(v) : "-"; }
std::string rate(double v) { return std::isfinite(v) ? units::byte_rate(v) : "-"; }

std::string mhz(double hz) {
  if (!std::isfinite(hz)) return "- MHz";
  char b[32];
  std::snprintf(b, sizeof b, "%.0f MHz", hz / 1e6);
  return b;
}

std::string watts(double w) {
  if (!std::isfinite(w)) return "- W";
  char b[32];
  std::snprintf(b, sizeof b, "%.0f W", w);
  return b;
}

std::string celsius(double c) {
  if (!std::isfinite(c)) return "- °C";
  char b[32];
  std::snprintf(b, sizeof b, "%.0f °C", c);
  return b;
}

std::string memory(const MonitorSample& s) {
  if (!std::isfinite(s.memory_used_bytes) || !std::isfinite(s.memory_total_bytes)) return "mem -";
  return "mem " + units::memory_size(s.memory_used_bytes) + " / " + units::memory_size(s.memory_total_bytes);
}

// DRAM bytes/s as a share of the GPU's ceiling: "37 % of measured 3.0 TB/s".
std::string dram_share(const MonitorGpu& g, double bytes_per_s) {
  if (!std::isfinite(g.dram_ceiling_bytes_per_s) || !std::isfinite(bytes_per_s)) return "";
  return units::percent_of(bytes_per_s / g.dram_ceiling_bytes_per_s) + " of " + g.dram_ceiling_source + " " +
         units::byte_rate(g.dram_ceiling_bytes_per_s);
}

// "  label       value  note   ▁▂▃": notes in one column, the sparklines (the model's whole
// window) in the next, as wide as the row leaves, at most 60 columns.
std::string metric_row(const std::string& label, const std::string& value, const std::vector<double>& history,
                       double max, const std::string& note, std::size_t width) {
  constexpr std::size_t kNote = 33;
  constexpr std::size_t kHead = 2 + 15 + 11 + 2 + kNote + 2;
  std::string row = "  " + pad(label, 15) + rpad(value, 11) + "  " + pad(note, kNote) + "  ";
  const std::size_t spark = width > kHead ? std::min<std::size_t>(width - kHead, 60) : 0;
  if (spark >= 8) row += core::sparkline(history, spark, max);
  return fit(row, width);
}

void gpu_block(const MonitorModel& model, std::size_t i, std::size_t width, std::vector<std::string>& out) {
  const MonitorGpu& g = model.gpus()[i];
  const MonitorFrame* f = model.latest();
  const MonitorSample s = f != nullptr && i < f->samples.size() ? f->samples[i] : MonitorSample{};
  out.push_back(fit("GPU " + std::to_string(g.device) + "  " + g.name + "   " + mhz(s.sm_clock_hz) + "  " +
                        watts(s.power_w) + "  " + celsius(s.temperature_c) + "  " + memory(s),
                    width));
  if (s.counters) {
    out.push_back(metric_row("SM active", pct(s.sm_active_pct), model.history(i, MonitorField::kSmActive), 100,
                             "share of SMs with work", width));
  }
  out.push_back(metric_row("NVML util", pct(s.nvml_util_pct), model.history(i, MonitorField::kNvmlUtil), 100,
                           "time any kernel ran (nvidia-smi)", width));
  if (!s.counters) return;
  out.push_back(metric_row("warps active", pct(s.warps_active_pct), model.history(i, MonitorField::kWarpsActive), 100,
                           "achieved occupancy", width));
  out.push_back(metric_row("tensor active", pct(s.tensor_active_pct), model.history(i, MonitorField::kTensorActive),
                           100, "tensor-core pipe busy", width));
  out.push_back(metric_row("DRAM", rate(s.dram_bytes_per_s), model.history(i, MonitorField::kDram),
                           g.dram_ceiling_bytes_per_s, dram_share(g, s.dram_bytes_per_s), width));
  out.push_back(fit("  " + pad("PCIe", 15) + "rx " + rate(s.pcie_rx_bytes_per_s) + "  tx " +
                        rate(s.pcie_tx_bytes_per_s) + "    NVLink  rx " + rate(s.nvlink_rx_bytes_per_s) + "  tx " +
                        rate(s.nvlink_tx_bytes_per_s),
                    width));
}

// `text` word-wrapped into lines of at most `width` columns, the first after "! ", the rest
// indented to match (a note must be read whole: it says what to do).
void wrap_note(const std::string& text, std::size_t width, std::vector<std::string>& out) {
  const std::size_t room = width > 4 ? width - 2 : 2;
  std::string line;
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (!line.empty() && columns(line) + 1 + columns(w) > room) {
      out.push_back(fit("  " + line, width));
      line.clear();
    }
    line += (line.empty() ? "" : " ") + w;
  }
  if (!line.empty()) out.push_back(fit("  " + line, width));
}

void json_number(std::ostream& out, double v) {
  if (!std::isfinite(v)) {
    out << "null";
    return;
  }
  char b[64];
  std::snprintf(b, sizeof b, "%.10g", v);
  out << b;
}

void json_string(std::ostream& out, const std::string& s) {
  out << '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out << '\\' << c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      out << b;
    } else {
      out << c;
    }
  }
  out << '"';
}

// `, "key": value` (a number, null when unknown; or a string).
void field(std::ostream& out, const char* key, double v) {
  out << ", \"" << key << "\": ";
  json_number(out, v);
}
void field(std::ostream& out, const char* key, const std::string& v) {
  out << ", \"" << key << "\": ";
  json_string(out, v);
}

}  // namespace

std::vector<std::string> monitor_screen(const MonitorModel& model, const MonitorViewState& state, int width,
                                        int height) {
  const auto w = static_cast<std::size_t>(std::max(width, 20));
  std::vector<std::string> out;
  char every[64];
  std::snprintf(every, sizeof every, "every %.2g s", state.interval_s);
  out.push_back(fit(std::string("gpuscope monitor  ") + every + (state.paused ? "  PAUSED" : "") +
                        "   q quit  p pause  +/- rate  g GPU",
                    w));
  for (const std::string& n : state.notes) {
    std::vector<std::string> lines;
    wrap_note(n, w, lines);
    if (!lines.empty()) lines.front().replace(0, 2, "! ");
    out.insert(out.end(), lines.begin(), lines.end());
  }
  if (model.gpus().empty()) out.push_back("no GPU");
  for (std::size_t i = 0; i < model.gpus().size(); ++i) {
    if (state.selected_gpu >= 0 && static_cast<std::size_t>(state.selected_gpu) != i) continue;
    out.push_back("");
    gpu_block(model, i, w, out);
  }
  out.push_back("");
  out.push_back(fit(rpad("PID", 8) + "  " + pad("USER", 10) + "  GPU  " + rpad("GPU MEM", 10) + "  COMMAND", w));
  const MonitorFrame* f = model.latest();
  std::size_t shown = 0;
  if (f != nullptr) {
    for (const core::MonitorProcess& p : f->processes) {
      if (state.selected_gpu >= 0 && static_cast<std::size_t>(state.selected_gpu) < model.gpus().size() &&
          model.gpus()[static_cast<std::size_t>(state.selected_gpu)].device != p.device)
        continue;
      out.push_back(fit(rpad(std::to_string(p.pid), 8) + "  " + pad(p.user.empty() ? "?" : p.user, 10) + "  " +
                            rpad(std::to_string(p.device), 3) + "  " +
                            rpad(std::isfinite(p.gpu_memory_bytes) ? units::memory_size(p.gpu_memory_bytes) : "-", 10) +
                            "  " + p.command,
                        w));
      ++shown;
    }
  }
  if (shown == 0) out.push_back("  (no process NVML can see holds GPU memory)");
  if (height > 0 && out.size() > static_cast<std::size_t>(height)) out.resize(static_cast<std::size_t>(height));
  return out;
}

std::vector<std::string> monitor_lines(const MonitorModel& model, const MonitorFrame& frame) {
  std::vector<std::string> out;
  char t[32];
  std::snprintf(t, sizeof t, "t=%.1f s", frame.time_s);
  for (std::size_t i = 0; i < frame.samples.size(); ++i) {
    const MonitorSample& s = frame.samples[i];
    std::string line = std::string(t) + " gpu" + std::to_string(s.device);
    if (s.counters) {
      line += " SM active " + pct(s.sm_active_pct) + " (NVML util " + pct(s.nvml_util_pct) + ")";
      line += " warps " + pct(s.warps_active_pct) + " tensor " + pct(s.tensor_active_pct);
      line += " DRAM " + rate(s.dram_bytes_per_s);
      if (i < model.gpus().size()) {
        const std::string share = dram_share(model.gpus()[i], s.dram_bytes_per_s);
        if (!share.empty()) line += " (" + share + ")";
      }
      line += " PCIe rx " + rate(s.pcie_rx_bytes_per_s) + " tx " + rate(s.pcie_tx_bytes_per_s);
      line += " NVLink rx " + rate(s.nvlink_rx_bytes_per_s) + " tx " + rate(s.nvlink_tx_bytes_per_s);
    } else {
      line += " NVML util " + pct(s.nvml_util_pct) + " (no counters)";
    }
    line += " " + mhz(s.sm_clock_hz) + " " + watts(s.power_w) + " " + celsius(s.temperature_c) + " " + memory(s);
    out.push_back(std::move(line));
  }
  return out;
}

void write_monitor_json(std::ostream& out, const MonitorModel& model, const std::vector<MonitorFrame>& frames,
                        const std::vector<std::string>& notes) {
  out << "{\"gpus\": [";
  for (std::size_t i = 0; i < model.gpus().size(); ++i) {
    const MonitorGpu& g = model.gpus()[i];
    out << (i ? ", " : "") << "{\"device\": " << g.device;
    field(out, "name", g.name);
    field(out, "uuid", g.uuid);
    field(out, "dram_ceiling_bytes_per_s", g.dram_ceiling_bytes_per_s);
    field(out, "dram_ceiling_source", g.dram_ceiling_source);
    out << "}";
  }
  out << "],\n \"notes\": [";
  for (std::size_t i = 0; i < notes.size(); ++i) {
    out << (i ? ", " : "");
    json_string(out, notes[i]);
  }
  out << "],\n \"frames\": [";
  for (std::size_t k = 0; k < frames.size(); ++k) {
    const MonitorFrame& f = frames[k];
    out << (k ? ",\n  " : "\n  ") << "{\"time_s\": ";
    json_number(out, f.time_s);
    out << ", \"gpus\": [";
    for (std::size_t i = 0; i < f.samples.size(); ++i) {
      const MonitorSample& s = f.samples[i];
      out << (i ? ", " : "") << "{\"device\": " << s.device << ", \"counters\": " << (s.counters ? "true" : "false");
      const std::pair<const char*, double> fields[] = {{"sm_active_pct", s.sm_active_pct},
                                                       {"warps_active_pct", s.warps_active_pct},
                                                       {"tensor_active_pct", s.tensor_active_pct},
                                                       {"dram_bytes_per_s", s.dram_bytes_per_s},
                                                       {"dram_read_bytes_per_s", s.dram_read_bytes_per_s},
                                                       {"dram_write_bytes_per_s", s.dram_write_bytes_per_s},
                                                       {"pcie_rx_bytes_per_s", s.pcie_rx_bytes_per_s},
                                                       {"pcie_tx_bytes_per_s", s.pcie_tx_bytes_per_s},
                                                       {"nvlink_rx_bytes_per_s", s.nvlink_rx_bytes_per_s},
                                                       {"nvlink_tx_bytes_per_s", s.nvlink_tx_bytes_per_s},
                                                       {"sm_clock_hz", s.sm_clock_hz},
                                                       {"nvml_util_pct", s.nvml_util_pct},
                                                       {"power_w", s.power_w},
                                                       {"temperature_c", s.temperature_c},
                                                       {"memory_used_bytes", s.memory_used_bytes},
                                                       {"memory_total_bytes", s.memory_total_bytes}};
      for (const auto& [name, v] : fields) field(out, name, v);
      out << "}";
    }
    out << "], \"processes\": [";
    for (std::size_t i = 0; i < f.processes.size(); ++i) {
      const core::MonitorProcess& p = f.processes[i];
      out << (i ? ", " : "") << "{\"device\": " << p.device << ", \"pid\": " << p.pid;
      field(out, "user", p.user);
      field(out, "command", p.command);
      field(out, "gpu_memory_bytes", p.gpu_memory_bytes);
      out << "}";
    }
    out << "]}";
  }
  out << "\n ]}\n";
}

}  // namespace gpuscope::render
