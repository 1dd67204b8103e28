#include "core/monitor_model.hpp"

#include <algorithm>

namespace gpuscope::core {

double monitor_field(const MonitorSample& s, MonitorField field) {
  switch (field) {
    case MonitorField::kSmActive:
      return s.sm_active_pct;
    case MonitorField::kWarpsActive:
      return s.warps_active_pct;
    case MonitorField::kTensorActive:
      return s.tensor_active_pct;
    case MonitorField::kDram:
      return s.dram_bytes_per_s;
    case MonitorField::kNvmlUtil:
      return s.nvml_util_pct;
    case MonitorField::kPower:
      return s.power_w;
  }
  return kMonitorUnknown;
}

void MonitorModel::push(MonitorFrame frame) {
  const double newest = frame.time_s;
  m_frames.push_back(std::move(frame));
  while (!m_frames.empty() && m_frames.front().time_s < newest - m_window_s) m_frames.pop_front();
}

std::vector<double> MonitorModel::history(std::size_t gpu_index, MonitorField field) const {
  std::vector<double> out;
  out.reserve(m_frames.size());
  for (const MonitorFrame& f : m_frames) {
    out.push_back(gpu_index < f.samples.size() ? monitor_field(f.samples[gpu_index], field) : kMonitorUnknown);
  }
  return out;
}

std::string sparkline(const std::vector<double>& values, std::size_t width, double max) {
  static constexpr const char* kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  // More values than columns: each column the mean of its share of the values (unknown ones
  // left out; a column with none is unknown).
  std::vector<double> cols;
  if (values.size() <= width) {
    cols = values;
  } else {
    for (std::size_t c = 0; c < width; ++c) {
      const std::size_t from = c * values.size() / width, to = (c + 1) * values.size() / width;
      double sum = 0;
      std::size_t n = 0;
      for (std::size_t i = from; i < to; ++i)
        if (std::isfinite(values[i])) sum += values[i], ++n;
      cols.push_back(n > 0 ? sum / static_cast<double>(n) : kMonitorUnknown);
    }
  }
  if (!(max > 0)) {
    max = 0;
    for (const double v : cols)
      if (std::isfinite(v)) max = std::max(max, v);
  }
  std::string out(width - cols.size(), ' ');
  for (const double v : cols) {
    if (!std::isfinite(v)) {
      out += ' ';
      continue;
    }
    const double f = max > 0 ? std::clamp(v / max, 0.0, 1.0) : 0.0;
    out += kBlocks[std::min<std::size_t>(7, static_cast<std::size_t>(f * 7.999))];
  }
  return out;
}

}  // namespace gpuscope::core
