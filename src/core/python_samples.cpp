#include "core/python_samples.hpp"

namespace gpuscope::core {

std::string python_frame_name(const PythonFrame& frame) {
  std::string_view file = frame.file;
  if (const auto slash = file.find_last_of('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
  std::string name(frame.function.empty() ? "?" : frame.function);
  name += " (";
  name += file.empty() ? "?" : file;
  name += ':';
  name += frame.line < 0 ? std::string("?") : std::to_string(frame.line);
  name += ')';
  return name;
}

std::string python_sample_state(const PythonSampleEvent& sample) {
  return std::string(sample.on_cpu ? "on CPU" : "off CPU") + ", " + (sample.holds_gil ? "GIL held" : "no GIL");
}

}  // namespace gpuscope::core
