#include "core/timeline_labels.hpp"

#include <map>
#include <optional>

namespace gpuscope::core {

std::string process_label(const TimelineHeader& header, std::int64_t pid) {
  std::string label = "process";
  std::optional<std::int64_t> rank;
  for (const TimelineProcess& p : header.processes) {
    if (p.pid != pid) continue;
    if (!p.name.empty()) label = p.name;
    rank = p.rank;
    break;
  }
  label += " (pid " + std::to_string(pid);
  if (rank) label += ", rank " + std::to_string(*rank);
  return label + ")";
}

std::string thread_label(const TimelineHeader& header, std::int64_t pid, std::int64_t tid) {
  for (const TimelineThread& t : header.threads)
    if (t.pid == pid && t.tid == tid && !t.name.empty()) return t.name + " (" + std::to_string(tid) + ")";
  return "thread " + std::to_string(tid);
}

std::string stream_label(std::int64_t stream_id, std::int64_t pid, bool gpu_shared) {
  std::string name = "stream " + std::to_string(stream_id);
  if (gpu_shared) name += " (pid " + std::to_string(pid) + ")";
  return name;
}

std::string memory_kind_name(std::string_view kind) {
  static const std::map<std::string_view, std::string_view> kNames = {{"pageable", "Pageable"},
                                                                      {"pinned", "Pinned"},
                                                                      {"device", "Device"},
                                                                      {"array", "Array"},
                                                                      {"managed", "Managed"},
                                                                      {"device_static", "Device Static"},
                                                                      {"managed_static", "Managed Static"}};
  const auto it = kNames.find(kind);
  return std::string(it == kNames.end() ? "Unknown" : it->second);
}

std::string memcpy_name(const MemcpyEvent& e) {
  return "Memcpy " + e.copy_kind + " (" + memory_kind_name(e.src_kind) + " -> " + memory_kind_name(e.dst_kind) + ")";
}

std::string memset_name(const MemsetEvent& e) { return "Memset (" + memory_kind_name(e.memory_kind) + ")"; }

}  // namespace gpuscope::core
